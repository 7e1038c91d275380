// Rows of the every-device table (tests/support/every_device_ops.h, run by every_device_test.cpp):
// the special functions, the remaining elementwise arithmetic and the bitwise and integer ops of
// functions_special.h, their in-place forms included (on a clone, so gradients flow through them).
#include <wick/wick.h>

#include "support/every_device_ops.h"

using namespace wick;
using namespace wick::test::every_device;

namespace {

// `f` applied in place to a clone of the input (the gradient reaches the input through it).
template <Tensor& (*F)(Tensor&)>
OpCase inplace_unary(bool positive = false) {
  return unary(
      [](const Tensor& a) {
        Tensor c = a.clone();
        return F(c);
      },
      positive);
}
Tensor ints(std::vector<int64_t> v, Device d) { return idx(std::move(v), {2, 3}, d); }
OpCase integer_pair(std::function<Tensor(const Tensor&, const Tensor&)> f) {
  return values_only({[](Device d) {
                        return std::vector<Tensor>{ints({12, -7, 0, 9, -18, 5}, d), ints({18, 3, 0, -6, 4, -5}, d)};
                      },
                      [f](const std::vector<Tensor>& x) { return f(x[0], x[1]); },
                      {false, false},
                      {}});
}
Tensor small(const Tensor& a) { return mul(tanh(a), scalar_tensor(0.9, on(a.device()))); }  // in (-0.9, 0.9)

[[maybe_unused]] const bool registered = add_every_device_ops({
    {"digamma", unary([](const Tensor& a) { return digamma(a); }, true)},
    {"lgamma", unary([](const Tensor& a) { return lgamma(a); })},
    {"polygamma", unary([](const Tensor& a) { return add(polygamma(1, a), polygamma(3, a)); }, true)},
    {"erfinv", unary([](const Tensor& a) { return erfinv(small(a)); })},
    {"erfc", unary([](const Tensor& a) { return erfc(a); })},
    {"i0", unary([](const Tensor& a) { return i0(a); })},
    {"special_i1", unary([](const Tensor& a) { return special_i1(a); })},
    {"mvlgamma", unary([](const Tensor& a) { return mvlgamma(add(a, scalar_tensor(1.0, on(a.device()))), 3); }, true)},
    {"sinc", unary([](const Tensor& a) { return sinc(a); })},
    {"exp2", unary([](const Tensor& a) { return exp2(a); })},
    {"logaddexp2", binary([](const Tensor& a, const Tensor& b) { return logaddexp2(a, b); })},
    {"copysign", binary([](const Tensor& a, const Tensor& b) { return add(copysign(a, b), copysign(a, -2.0)); })},
    {"heaviside", values_only(binary([](const Tensor& a, const Tensor& b) { return heaviside(a, b); }))},
    {"signbit", values_only(unary([](const Tensor& a) { return signbit(a); }))},
    {"deg2rad", unary([](const Tensor& a) { return deg2rad(a); })},
    {"rad2deg", unary([](const Tensor& a) { return rad2deg(a); })},
    {"float_power", binary([](const Tensor& a, const Tensor& b) {
       return add(float_power(abs(a), b), add(float_power(a, 3), float_power(1.5, b)));
     })},
    {"true_divide",
     binary([](const Tensor& a, const Tensor& b) { return add(true_divide(a, b), true_divide(a, 4.0)); })},
    {"floor_divide", values_only(binary([](const Tensor& a, const Tensor& b) {
       return add(floor_divide(mul(a, scalar_tensor(10.0, on(a.device()))), b), floor_divide(a, 0.3));
     }))},
    {"frexp", unary([](const Tensor& a) {
       auto [m, e] = frexp(mul(a, scalar_tensor(100.0, on(a.device()))));
       return add(m, e.to(kFloat64));
     })},
    {"ldexp", binary([](const Tensor& a, const Tensor& b) { return ldexp(a, b); })},
    {"bitwise_and",
     integer_pair([](const Tensor& a, const Tensor& b) { return add(bitwise_and(a, b), bitwise_and(a, 6)); })},
    {"bitwise_or",
     integer_pair([](const Tensor& a, const Tensor& b) { return add(bitwise_or(a, b), bitwise_or(a, 6)); })},
    {"bitwise_xor",
     integer_pair([](const Tensor& a, const Tensor& b) { return add(bitwise_xor(a, b), bitwise_xor(a, 6)); })},
    {"bitwise_not", integer_pair([](const Tensor& a, const Tensor&) { return bitwise_not(a); })},
    {"logical_xor", integer_pair([](const Tensor& a, const Tensor& b) { return logical_xor(a, b); })},
    {"gcd", integer_pair([](const Tensor& a, const Tensor& b) { return gcd(a, b); })},
    {"lcm", integer_pair([](const Tensor& a, const Tensor& b) { return lcm(a, b); })},
    // The in-place forms.
    {"digamma_", inplace_unary<digamma_>(true)},
    {"lgamma_", inplace_unary<lgamma_>()},
    {"polygamma_", unary(
                       [](const Tensor& a) {
                         Tensor c = a.clone();
                         return polygamma_(c, 2);
                       },
                       true)},
    {"erfinv_", unary([](const Tensor& a) {
       Tensor c = small(a);
       return erfinv_(c);
     })},
    {"erfc_", inplace_unary<erfc_>()},
    {"i0_", inplace_unary<i0_>()},
    {"mvlgamma_", unary(
                      [](const Tensor& a) {
                        Tensor c = a.clone();
                        return mvlgamma_(c, 2);
                      },
                      true)},
    {"sinc_", inplace_unary<sinc_>()},
    {"exp2_", inplace_unary<exp2_>()},
    {"deg2rad_", inplace_unary<deg2rad_>()},
    {"rad2deg_", inplace_unary<rad2deg_>()},
    {"copysign_", binary([](const Tensor& a, const Tensor& b) {
       Tensor c = a.clone();
       return copysign_(c, b);
     })},
    {"heaviside_", values_only(binary([](const Tensor& a, const Tensor& b) {
       Tensor c = a.clone();
       return heaviside_(c, b);
     }))},
    {"float_power_", binary([](const Tensor& a, const Tensor& b) {
       Tensor c = abs(a);
       Tensor e = a.clone();
       return add(float_power_(c, b), float_power_(e, 2));
     })},
    {"true_divide_", binary([](const Tensor& a, const Tensor& b) {
       Tensor c = a.clone();
       return true_divide_(c, b);
     })},
    {"floor_divide_", values_only(binary([](const Tensor& a, const Tensor& b) {
       Tensor c = a.clone();
       return floor_divide_(c, b);
     }))},
    {"ldexp_", binary([](const Tensor& a, const Tensor& b) {
       Tensor c = a.clone();
       return ldexp_(c, b);
     })},
    {"bitwise_and_", integer_pair([](const Tensor& a, const Tensor& b) {
       Tensor c = a.clone();
       return bitwise_and_(c, b);
     })},
    {"bitwise_or_", integer_pair([](const Tensor& a, const Tensor& b) {
       Tensor c = a.clone();
       return bitwise_or_(c, b);
     })},
    {"bitwise_xor_", integer_pair([](const Tensor& a, const Tensor& b) {
       Tensor c = a.clone();
       return bitwise_xor_(c, b);
     })},
    {"bitwise_not_", integer_pair([](const Tensor& a, const Tensor&) {
       Tensor c = a.clone();
       return bitwise_not_(c);
     })},
    {"logical_xor_", integer_pair([](const Tensor& a, const Tensor& b) {
       Tensor c = a.clone();
       return logical_xor_(c, b);
     })},
    {"gcd_", integer_pair([](const Tensor& a, const Tensor& b) {
       Tensor c = a.clone();
       return gcd_(c, b);
     })},
    {"lcm_", integer_pair([](const Tensor& a, const Tensor& b) {
       Tensor c = a.clone();
       return lcm_(c, b);
     })},
});

}  // namespace
