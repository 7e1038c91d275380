// Device and DType basics, and PyTorch's type promotion for bool/int64/float32/float64 with
// dimensioned tensors, 0-dim tensors and Scalars. The expected tables were produced by
// torch.result_type in PyTorch 1.13 (Debian's python3-torch) and agree with the documented rules
// (https://pytorch.org/docs/stable/tensor_attributes.html#type-promotion-doc): categories
// bool < integer < floating; within a category, dimensioned tensors win over 0-dim tensors, which
// win over Scalars; a floating Scalar counts as the default float32.
#include <wick/wick.h>

#include <catch2/catch.hpp>

#include "support/allclose.h"

using namespace wick;
using Catch::Matchers::Contains;

TEST_CASE("Device parses and prints cpu:N and cuda:N") {
  CHECK(Device("cpu") == Device(DeviceType::CPU, 0));
  CHECK(Device("cpu:3").index == 3);
  CHECK(Device("cuda:1").is_cuda());
  CHECK(Device("cpu:7").str() == "cpu:7");
  CHECK(fmt::format("{}", Device("cuda")) == "cuda:0");
  CHECK(Device("cpu:1") != Device("cpu:2"));
  CHECK(Device("cpu:1") < Device("cpu:2"));
  CHECK(Device("cpu:9") < Device("cuda:0"));
  CHECK(std::hash<Device>()(Device("cpu:1")) != std::hash<Device>()(Device("cpu:2")));
  for (const char* bad : {"gpu", "cpu:", "cpu:-1", "cpu:x", "cpu:1x", "cuda:99999", "", "CPU:0"})
    CHECK_THROWS_WITH(Device(bad), Contains("Device: cannot parse"));
}

TEST_CASE("DType names, sizes and safetensors names") {
  CHECK(element_size(kBool) == 1);
  CHECK(element_size(kInt64) == 8);
  CHECK(element_size(kFloat32) == 4);
  CHECK(element_size(kFloat64) == 8);
  CHECK(fmt::format("{}", kFloat32) == "float32");
  CHECK(dtype_name(kInt64) == "int64");
  for (DType d : {kBool, kInt64, kFloat32, kFloat64})
    CHECK(dtype_from_safetensors_name(dtype_safetensors_name(d)) == d);
  CHECK_THROWS_WITH(dtype_from_safetensors_name("BF16"), Contains("BF16") && Contains("not supported"));
  CHECK(is_floating(kFloat32));
  CHECK_FALSE(is_floating(kInt64));
  CHECK(is_integral(kBool, true));
  CHECK_FALSE(is_integral(kBool, false));
}

TEST_CASE("promote_types is torch.promote_types") {
  const DType all[] = {kBool, kInt64, kFloat32, kFloat64};
  // torch.promote_types over (bool, int64, float32, float64)^2: the larger in that order.
  for (DType a : all)
    for (DType b : all) CHECK(promote_types(a, b) == (static_cast<int>(a) > static_cast<int>(b) ? a : b));
}

TEST_CASE("can_cast is torch.can_cast") {
  // No float -> integral/bool, no non-bool -> bool; everything else (including narrowing within
  // a category, float64 -> float32) is allowed.
  CHECK(can_cast(kFloat64, kFloat32));
  CHECK(can_cast(kInt64, kFloat32));
  CHECK(can_cast(kBool, kInt64));
  CHECK_FALSE(can_cast(kFloat32, kInt64));
  CHECK_FALSE(can_cast(kFloat64, kBool));
  CHECK_FALSE(can_cast(kInt64, kBool));
  CHECK(can_cast(kBool, kBool));
}

namespace {
Tensor make(DType d, bool zero_dim) { return zero_dim ? native::ones({}, d) : native::ones({2}, d); }

struct TT {
  DType a;
  bool a0;
  DType b;
  bool b0;
  DType result;
};
// torch.result_type(a, b): a/b dimensioned ([2]) or 0-dim.
const TT kTensorTensor[] = {
    // dimensioned x dimensioned
    {kBool, false, kBool, false, kBool},
    {kBool, false, kInt64, false, kInt64},
    {kBool, false, kFloat32, false, kFloat32},
    {kBool, false, kFloat64, false, kFloat64},
    {kInt64, false, kBool, false, kInt64},
    {kInt64, false, kInt64, false, kInt64},
    {kInt64, false, kFloat32, false, kFloat32},
    {kInt64, false, kFloat64, false, kFloat64},
    {kFloat32, false, kBool, false, kFloat32},
    {kFloat32, false, kInt64, false, kFloat32},
    {kFloat32, false, kFloat32, false, kFloat32},
    {kFloat32, false, kFloat64, false, kFloat64},
    {kFloat64, false, kBool, false, kFloat64},
    {kFloat64, false, kInt64, false, kFloat64},
    {kFloat64, false, kFloat32, false, kFloat64},
    {kFloat64, false, kFloat64, false, kFloat64},
    // dimensioned x 0-dim
    {kBool, false, kBool, true, kBool},
    {kBool, false, kInt64, true, kInt64},
    {kBool, false, kFloat32, true, kFloat32},
    {kBool, false, kFloat64, true, kFloat64},
    {kInt64, false, kBool, true, kInt64},
    {kInt64, false, kInt64, true, kInt64},
    {kInt64, false, kFloat32, true, kFloat32},
    {kInt64, false, kFloat64, true, kFloat64},
    {kFloat32, false, kBool, true, kFloat32},
    {kFloat32, false, kInt64, true, kFloat32},
    {kFloat32, false, kFloat32, true, kFloat32},
    {kFloat32, false, kFloat64, true, kFloat32},
    {kFloat64, false, kBool, true, kFloat64},
    {kFloat64, false, kInt64, true, kFloat64},
    {kFloat64, false, kFloat32, true, kFloat64},
    {kFloat64, false, kFloat64, true, kFloat64},
    // 0-dim x dimensioned
    {kBool, true, kBool, false, kBool},
    {kBool, true, kInt64, false, kInt64},
    {kBool, true, kFloat32, false, kFloat32},
    {kBool, true, kFloat64, false, kFloat64},
    {kInt64, true, kBool, false, kInt64},
    {kInt64, true, kInt64, false, kInt64},
    {kInt64, true, kFloat32, false, kFloat32},
    {kInt64, true, kFloat64, false, kFloat64},
    {kFloat32, true, kBool, false, kFloat32},
    {kFloat32, true, kInt64, false, kFloat32},
    {kFloat32, true, kFloat32, false, kFloat32},
    {kFloat32, true, kFloat64, false, kFloat64},
    {kFloat64, true, kBool, false, kFloat64},
    {kFloat64, true, kInt64, false, kFloat64},
    {kFloat64, true, kFloat32, false, kFloat32},
    {kFloat64, true, kFloat64, false, kFloat64},
    // 0-dim x 0-dim
    {kBool, true, kBool, true, kBool},
    {kBool, true, kInt64, true, kInt64},
    {kBool, true, kFloat32, true, kFloat32},
    {kBool, true, kFloat64, true, kFloat64},
    {kInt64, true, kBool, true, kInt64},
    {kInt64, true, kInt64, true, kInt64},
    {kInt64, true, kFloat32, true, kFloat32},
    {kInt64, true, kFloat64, true, kFloat64},
    {kFloat32, true, kBool, true, kFloat32},
    {kFloat32, true, kInt64, true, kFloat32},
    {kFloat32, true, kFloat32, true, kFloat32},
    {kFloat32, true, kFloat64, true, kFloat64},
    {kFloat64, true, kBool, true, kFloat64},
    {kFloat64, true, kInt64, true, kFloat64},
    {kFloat64, true, kFloat32, true, kFloat64},
    {kFloat64, true, kFloat64, true, kFloat64},
};

struct TS {
  DType a;
  bool a0;
  Scalar s;
  DType result;
};
// torch.result_type(a, python_number).
const TS kTensorScalar[] = {
    {kBool, false, true, kBool},       {kBool, false, int64_t{2}, kInt64},      {kBool, false, 2.5, kFloat32},
    {kInt64, false, true, kInt64},     {kInt64, false, int64_t{2}, kInt64},     {kInt64, false, 2.5, kFloat32},
    {kFloat32, false, true, kFloat32}, {kFloat32, false, int64_t{2}, kFloat32}, {kFloat32, false, 2.5, kFloat32},
    {kFloat64, false, true, kFloat64}, {kFloat64, false, int64_t{2}, kFloat64}, {kFloat64, false, 2.5, kFloat64},
    {kBool, true, true, kBool},        {kBool, true, int64_t{2}, kInt64},       {kBool, true, 2.5, kFloat32},
    {kInt64, true, true, kInt64},      {kInt64, true, int64_t{2}, kInt64},      {kInt64, true, 2.5, kFloat32},
    {kFloat32, true, true, kFloat32},  {kFloat32, true, int64_t{2}, kFloat32},  {kFloat32, true, 2.5, kFloat32},
    {kFloat64, true, true, kFloat64},  {kFloat64, true, int64_t{2}, kFloat64},  {kFloat64, true, 2.5, kFloat64},
};
}  // namespace

TEST_CASE("result_type of two tensors follows PyTorch (dimensioned and 0-dim)") {
  for (const TT& c : kTensorTensor) {
    INFO(dtype_name(c.a) << (c.a0 ? " 0-dim" : " [2]") << " with " << dtype_name(c.b) << (c.b0 ? " 0-dim" : " [2]"));
    Tensor a = make(c.a, c.a0), b = make(c.b, c.b0);
    CHECK(native::result_type(a, b) == c.result);
    // The ops apply it: add/mul/maximum keep the promoted type, comparisons give bool.
    CHECK(add(a, b).dtype() == c.result);
    CHECK(mul(a, b).dtype() == c.result);
    CHECK(maximum(a, b).dtype() == c.result);
    CHECK(eq(a, b).dtype() == kBool);
    CHECK(add(a, b).dim() == ((c.a0 && c.b0) ? 0 : 1));
    // True division never stays integral.
    CHECK(div(a, b).dtype() == (is_floating(c.result) ? c.result : kFloat32));
  }
}

TEST_CASE("result_type of a tensor and a Scalar follows PyTorch (floating Scalars count as float32)") {
  for (const TS& c : kTensorScalar) {
    INFO(dtype_name(c.a) << (c.a0 ? " 0-dim" : " [2]") << " with a " << dtype_name(c.s.dtype()) << " scalar");
    Tensor a = make(c.a, c.a0);
    CHECK(native::result_type(a, c.s) == c.result);
    CHECK(a.add(c.s).dtype() == c.result);
    CHECK((a * c.s).dtype() == c.result);
    CHECK((c.s * a).dtype() == c.result);
    CHECK(native::binary(BinaryOp::Maximum, a, c.s).dtype() == c.result);
  }
}

TEST_CASE("promotion in specific ops matches PyTorch") {
  Tensor i = tensor({1.0, 2.0}, kInt64), f = tensor({1.0, 2.0}, kFloat32), b = native::ones({2}, kBool);
  CHECK(div(i, i).dtype() == kFloat32);  // true division
  CHECK(div(i, i).to_vector<double>() == std::vector<double>{1.0, 1.0});
  CHECK((b + b).dtype() == kBool);  // bool + bool stays bool (logical or)
  CHECK((b + b).to_vector<double>() == std::vector<double>{1.0, 1.0});
  CHECK(sum(b).dtype() == kInt64);
  CHECK(sum(b).item<int64_t>() == 2);
  CHECK(sum(i).dtype() == kInt64);
  CHECK(exp(i).dtype() == kFloat32);
  CHECK(sqrt(i).dtype() == kFloat32);
  CHECK(neg(i).dtype() == kInt64);
  CHECK(abs(i).dtype() == kInt64);
  CHECK(pow(i, 2).dtype() == kInt64);
  CHECK(pow(i, 0.5).dtype() == kFloat32);
  CHECK(where(b, i, f).dtype() == kFloat32);
  CHECK(cat({i, f}).dtype() == kFloat32);
  CHECK(clamp(i, 0.5, std::nullopt).dtype() == kFloat32);
  CHECK(clamp(i, 0, std::nullopt).dtype() == kInt64);
  CHECK(matmul(tensor({1.0, 2.0, 3.0, 4.0}, {2, 2}), tensor({1.0, 2.0, 3.0, 4.0}, {2, 2})).dtype() == kFloat32);
  CHECK(matmul(tensor({1.0, 2.0}, kFloat32), tensor({1.0, 2.0}, kFloat64)).dtype() == kFloat64);
  CHECK(logical_and(i, f).dtype() == kBool);
  CHECK_THROWS_WITH(sub(b, b), Contains("sub") && Contains("bool"));
  CHECK_THROWS_WITH(neg(b), Contains("neg") && Contains("bool"));
}

TEST_CASE("in-place ops cast the result into the target's dtype when torch.can_cast allows it") {
  NoGradGuard ng;
  Tensor f32 = native::ones({2}, kFloat32);
  f32.add_(native::full({2}, 0.5, kFloat64));  // float64 -> float32: allowed, as in PyTorch
  CHECK(f32.dtype() == kFloat32);
  CHECK(f32.to_vector<double>() == std::vector<double>{1.5, 1.5});
  Tensor i = native::ones({2}, kInt64);
  i.add_(native::ones({2}, kBool));
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{2, 2});
  CHECK_THROWS_WITH(i.add_(native::ones({2}, kFloat32)), Contains("add_") && Contains("float32") && Contains("int64"));
  CHECK_THROWS_WITH(i.div_(native::ones({2}, kInt64)), Contains("div_") && Contains("int64"));
  Tensor bl = native::ones({2}, kBool);
  CHECK_THROWS_WITH(bl.add_(native::ones({2}, kInt64)), Contains("add_") && Contains("bool"));
  CHECK_THROWS_WITH(i.mul_(2.5), Contains("mul_"));
}

TEST_CASE("Scalar remembers its category") {
  CHECK(Scalar(true).dtype() == kBool);
  CHECK(Scalar(3).dtype() == kInt64);
  CHECK(Scalar(int64_t{1} << 40).to_int() == (int64_t{1} << 40));
  CHECK(Scalar(2.5f).dtype() == kFloat64);
  CHECK(Scalar(2.5).is_floating());
  CHECK(Scalar(2.9).to<int64_t>() == 2);
  CHECK(Scalar(7).to<double>() == 7.0);
  CHECK(Scalar(0.0).to<bool>() == false);
}
