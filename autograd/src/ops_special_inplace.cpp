// The in-place forms of functions_special.h: each writes the out-of-place op's result into the
// tensor once every check has passed, recorded as Note [In-place ops] describes.
#include "op_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {
template <Tensor (*Fn)(const Tensor&)>
Tensor& unary_inplace(Tensor& a, const char* op) {
  return apply_inplace(a, nullptr, op, [](const Tensor& s, const Tensor&) { return Fn(s); });
}
template <Tensor (*Fn)(const Tensor&, const Tensor&)>
Tensor& binary_inplace(Tensor& a, const Tensor& b, const char* op) {
  return apply_inplace(a, &b, op, [](const Tensor& s, const Tensor& o) { return Fn(s, o); });
}
// float_power_ keeps float64 only: its result is always float64 (PyTorch refuses other bases).
void check_float_power_base(const Tensor& a) {
  WICK_CHECK(a.defined(), "float_power_: the tensor is undefined");
  WICK_CHECK_TYPE(a.dtype() == kFloat64,
                  "float_power_: the base has dtype {} (shape [{}]) but the operation's result requires dtype "
                  "float64; convert it first with .to(wick::kFloat64)",
                  a.dtype(), fmt::join(a.sizes(), ", "));
}
}  // namespace

Tensor& digamma_(Tensor& a) { return unary_inplace<digamma>(a, "digamma_"); }
Tensor& lgamma_(Tensor& a) { return unary_inplace<lgamma>(a, "lgamma_"); }
Tensor& polygamma_(Tensor& a, int64_t n) {
  return apply_inplace(a, nullptr, "polygamma_", [n](const Tensor& s, const Tensor&) { return polygamma(n, s); });
}
Tensor& erfinv_(Tensor& a) { return unary_inplace<erfinv>(a, "erfinv_"); }
Tensor& erfc_(Tensor& a) { return unary_inplace<erfc>(a, "erfc_"); }
Tensor& i0_(Tensor& a) { return unary_inplace<i0>(a, "i0_"); }
Tensor& mvlgamma_(Tensor& a, int64_t p) {
  return apply_inplace(a, nullptr, "mvlgamma_", [p](const Tensor& s, const Tensor&) { return mvlgamma(s, p); });
}
Tensor& sinc_(Tensor& a) { return unary_inplace<sinc>(a, "sinc_"); }
Tensor& exp2_(Tensor& a) { return unary_inplace<exp2>(a, "exp2_"); }
Tensor& copysign_(Tensor& a, const Tensor& b) {
  return binary_inplace<static_cast<Tensor (*)(const Tensor&, const Tensor&)>(copysign)>(a, b, "copysign_");
}
Tensor& heaviside_(Tensor& a, const Tensor& values) { return binary_inplace<heaviside>(a, values, "heaviside_"); }
Tensor& deg2rad_(Tensor& a) { return unary_inplace<deg2rad>(a, "deg2rad_"); }
Tensor& rad2deg_(Tensor& a) { return unary_inplace<rad2deg>(a, "rad2deg_"); }
Tensor& float_power_(Tensor& a, const Tensor& exponent) {
  check_float_power_base(a);
  return binary_inplace<static_cast<Tensor (*)(const Tensor&, const Tensor&)>(float_power)>(a, exponent,
                                                                                            "float_power_");
}
Tensor& float_power_(Tensor& a, Scalar exponent) {
  check_float_power_base(a);
  return apply_inplace(a, nullptr, "float_power_",
                       [exponent](const Tensor& s, const Tensor&) { return float_power(s, exponent); });
}
Tensor& true_divide_(Tensor& a, const Tensor& b) {
  return binary_inplace<static_cast<Tensor (*)(const Tensor&, const Tensor&)>(true_divide)>(a, b, "true_divide_");
}
Tensor& floor_divide_(Tensor& a, const Tensor& b) {
  return binary_inplace<static_cast<Tensor (*)(const Tensor&, const Tensor&)>(floor_divide)>(a, b, "floor_divide_");
}
Tensor& ldexp_(Tensor& a, const Tensor& b) { return binary_inplace<ldexp>(a, b, "ldexp_"); }
Tensor& bitwise_and_(Tensor& a, const Tensor& b) {
  return binary_inplace<static_cast<Tensor (*)(const Tensor&, const Tensor&)>(bitwise_and)>(a, b, "bitwise_and_");
}
Tensor& bitwise_or_(Tensor& a, const Tensor& b) {
  return binary_inplace<static_cast<Tensor (*)(const Tensor&, const Tensor&)>(bitwise_or)>(a, b, "bitwise_or_");
}
Tensor& bitwise_xor_(Tensor& a, const Tensor& b) {
  return binary_inplace<static_cast<Tensor (*)(const Tensor&, const Tensor&)>(bitwise_xor)>(a, b, "bitwise_xor_");
}
Tensor& bitwise_not_(Tensor& a) { return unary_inplace<bitwise_not>(a, "bitwise_not_"); }
Tensor& logical_xor_(Tensor& a, const Tensor& b) { return binary_inplace<logical_xor>(a, b, "logical_xor_"); }
Tensor& gcd_(Tensor& a, const Tensor& b) { return binary_inplace<gcd>(a, b, "gcd_"); }
Tensor& lcm_(Tensor& a, const Tensor& b) { return binary_inplace<lcm>(a, b, "lcm_"); }

}  // namespace wick
