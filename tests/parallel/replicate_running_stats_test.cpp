// What a training-mode DataParallel forward leaves in the running statistics of the original
// BatchNorm1d/2d/3d and InstanceNorm1d/2d/3d (track_running_stats) layers (docs/parallel.md,
// "DataParallel: what it promises and what it does not"): replica 0's buffers are the original's
// own tensors, so the original gets exactly replica 0's update, the statistics of the first chunk
// of the batch; the other replicas update copies that are dropped. This is PyTorch's
// DataParallel's rule (replicate hands devices[0] the original buffer objects; no SyncBatchNorm).
// InstanceNorm's num_batches_tracked stays 0, as PyTorch's. Each call's replicas start from the
// original's statistics as they are then (fresh copies), so two calls equal the plain module run
// on the first chunk twice. On cpu:0,cpu:1 and on a mirror and a CUDA pair, in float64.
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>
#include <map>

#include "parallel/parallel_test_util.h"
#include "support/devices.h"
#include "support/mirror_backend.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;
using wick::test::f64;
using wick::test::same_values;

namespace {

std::vector<std::vector<Device>> device_groups() {
  std::vector<std::vector<Device>> groups{{cpu(0), cpu(1)}, {cpu(0), Device(test::mirror_device_type(), 0)}};
  groups.push_back({Device(test::mirror_device_type(), 0), Device(test::mirror_device_type(), 1)});
  for (const Device& d : test::test_devices())
    if (d.is_cuda()) groups.push_back({cpu(0), d});
  return groups;
}

struct Norm {
  std::string name;
  std::function<std::shared_ptr<nn::Module>()> make;
  std::vector<int64_t> shape;  // a batch of 5
};

std::vector<Norm> norms() {
  using namespace nn;
  return {
      {"BatchNorm1d", [] { return BatchNorm1d(BatchNorm1dOptions(3).momentum(0.3)).ptr(); }, {5, 3}},
      {"BatchNorm1d, cumulative average (momentum None)",
       [] { return BatchNorm1d(BatchNorm1dOptions(3).momentum(std::nullopt)).ptr(); },
       {5, 3, 4}},
      {"BatchNorm2d", [] { return BatchNorm2d(3).ptr(); }, {5, 3, 2, 2}},
      {"BatchNorm3d", [] { return BatchNorm3d(2).ptr(); }, {5, 2, 2, 2, 2}},
      {"InstanceNorm3d",
       [] { return InstanceNorm3d(InstanceNormOptions(2).affine(true).track_running_stats(true)).ptr(); },
       {5, 2, 2, 1, 3}},
      {"InstanceNorm1d",
       [] { return InstanceNorm1d(InstanceNormOptions(3).affine(true).track_running_stats(true)).ptr(); },
       {5, 3, 4}},
      {"InstanceNorm2d without affine",
       [] { return InstanceNorm2d(InstanceNormOptions(3).track_running_stats(true)).ptr(); },
       {5, 3, 2, 3}},
  };
}

std::map<std::string, Tensor> buffers_of(const nn::Module& m) {
  std::map<std::string, Tensor> out;
  for (const auto& [k, v] : m.named_buffers()) out[k] = v.to(cpu(0)).clone();
  return out;
}

void check_buffers(const nn::Module& m, const std::map<std::string, Tensor>& want, bool exact) {
  const auto got = buffers_of(m);
  REQUIRE(got.size() == want.size());
  for (const auto& [k, v] : want) {
    INFO(k);
    if (exact || v.dtype() == kInt64) {
      CHECK_ALLCLOSE(got.at(k), v, 0.0, 0.0);
    } else {
      CHECK_ALLCLOSE(got.at(k), v, 1e-12, 1e-14);
    }
  }
}

std::vector<Tensor> param_grads(nn::Module& m) {
  std::vector<Tensor> out;
  for (Tensor p : m.parameters()) {
    out.push_back(p.grad().to(cpu(0)));
    p.set_grad(Tensor());
  }
  return out;
}

void check_norm(const Norm& c, const std::vector<Device>& ds) {
  const bool exact = std::all_of(ds.begin(), ds.end(), [](Device d) { return d.is_cpu(); });
  manual_seed(1);
  auto model = c.make();
  model->to(kFloat64);
  {
    NoGradGuard no_grad;  // non-trivial statistics to start from
    model->forward_tensor(randn(c.shape, f64()) * 2.0 + 1.0);
  }
  nn::StateDict saved;
  for (const auto& [k, v] : model->state_dict()) saved.insert(k, v.clone());
  auto restore = [&] { model->load_state_dict(saved); };
  manual_seed(2);
  const Tensor x = randn(c.shape, f64());
  const Tensor w = randn(c.shape, f64());
  const std::vector<Tensor> chunks = x.chunk(static_cast<int64_t>(ds.size()));

  // The plain module chunk by chunk: BatchNorm normalizes each replica's chunk with its own
  // statistics (InstanceNorm is per sample either way).
  const Tensor xr = x.detach().requires_grad_(true);
  std::vector<Tensor> outs;
  for (const Tensor& ch : xr.chunk(static_cast<int64_t>(ds.size()))) outs.push_back(model->forward_tensor(ch));
  const Tensor ref = cat(outs);
  (ref * w).sum().backward();
  const std::vector<Tensor> ref_grads = param_grads(*model);
  // What the original must hold after one and after two DataParallel calls: the first chunk's
  // update, once and twice. The whole batch's and the second chunk's updates differ from it.
  restore();
  std::vector<std::map<std::string, Tensor>> after;
  {
    NoGradGuard no_grad;
    model->forward_tensor(chunks[0]);
    after.push_back(buffers_of(*model));
    model->forward_tensor(chunks[0]);
    after.push_back(buffers_of(*model));
    restore();
    model->forward_tensor(x);
    CHECK_FALSE(same_values(buffers_of(*model).at("running_mean"), after[0].at("running_mean")));
    restore();
    model->forward_tensor(chunks[1]);
    CHECK_FALSE(same_values(buffers_of(*model).at("running_var"), after[0].at("running_var")));
    restore();
  }

  model->to(ds[0]);
  DataParallel dp(model, ds);
  for (int call = 0; call < 2; ++call) {
    INFO("call " << call);
    const Tensor in = x.to(ds[0]).detach().requires_grad_(true);
    const Tensor out = dp.forward(in);
    CHECK_ALLCLOSE(out, ref, 1e-12, 1e-13);
    (out * w.to(ds[0])).sum().backward();
    CHECK_ALLCLOSE(in.grad(), xr.grad(), 1e-12, 1e-13);
    const std::vector<Tensor> grads = param_grads(*model);
    REQUIRE(grads.size() == ref_grads.size());
    for (size_t k = 0; k < grads.size(); ++k) CHECK_ALLCLOSE(grads[k], ref_grads[k], 1e-12, 1e-13);
    check_buffers(*model, after[static_cast<size_t>(call)], exact);
    // The next call's replicas start from these statistics.
    auto replicas = replicate(model, ds);
    for (size_t j = 0; j < replicas.size(); ++j) {
      INFO("replica " << j);
      for (const auto& [k, v] : replicas[j]->named_buffers()) CHECK(v.device() == ds[j]);
      check_buffers(*replicas[j], after[static_cast<size_t>(call)], true);
    }
  }
  // In eval mode nothing changes.
  model->eval();
  dp.forward(x.to(ds[0]));
  check_buffers(*model, after[1], exact);
}

}  // namespace

TEST_CASE("DataParallel in training mode leaves replica 0's running statistics in the original",
          "[parallel][replicate_running_stats]") {
  for (const Norm& c : norms()) {
    for (const std::vector<Device>& ds : device_groups()) {
      INFO(c.name << " on " << fmt::format("{}", fmt::join(ds, ", ")));
      check_norm(c, ds);
    }
  }
}
