// Every layer of nn/include/wick/nn/modules replicates (docs/parallel.md, "replicate, step by
// step" and "Fresh copies on every call"), on cpu:0,cpu:1 and on the device groups of
// every_device_test.cpp (two mirrors, every CUDA device, cpu:0 with a mirror or a GPU), in float64:
//  - replicate: each replica, run on the whole batch on its device, gives the plain module's
//    output, and the original's gradients are the sum of the replicas' (n times the plain
//    module's); exact on CPU devices (same kernels, no split), to rounding elsewhere;
//  - DataParallel: output, parameter and input gradients equal the plain module's on the whole
//    batch to rounding (the batch is split: 5 rows over 2 devices, 3 + 2);
//  - each replica is a fresh copy: the original's print string, module names, types and training
//    flags, parameter and buffer names and values (replica 0 shares the original's storage,
//    the others own copies on their device), also at a second call after the original changed.
// The layers are the rows of replicate_every_layer_table_test.cpp (support/replicate_layers.h).
// The running statistics rule (what DataParallel leaves in the original) is in
// replicate_running_stats_test.cpp.
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>

#include "parallel/parallel_test_util.h"
#include "support/devices.h"
#include "support/mirror_backend.h"
#include "support/replicate_layers.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/parallel_apply.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::parallel;
using namespace wick::test::replicate_layers;
using nn::Value;
using wick::test::cpu;
using wick::test::f64;

namespace {

// The device lists under test: cpu:0,cpu:1, then every_device_test.cpp's groups.
std::vector<std::vector<Device>> device_groups() {
  std::vector<std::vector<Device>> groups{{cpu(0), cpu(1)}};
  std::vector<Device> mirrors;
  for (int i = 0; i < test::kMirrorDevices; ++i) mirrors.emplace_back(test::mirror_device_type(), i);
  groups.push_back(mirrors);
  std::vector<Device> cudas;
  for (const Device& d : test::test_devices())
    if (d.is_cuda()) cudas.push_back(d);
  if (!cudas.empty()) groups.push_back(cudas);
  groups.push_back({cpu(0), mirrors[0]});
  if (!cudas.empty()) groups.push_back({cpu(0), cudas[0]});
  return groups;
}

bool all_cpu(const std::vector<Device>& ds) {
  return std::all_of(ds.begin(), ds.end(), [](Device d) { return d.is_cpu(); });
}

// Each floating-point tensor of `args` copied to d as a fresh leaf that requires grad.
Args leaves_on(const Args& args, Device d) {
  Args out;
  for (const Value& v : args)
    out.push_back(v.map_tensors([d](const Tensor& t) {
      Tensor c = t.to(d).detach();
      if (c.is_floating_point()) c.requires_grad_(true);
      return c;
    }));
  return out;
}

std::vector<Tensor> tensors_of(const Value& v) {
  std::vector<Tensor> out;
  v.for_each_tensor([&](const Tensor& t) { out.push_back(t); });
  return out;
}

std::vector<Tensor> input_grads(const Args& args) {
  std::vector<Tensor> out;
  for (const Value& v : args)
    v.for_each_tensor([&](const Tensor& t) {
      if (t.requires_grad()) out.push_back(t.grad());
    });
  return out;
}

std::vector<Tensor> param_grads(const nn::Module& m) {
  std::vector<Tensor> out;
  for (const Tensor& p : m.named_parameters().values()) out.push_back(p.grad());
  return out;
}

void clear_grads(nn::Module& m) {
  for (Tensor p : m.parameters()) p.set_grad(Tensor());
}

// sum_k (output_k * weights_k).sum(), on device d.
Tensor loss_of(const Value& out, const std::vector<Tensor>& weights, Device d) {
  const std::vector<Tensor> outs = tensors_of(out);
  REQUIRE(outs.size() == weights.size());
  Tensor loss = zeros({}, f64(d));
  for (size_t k = 0; k < outs.size(); ++k) loss = loss + (outs[k] * weights[k].to(outs[k].device())).sum().to(d);
  return loss;
}

// got[k] == want[k] * scale: exactly, or to float64 rounding.
void check_all(const std::vector<Tensor>& got, const std::vector<Tensor>& want, bool exact, const char* what,
               double scale = 1.0) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    INFO(what << " " << k);
    REQUIRE(got[k].defined() == want[k].defined());
    if (!got[k].defined()) continue;
    if (exact) {
      CHECK_ALLCLOSE(got[k], want[k] * scale, 0.0, 0.0);
    } else {
      CHECK_ALLCLOSE(got[k], want[k] * scale, 1e-12, 1e-13);
    }
  }
}

// Names and values of replica tensors against the original's: on device d, the same dtype and
// values; replica 0's are the original's own storage, the others' are not.
void check_tensors(const nn::OrderedDict<Tensor>& got, const nn::OrderedDict<Tensor>& want, Device d, bool shared) {
  REQUIRE(got.keys() == want.keys());
  for (size_t k = 0; k < got.size(); ++k) {
    INFO(want[k].first);
    const Tensor& g = got[k].second;
    const Tensor& w = want[k].second;
    CHECK(g.device() == d);
    CHECK(g.dtype() == w.dtype());
    CHECK(test::same_values(g, w));
    CHECK((g.data_ptr() == w.data_ptr()) == shared);
  }
}

// Each replica is a fresh copy of the original as it is now.
void check_fresh_copies(const nn::Module& original, const std::vector<std::shared_ptr<nn::Module>>& replicas,
                        const std::vector<Device>& ds) {
  REQUIRE(replicas.size() == ds.size());
  const auto modules = original.named_modules();
  for (size_t j = 0; j < replicas.size(); ++j) {
    INFO("replica " << j);
    const nn::Module& r = *replicas[j];
    CHECK(r.to_string() == original.to_string());
    const auto copies = r.named_modules();
    REQUIRE(copies.keys() == modules.keys());
    for (size_t k = 0; k < copies.size(); ++k) {
      INFO("module '" << modules[k].first << "'");
      CHECK(copies[k].second->name() == modules[k].second->name());
      CHECK(copies[k].second->is_training() == modules[k].second->is_training());
      CHECK(copies[k].second->is_replica());
      CHECK(copies[k].second.get() != modules[k].second.get());
    }
    check_tensors(r.named_parameters(), original.named_parameters(), ds[j], j == 0);
    check_tensors(r.named_buffers(), original.named_buffers(), ds[j], j == 0);
  }
}

void check_layer(const Layer& layer, const std::vector<Device>& ds) {
  const size_t n = ds.size();
  manual_seed(1);
  std::shared_ptr<nn::Module> model = layer.make();
  model->to(kFloat64);
  if (!model->named_buffers().empty()) {  // non-trivial running statistics
    NoGradGuard no_grad;
    manual_seed(2);
    Args warm = layer.args();
    for (Value& v : warm) v = v.map_tensors([](const Tensor& t) { return t.is_floating_point() ? t * 2.0 + 1.0 : t; });
    model->forward_value(warm);
  }
  model->train(layer.train);

  // The plain module on the whole batch, on cpu:0.
  manual_seed(3);
  const Args args = layer.args();
  const Args ref_in = leaves_on(args, cpu(0));
  const Value ref = model->forward_value(ref_in);
  std::vector<Tensor> weights;
  for (const Tensor& t : tensors_of(ref)) weights.push_back(randn(t.sizes(), f64()));
  loss_of(ref, weights, cpu(0)).backward();
  const std::vector<Tensor> ref_out = tensors_of(ref), ref_grads = param_grads(*model),
                            ref_in_grads = input_grads(ref_in);
  clear_grads(*model);
  model->to(ds[0]);
  const bool exact = all_cpu(ds);

  {  // replicate: every replica on the whole batch
    auto replicas = replicate(model, ds);
    check_fresh_copies(*model, replicas, ds);
    std::vector<Args> inputs;
    for (Device d : ds) inputs.push_back(leaves_on(args, d));
    const std::vector<Value> outs = parallel_apply(replicas, inputs, ds);
    Tensor loss = zeros({}, f64(ds[0]));
    for (size_t i = 0; i < n; ++i) {
      INFO("replica " << i);
      for (const Tensor& t : tensors_of(outs[i])) CHECK(t.device() == ds[i]);
      check_all(tensors_of(outs[i]), ref_out, exact, "output");
      loss = loss + loss_of(outs[i], weights, ds[0]);
    }
    loss.backward();
    check_all(param_grads(*model), ref_grads, exact, "parameter gradient (summed over replicas)", double(n));
    for (size_t i = 0; i < n; ++i) check_all(input_grads(inputs[i]), ref_in_grads, exact, "input gradient");
    clear_grads(*model);
  }

  {  // DataParallel: the batch split over the devices
    DataParallel dp(model, ds, std::nullopt, layer.dim);
    const Args in = leaves_on(args, ds[0]);
    const Value out = dp.forward_value(in);
    for (const Tensor& t : tensors_of(out)) CHECK(t.device() == ds[0]);
    check_all(tensors_of(out), ref_out, false, "output");
    loss_of(out, weights, ds[0]).backward();
    check_all(param_grads(*model), ref_grads, false, "parameter gradient");
    check_all(input_grads(in), ref_in_grads, false, "input gradient");
    clear_grads(*model);
  }

  {  // replicas are fresh copies of the original at each call
    check_fresh_copies(*model, replicate(model, ds), ds);
    {
      NoGradGuard no_grad;  // change every tensor of the original in place, and its mode
      for (Tensor p : model->parameters()) p.add_(0.5);
      for (Tensor b : model->buffers()) b.add_(1);
    }
    model->train(!layer.train);
    check_fresh_copies(*model, replicate(model, ds), ds);
  }
}

}  // namespace

TEST_CASE("every layer replicates through replicate and DataParallel as fresh copies on every device group",
          "[parallel][replicate_every_layer]") {
  const std::vector<Layer> layers = every_layer();
  if (layers.empty()) FAIL("no layers: replicate_every_layer_table_test.cpp adds them");
  for (const Layer& layer : layers) {
    for (const std::vector<Device>& ds : device_groups()) {
      INFO(layer.name << " on " << fmt::format("{}", fmt::join(ds, ", ")));
      check_layer(layer, ds);
    }
  }
}
