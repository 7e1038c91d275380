// In-place ops whose target or operand overlap in memory (Note [In-place writes and overlapping
// memory], core/src/memory_overlap.h): the result is what the same op gives on separate tensors,
// computed by hand, whether or not autograd records the op; a target whose elements share memory
// is refused and left unchanged.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/small_tensors.h"

using namespace wick;
using Catch::Matchers::Contains;

namespace {
using wick::test::f64;
}  // namespace

TEST_CASE("in-place ops: an operand that overlaps the target in another layout is read as it was") {
  for (bool recorded : {false, true}) {
    INFO("recorded " << recorded);
    auto make = [&](std::vector<double> v, std::vector<int64_t> shape) {
      Tensor t = f64(std::move(v), std::move(shape));
      // A non-leaf that requires grad, so the op is recorded (a leaf would be refused).
      return recorded ? t.requires_grad_(true) * 1.0 : t;
    };
    Tensor a = make({1, 2, 3, 4}, {2, 2});
    a.add_(a.t());  // [[1+1, 2+3], [3+2, 4+4]]
    CHECK_VALUES(a, {2, 5, 5, 8});
    Tensor b = make({1, 2, 3, 4}, {2, 2});
    b.mul_(b.select(0, 0));  // each row times the old row 0 [1, 2]
    CHECK_VALUES(b, {1, 4, 3, 8});
    Tensor c = make({1, 2, 3}, {3});
    c.mul_(c);  // the same layout: squares
    CHECK_VALUES(c, {1, 4, 9});
    Tensor v = make({0, 1, 2, 3, 4}, {5});
    v.narrow(0, 1, 4).copy_(v.narrow(0, 0, 4));  // a shift right by one
    CHECK_VALUES(v, {0, 0, 1, 2, 3});
  }
}

TEST_CASE("in-place ops: a tensor copied onto itself keeps its values on every device") {
  // The exact alias is not cloned (same layout), and copy_ returns before the backend: a device
  // memcpy must never get overlapping ranges.
  for (const Device& d : test::test_devices()) {
    INFO(d);
    Tensor x = arange(0.0, 1000.0, 1.0, TensorOptions(kFloat32).device(d));
    const int64_t before = x.version();
    x.copy_(x);
    CHECK(x.version() == before + 1);  // still a write, as PyTorch counts it
    Tensor t = x.view({10, 100}).t();
    t.copy_(t);
    const auto v = x.to_vector<double>();
    int64_t bad = 0;
    for (size_t i = 0; i < v.size(); ++i) bad += v[i] != static_cast<double>(i);
    CHECK(bad == 0);
  }
}

TEST_CASE("in-place ops: a long overlapping shift splits over threads and still reads old values") {
  // Large enough for the copy and the add to be cut into pieces (Note [Intra-op threads]).
  const int64_t n = int64_t{1} << 20;
  Tensor v = arange(0.0, static_cast<double>(n), 1.0, TensorOptions(kFloat64));
  v.narrow(0, 1, n - 1).copy_(v.narrow(0, 0, n - 1));
  Tensor w = arange(0.0, static_cast<double>(n), 1.0, TensorOptions(kFloat64));
  w.narrow(0, 0, n - 1).add_(w.narrow(0, 1, n - 1));  // w[i] = i + (i + 1) = 2i + 1, the last kept
  const auto vs = v.to_vector<double>(), ws = w.to_vector<double>();
  int64_t bad_v = 0, bad_w = 0;
  for (int64_t i = 0; i < n; ++i) {
    bad_v += vs[static_cast<size_t>(i)] != (i == 0 ? 0.0 : static_cast<double>(i - 1));
    bad_w += ws[static_cast<size_t>(i)] != (i == n - 1 ? static_cast<double>(i) : 2.0 * static_cast<double>(i) + 1);
  }
  CHECK(bad_v == 0);
  CHECK(bad_w == 0);
}

TEST_CASE("in-place ops: a target whose elements share memory is refused and left unchanged") {
  Tensor x = zeros({1}, kFloat64);
  Tensor e = x.expand({4});
  CHECK_THROWS_WITH(e.add_(1.0), Contains("add_") && Contains("stride 0") && Contains("clone()"));
  CHECK_THROWS_WITH(e.add_(ones({4}, kFloat64)), Contains("add_") && Contains("[4]"));
  CHECK_THROWS_WITH(e.clamp_(-1.0, 1.0), Contains("clone()"));
  CHECK_THROWS_WITH(e.copy_(ones({4}, kFloat64)), Contains("copy_"));
  CHECK_THROWS_AS(e.mul_(2.0), ValueError);
  CHECK(x.item<double>() == 0.0);
  // Writing through a non-overlapping view of the same memory stays allowed.
  x.expand({1}).add_(1.0);
  CHECK(x.item<double>() == 1.0);
}
