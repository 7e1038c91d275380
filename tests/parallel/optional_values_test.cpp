// What PyTorch's parallel layer passes through that a first port broke on: optional (undefined)
// tensors in a module's arguments and results, a batch of 0 rows, a DataParallel whose module
// entry was set to None, and a replica that runs out of memory.
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>
#include <new>

#include "parallel/parallel_test_util.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/parallel_apply.h"
#include "wick/parallel/scatter_gather.h"

using namespace wick;
using namespace wick::parallel;
using nn::Value;
using wick::test::cpu;
using wick::test::cpus;
using wick::test::f64;

namespace {

// forward(x, mask = {}): x * 2, plus mask where one is given (an optional argument, as attention
// masks are).
class OptionalMask : public nn::Cloneable<OptionalMask> {
 public:
  Tensor forward(const Tensor& x, const Tensor& mask = {}) { return mask.defined() ? x * 2.0 + mask : x * 2.0; }
};

// Replica i throws std::bad_alloc when the input's first element is i.
class OutOfMemoryOn : public nn::Cloneable<OutOfMemoryOn> {
 public:
  Tensor forward(const Tensor& x) {
    if (x.item<double>() == 1.0) throw std::bad_alloc();
    return x;
  }
};

}  // namespace

TEST_CASE("optional values: an undefined result in every replica gathers to an undefined tensor (need_weights)") {
  // PyTorch: DataParallel(nn.MultiheadAttention(...))(q, k, v, need_weights=False) returns (out, None).
  manual_seed(5);
  auto mha = std::make_shared<nn::MultiheadAttentionImpl>(nn::MultiheadAttentionOptions(4, 2).batch_first(true), f64());
  const Value x = randn({6, 5, 4}, f64()), none;
  const std::vector<Value> args{x, x, x, none, Value(false), none, Value(true), Value(false)};
  const Value plain = mha->forward_value(args);
  REQUIRE(plain.is_tuple());
  REQUIRE_FALSE(plain.items()[1].tensor().defined());
  for (int n : {2, 3}) {
    INFO(n << " devices");
    const Value got = data_parallel(mha, args, cpus(n));
    REQUIRE(got.is_tuple());
    REQUIRE(got.items().size() == 2);
    CHECK_ALLCLOSE(got.items()[0].tensor(), plain.items()[0].tensor(), 1e-12, 1e-13);
    CHECK_FALSE(got.items()[1].tensor().defined());
  }
}

TEST_CASE("optional values: an undefined argument goes to every replica as it is, not split") {
  auto m = std::make_shared<OptionalMask>();
  const Tensor x = randn({6, 3}, f64());
  DataParallel dp(m, cpus(3));
  CHECK_ALLCLOSE(dp.forward_value({Value(x), Value(Tensor())}).tensor(), x * 2.0, 0, 0);
  const Tensor mask = randn({6, 3}, f64());
  CHECK_ALLCLOSE(dp.forward_value({Value(x), Value(mask)}).tensor(), x * 2.0 + mask, 0, 0);
  // scatter itself: every device gets the undefined tensor, and it does not set the chunk count.
  const std::vector<Value> per_device = scatter(Value::tuple({Value(x), Value(Tensor())}), cpus(3));
  REQUIRE(per_device.size() == 3);
  for (const Value& v : per_device) {
    CHECK(v.items()[0].tensor().size(0) == 2);
    CHECK_FALSE(v.items()[1].tensor().defined());
  }
}

TEST_CASE("optional values: an undefined result in some replicas only is a ValueError naming one") {
  const Tensor a = ones({2}, f64()), b = ones({2}, f64(cpu(1)));
  try {
    (void)gather({Value::tuple({Value(a), Value(Tensor())}), Value::tuple({Value(b), Value(b)})}, cpu(0));
    FAIL("expected a ValueError");
  } catch (const ValueError& e) {
    CHECK_THAT(e.what(), Catch::Contains("replica 0") && Catch::Contains("undefined"));
  }
}

TEST_CASE("optional values: a batch of 0 rows is split into one empty chunk per device, as torch.chunk") {
  // torch.empty(0, 3).chunk(4) has 4 chunks; split of an empty dim has 1.
  const Tensor empty_rows = zeros({0, 3}, f64());
  const auto chunks = empty_rows.chunk(4);
  REQUIRE(chunks.size() == 4);
  for (const Tensor& c : chunks) CHECK(c.sizes() == IntArrayRef({0, 3}));
  CHECK(native::chunk(empty_rows, 4, 0).size() == 4);
  CHECK(empty_rows.split(2).size() == 1);
  CHECK(scatter(empty_rows, cpus(3)).size() == 3);
  // Through DataParallel: every replica runs on its empty chunk, the result has 0 rows.
  auto lin = std::make_shared<nn::LinearImpl>(3, 2, f64());
  DataParallel dp(lin, cpus(2));
  CHECK(dp.forward(empty_rows).sizes() == IntArrayRef({0, 2}));
}

TEST_CASE("optional values: a DataParallel whose module entry was set to None raises, it does not crash") {
  auto lin = std::make_shared<nn::LinearImpl>(3, 2, f64());
  DataParallel dp(lin, cpus(2));
  dp.set_child_entry(0, nullptr);
  CHECK_THROWS_AS(dp.forward(randn({4, 3}, f64())), IndexError);
  CHECK_THROWS_AS(dp.module(), IndexError);
  DataParallel single(std::make_shared<nn::LinearImpl>(3, 2, f64()), std::vector<Device>{});
  single.set_child_entry(0, nullptr);
  CHECK_THROWS_AS(single.forward(randn({4, 3}, f64())), IndexError);
}

TEST_CASE("optional values: a replica that runs out of memory surfaces as OutOfMemoryError naming it") {
  auto m = std::make_shared<OutOfMemoryOn>();
  try {
    (void)parallel_apply({m, m}, std::vector<Tensor>{tensor({0.0}), tensor({1.0}, TensorOptions().device(cpu(1)))},
                         {cpu(0), cpu(1)});
    FAIL("expected an OutOfMemoryError");
  } catch (const OutOfMemoryError& e) {
    CHECK_THAT(e.what(), Catch::Contains("in replica 1 on device cpu:1"));
  }
}
