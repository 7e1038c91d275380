// The parallel layer on every device type (Note [Device registry], docs/architecture.md, "What the
// tests hold each layer to"): each comm primitive, replicate with parallel_apply, and a
// DataParallel training step run over the devices of each available type (cpu:0 and cpu:1;
// mirror:0 and mirror:1, a type known to core only through the registry; every CUDA device) and
// over mixed pairs (cpu:0 with the first device of each other type). Each run is compared with
// the same calls on cpu:0 and cpu:1: bit for bit when every device is a CPU, to rounding
// otherwise (float64).
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>

#include "parallel/parallel_test_util.h"
#include "support/devices.h"
#include "support/mirror_backend.h"
#include "wick/parallel/comm.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/parallel_apply.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpus;

namespace {

// The device lists under test: one per device type other than the CPU (all of its test devices,
// two mirrors), and cpu:0 paired with each of them. (The CPU devices themselves are the
// reference: comparing cpu:0,cpu:1 with itself would only show that a run repeats.)
std::vector<std::vector<Device>> device_groups() {
  std::vector<std::vector<Device>> groups;
  std::vector<Device> mirrors;
  for (int i = 0; i < test::kMirrorDevices; ++i) mirrors.emplace_back(test::mirror_device_type(), i);
  groups.push_back(mirrors);
  std::vector<Device> cudas;
  for (const Device& d : test::test_devices())
    if (d.is_cuda()) cudas.push_back(d);
  if (!cudas.empty()) groups.push_back(cudas);
  groups.push_back({Device("cpu:0"), mirrors[0]});
  if (!cudas.empty()) groups.push_back({Device("cpu:0"), cudas[0]});
  return groups;
}

bool all_cpu(const std::vector<Device>& ds) {
  return std::all_of(ds.begin(), ds.end(), [](Device d) { return d.is_cpu(); });
}

// Every result of `run` on `group` against the same on cpu:0, cpu:1 (the first n CPU devices for
// a group of n); each result must also be on the device `run` says.
void check_against_cpus(const std::function<std::vector<Tensor>(const std::vector<Device>&)>& run) {
  for (const std::vector<Device>& group : device_groups()) {
    INFO("devices " << fmt::format("{}", fmt::join(group, ", ")));
    const std::vector<Tensor> expected = run(cpus(static_cast<int>(group.size())));
    const std::vector<Tensor> got = run(group);
    REQUIRE(got.size() == expected.size());
    for (size_t k = 0; k < got.size(); ++k) {
      INFO("result " << k);
      REQUIRE(got[k].defined() == expected[k].defined());
      if (!got[k].defined()) continue;
      if (all_cpu(group)) {
        CHECK_ALLCLOSE(got[k], expected[k], 0.0, 0.0);
      } else {
        CHECK_ALLCLOSE(got[k], expected[k], 1e-12, 1e-14);
      }
    }
  }
}

Tensor sample(std::vector<int64_t> shape, uint64_t seed) {
  manual_seed(seed);
  return randn(shape, kFloat64);
}

}  // namespace

TEST_CASE("parallel on every device type: broadcast, reduce_add, scatter and gather agree with CPU devices") {
  check_against_cpus([](const std::vector<Device>& ds) {
    std::vector<Tensor> out;
    const Tensor t = sample({5, 3}, 1).to(ds[0]);
    for (size_t i = 0; const Tensor& b : comm::broadcast(t, ds)) {
      CHECK(b.device() == ds[i++]);
      out.push_back(b);
    }
    // Three tensors in buckets of 64 bytes: several buckets, each moved once per device.
    const std::vector<Tensor> many{sample({4}, 2).to(ds[0]), sample({2, 3}, 3).to(ds[0]), sample({7}, 4).to(ds[0])};
    for (const auto& per_device : comm::broadcast_coalesced(many, ds, 64))
      for (const Tensor& b : per_device) out.push_back(b);
    std::vector<Tensor> addends;
    std::vector<std::vector<Tensor>> lists;
    for (size_t i = 0; i < ds.size(); ++i) {
      addends.push_back(sample({3, 4}, 10 + i).to(ds[i]));
      lists.push_back({sample({6}, 20 + i).to(ds[i]), sample({2, 2}, 30 + i).to(ds[i])});
    }
    Tensor sum = comm::reduce_add(addends, ds.back());
    CHECK(sum.device() == ds.back());
    out.push_back(sum);
    for (const Tensor& s : comm::reduce_add_coalesced(lists, ds[0], 32)) out.push_back(s);
    const std::vector<Tensor> chunks = comm::scatter(sample({7, 2}, 5).to(ds[0]), ds);
    for (size_t i = 0; i < chunks.size(); ++i) CHECK(chunks[i].device() == ds[i]);
    out.insert(out.end(), chunks.begin(), chunks.end());
    out.push_back(comm::gather(chunks, 0, ds.back()));
    return out;
  });
}

TEST_CASE("parallel on every device type: a DataParallel training step agrees with CPU devices") {
  check_against_cpus([](const std::vector<Device>& ds) {
    manual_seed(7);
    auto model = nn::Sequential(nn::Linear(nn::LinearOptions(5, 8)), nn::Tanh(), nn::Linear(nn::LinearOptions(8, 3)));
    model->to(ds[0], kFloat64);
    const Tensor x = sample({9, 5}, 8).to(ds[0]);
    const Tensor y = sample({9, 3}, 9).to(ds[0]);
    Tensor out = data_parallel(model.ptr(), x, ds);
    CHECK(out.device() == ds[0]);
    Tensor loss = ((out - y) * (out - y)).mean();
    loss.backward();
    std::vector<Tensor> results{out, loss};
    for (const Tensor& p : model->parameters()) {
      CHECK(p.grad().device() == ds[0]);
      results.push_back(p.grad());
    }
    // replicate and parallel_apply on their own, in no-grad mode.
    NoGradGuard no_grad;
    auto replicas = replicate(model.ptr(), ds);
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < ds.size(); ++i) inputs.push_back(sample({2, 5}, 40 + i).to(ds[i]));
    for (size_t i = 0; const Tensor& r : parallel_apply(replicas, inputs)) {
      CHECK(r.device() == ds[i++]);
      results.push_back(r);
    }
    return results;
  });
}
