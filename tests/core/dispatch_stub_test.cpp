// Note [Dispatch stubs]: a stub's table per device type, its error when a type has no kernel,
// the CPU's fused log_softmax reached through one (equal to the composite it replaces), and its
// trace event.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "support/allclose.h"
#include "wick/core/stubs.h"

using namespace wick;
using Catch::Matchers::Contains;

namespace {
int twice(int x) { return 2 * x; }
int thrice(int x) { return 3 * x; }
}  // namespace

TEST_CASE("dispatch stub: one entry per device type, and a typed error where there is none") {
  DispatchStub<int (*)(int)> stub("test_op");
  CHECK(stub.find(DeviceType::CPU) == nullptr);
  CHECK_THROWS_AS(stub(DeviceType::CPU, 1), NotImplementedError);
  CHECK_THROWS_WITH(stub(DeviceType::CUDA, 1), Contains("test_op") && Contains("cuda"));
  stub.set(DeviceType::CPU, &twice);
  CHECK(stub(DeviceType::CPU, 21) == 42);
  CHECK(stub.find(DeviceType::CUDA) == nullptr);  // the other type is untouched
  stub.set(DeviceType::CUDA, &thrice);
  CHECK(stub(DeviceType::CUDA, 5) == 15);
  CHECK(stub(DeviceType::CPU, 5) == 10);
  stub.set(DeviceType::CPU, nullptr);
  CHECK_THROWS_AS(stub(DeviceType::CPU, 1), NotImplementedError);
}

TEST_CASE("dispatch stub: the CPU's fused log_softmax equals the composite, and is traced") {
  backend(kCPU);  // sets the CPU backend up, and with it its stub entries
  REQUIRE(stubs::log_softmax_rows.find(DeviceType::CPU) != nullptr);
  REQUIRE(stubs::log_softmax_backward_rows.find(DeviceType::CPU) != nullptr);
  manual_seed(3);
  Tensor x = randn({4, 7}, kFloat64);
  Tensor fused = native::log_softmax(x, 1);
  Tensor composite = native::log_softmax_composite(x, 1);
  CHECK_ALLCLOSE(fused, composite, 1e-14, 1e-14);
  std::string json;
  {
    profiler::Trace trace;
    native::log_softmax(x, -1);
    json = trace.stop();
  }
  CHECK(json.find("stub:log_softmax_rows") != std::string::npos);
}

TEST_CASE("dispatch stub: the CPU's fused softmax and its backward equal the composite formulas") {
  backend(kCPU);
  REQUIRE(stubs::softmax_rows.find(DeviceType::CPU) != nullptr);
  REQUIRE(stubs::softmax_backward_rows.find(DeviceType::CPU) != nullptr);
  manual_seed(4);
  Tensor x = randn({5, 9}, kFloat64) * 30.0;  // large logits: the max shift matters
  x.select(0, 1).fill_(-std::numeric_limits<double>::infinity());
  x.select(0, 1).select(0, 4).fill_(0.0);  // one finite entry in an otherwise -inf row
  // The same values along a non-last dim take the composite (amax, exp, sum, div).
  Tensor fused = native::softmax(x, 1);
  Tensor composite = native::softmax(x.t(), 0).t();
  CHECK_ALLCLOSE(fused, composite, 1e-14, 1e-15);
  CHECK(fused.select(0, 1).select(0, 4).item<double>() == 1.0);
  Tensor g = randn({5, 9}, kFloat64);
  Tensor fused_grad = native::softmax_backward(g, fused, 1);
  Tensor composite_grad = native::softmax_backward(g.t(), fused.t(), 0).t();
  CHECK_ALLCLOSE(fused_grad, composite_grad, 1e-14, 1e-15);
  Tensor nan_row = x.clone();
  nan_row.select(0, 2).select(0, 3).fill_(std::nan(""));
  CHECK(isnan(native::softmax(nan_row, 1).select(0, 2)).all().item<bool>());
  std::string json;
  {
    profiler::Trace trace;
    native::softmax(x, -1);
    json = trace.stop();
  }
  CHECK(json.find("stub:softmax_rows") != std::string::npos);
}
