// The communicator registry (a registered factory takes over, factories that select and register
// in turn) and the local communicator's checks of its operands. The comm functions themselves:
// comm_test.cpp.
#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "parallel/parallel_test_util.h"
#include "wick/parallel/comm.h"
#include "wick/parallel/communicator.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;

TEST_CASE("communicator registry: a registered factory takes over, unregistering restores local") {
  struct Counting : Communicator {
    std::atomic<int> buckets{0};
    std::string name() const override { return "counting"; }
    void broadcast(const std::vector<Tensor>& ts) override { local_communicator().broadcast(ts); }
    void reduce(const std::vector<Tensor>& in, const Tensor& out, int root) override {
      local_communicator().reduce(in, out, root);
    }
    void all_reduce(const std::vector<Tensor>& in, const std::vector<Tensor>& out) override {
      local_communicator().all_reduce(in, out);
    }
    void broadcast_bucket(const std::vector<Tensor>& p, const std::vector<Tensor>& f) override {
      ++buckets;
      Communicator::broadcast_bucket(p, f);  // the default: flatten + one broadcast
    }
  };
  auto counting = std::make_shared<Counting>();
  // Applies only to lists containing cpu:7, so other tests are unaffected.
  const int id = register_communicator_factory("counting", [counting](const std::vector<Device>& ds, DType) {
    for (Device d : ds)
      if (d == cpu(7)) return std::static_pointer_cast<Communicator>(counting);
    return std::shared_ptr<Communicator>();
  });
  CHECK(select_communicator({cpu(0), cpu(7)}, kFloat32)->name() == "counting");
  CHECK(select_communicator({cpu(0), cpu(1)}, kFloat32)->name() == "local");
  std::vector<Tensor> ts{randn({3}), randn({4}, kFloat64), randn({5})};
  auto out = comm::broadcast_coalesced(ts, {cpu(0), cpu(7), cpu(6)});
  CHECK(counting->buckets == 2);  // one per bucket (float32, float64), for all destinations at once
  for (size_t i = 0; i < ts.size(); ++i) {
    CHECK_VALUES_EQUAL(out[1][i], ts[i]);
    CHECK_VALUES_EQUAL(out[2][i], ts[i]);
  }
  // A communicator that wants flat buckets (as NCCL) gets whole buckets to reduce; the sums are
  // views of them, each with its own version counter.
  std::vector<Tensor> on7;
  for (const Tensor& t : ts) on7.push_back(t.to(cpu(7)));
  auto sums = comm::reduce_add_coalesced({ts, on7}, cpu(0));
  for (size_t i = 0; i < ts.size(); ++i) CHECK_VALUES_EQUAL(sums[i], ts[i] * 2.0);
  CHECK(sums[0].impl()->storage == sums[2].impl()->storage);  // one float32 bucket
  unregister_communicator_factory(id);
  CHECK(select_communicator({cpu(0), cpu(7)}, kFloat32)->name() == "local");
  // the local all_reduce
  std::vector<Tensor> in{tensor({1.0, 2.0}), tensor({3.0, 4.0}, TensorOptions().device(cpu(1)))};
  std::vector<Tensor> outs{empty({2}), empty({2}, TensorOptions().device(cpu(1)))};
  local_communicator().all_reduce(in, outs);
  CHECK_VALUES(outs[0], {4.0, 6.0});
  CHECK_VALUES(outs[1], {4.0, 6.0});
}

TEST_CASE("the local communicator refuses operands of another dtype or size, and writes nothing") {
  Communicator& c = local_communicator();
  const TensorOptions on1 = TensorOptions().device(cpu(1));
  Tensor src = tensor({1.0, 2.0, 3.0, 4.0}, TensorOptions().dtype(kFloat64));
  Tensor small = zeros({2}, on1.dtype(kFloat64));
  CHECK_THROWS_AS(c.broadcast({src, small}), ValueError);  // 32 bytes into 16 used to be copied
  CHECK_THROWS_WITH(c.broadcast({src, small}), Catch::Contains("broadcast") &&
                                                   Catch::Contains("tensor 1 has 2 elements") &&
                                                   Catch::Contains("[2]") && Catch::Contains("moves 4"));
  Tensor narrower = zeros({4}, on1.dtype(kFloat32));
  CHECK_THROWS_AS(c.broadcast({src, narrower}), TypeError);
  CHECK_THROWS_WITH(c.broadcast({src, narrower}), Catch::Contains("tensor 1 is float32") && Catch::Contains("float64"));
  CHECK_VALUES(small, {0.0, 0.0});
  CHECK_VALUES(narrower, {0.0, 0.0, 0.0, 0.0});
  Tensor out = zeros({4}, kFloat64);
  CHECK_THROWS_AS(c.reduce({src, small}, out, 0), ValueError);  // used to read past small's end
  CHECK_THROWS_AS(c.reduce({src, src.to(cpu(1))}, zeros({3}, kFloat64), 0), ValueError);
  CHECK_THROWS_AS(c.reduce({src, Tensor()}, out, 0), ValueError);
  std::vector<Tensor> outs{zeros({4}, kFloat64), zeros({4}, on1.dtype(kFloat32))};
  CHECK_THROWS_AS(c.all_reduce({src, src.to(cpu(1))}, outs), TypeError);
  CHECK_VALUES(out, {0.0, 0.0, 0.0, 0.0});
  CHECK_VALUES(outs[0], {0.0, 0.0, 0.0, 0.0});
  // Buckets: a flat buffer too small or of another dtype, a device with too few pieces.
  CHECK_THROWS_WITH(c.broadcast_bucket({src, src}, {zeros({7}, on1.dtype(kFloat64))}),
                    Catch::Contains("flat buffer 0") && Catch::Contains("8 elements"));
  CHECK_THROWS_AS(c.broadcast_bucket({src}, {zeros({4}, on1.dtype(kFloat32))}), TypeError);
  CHECK_THROWS_WITH(c.reduce_bucket_each({{src, src}, {src.to(cpu(1))}}, {zeros({4}, kFloat64), zeros({4}, kFloat64)}),
                    Catch::Contains("device 1 gives 1 pieces for 2 outputs"));
  CHECK_THROWS_AS(c.reduce_bucket_each({{src}, {small}}, {zeros({4}, kFloat64)}), ValueError);
  // Well-formed calls still work.
  Tensor dst = zeros({4}, on1.dtype(kFloat64));
  c.broadcast({src, dst});
  CHECK_VALUES(dst, {1.0, 2.0, 3.0, 4.0});
}

TEST_CASE("communicator registry: a factory may select and register in turn without deadlock") {
  // A factory that delegates: it asks the registry itself (and registers and removes a factory)
  // while being asked. The registry used to call factories under its lock, so this hung.
  std::atomic<int> depth{0};
  const int id = register_communicator_factory("delegating", [&](const std::vector<Device>& ds, DType dt) {
    if (depth.fetch_add(1) > 0) {
      depth.fetch_sub(1);
      return std::shared_ptr<Communicator>();
    }
    const int inner = register_communicator_factory(
        "inner", [](const std::vector<Device>&, DType) { return std::shared_ptr<Communicator>(); });
    auto chosen = select_communicator(ds, dt);
    unregister_communicator_factory(inner);
    depth.fetch_sub(1);
    return chosen;
  });
  CHECK(select_communicator({cpu(0), cpu(1)}, kFloat32)->name() == "local");
  unregister_communicator_factory(id);
}
