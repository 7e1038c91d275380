// Tensor's methods for the special functions, elementwise, bitwise and statistics ops
// (core/include/wick/core/tensor_methods_special.inc): each calls the free function of the same
// name with this tensor first (wick/autograd/functions_special.h, functions_stats.h).
#include "wick/autograd/functions.h"

namespace wick {

Tensor Tensor::digamma() const { return wick::digamma(*this); }
Tensor Tensor::lgamma() const { return wick::lgamma(*this); }
Tensor Tensor::polygamma(int64_t n) const { return wick::polygamma(n, *this); }
Tensor Tensor::erfinv() const { return wick::erfinv(*this); }
Tensor Tensor::erfc() const { return wick::erfc(*this); }
Tensor Tensor::i0() const { return wick::i0(*this); }
Tensor Tensor::mvlgamma(int64_t p) const { return wick::mvlgamma(*this, p); }
Tensor Tensor::sinc() const { return wick::sinc(*this); }
Tensor Tensor::exp2() const { return wick::exp2(*this); }
Tensor Tensor::logaddexp2(const Tensor& o) const { return wick::logaddexp2(*this, o); }
Tensor Tensor::copysign(const Tensor& o) const { return wick::copysign(*this, o); }
Tensor Tensor::copysign(Scalar o) const { return wick::copysign(*this, o); }
Tensor Tensor::heaviside(const Tensor& values) const { return wick::heaviside(*this, values); }
Tensor Tensor::signbit() const { return wick::signbit(*this); }
Tensor Tensor::deg2rad() const { return wick::deg2rad(*this); }
Tensor Tensor::rad2deg() const { return wick::rad2deg(*this); }
Tensor Tensor::float_power(const Tensor& exponent) const { return wick::float_power(*this, exponent); }
Tensor Tensor::float_power(Scalar exponent) const { return wick::float_power(*this, exponent); }
Tensor Tensor::true_divide(const Tensor& o) const { return wick::true_divide(*this, o); }
Tensor Tensor::true_divide(Scalar o) const { return wick::true_divide(*this, o); }
Tensor Tensor::floor_divide(const Tensor& o) const { return wick::floor_divide(*this, o); }
Tensor Tensor::floor_divide(Scalar o) const { return wick::floor_divide(*this, o); }
std::tuple<Tensor, Tensor> Tensor::frexp() const { return wick::frexp(*this); }
Tensor Tensor::ldexp(const Tensor& o) const { return wick::ldexp(*this, o); }
Tensor Tensor::bitwise_and(const Tensor& o) const { return wick::bitwise_and(*this, o); }
Tensor Tensor::bitwise_and(Scalar o) const { return wick::bitwise_and(*this, o); }
Tensor Tensor::bitwise_or(const Tensor& o) const { return wick::bitwise_or(*this, o); }
Tensor Tensor::bitwise_or(Scalar o) const { return wick::bitwise_or(*this, o); }
Tensor Tensor::bitwise_xor(const Tensor& o) const { return wick::bitwise_xor(*this, o); }
Tensor Tensor::bitwise_xor(Scalar o) const { return wick::bitwise_xor(*this, o); }
Tensor Tensor::bitwise_not() const { return wick::bitwise_not(*this); }
Tensor Tensor::logical_xor(const Tensor& o) const { return wick::logical_xor(*this, o); }
Tensor Tensor::gcd(const Tensor& o) const { return wick::gcd(*this, o); }
Tensor Tensor::lcm(const Tensor& o) const { return wick::lcm(*this, o); }
Tensor& Tensor::digamma_() { return wick::digamma_(*this); }
Tensor& Tensor::lgamma_() { return wick::lgamma_(*this); }
Tensor& Tensor::polygamma_(int64_t n) { return wick::polygamma_(*this, n); }
Tensor& Tensor::erfinv_() { return wick::erfinv_(*this); }
Tensor& Tensor::erfc_() { return wick::erfc_(*this); }
Tensor& Tensor::i0_() { return wick::i0_(*this); }
Tensor& Tensor::mvlgamma_(int64_t p) { return wick::mvlgamma_(*this, p); }
Tensor& Tensor::sinc_() { return wick::sinc_(*this); }
Tensor& Tensor::exp2_() { return wick::exp2_(*this); }
Tensor& Tensor::copysign_(const Tensor& o) { return wick::copysign_(*this, o); }
Tensor& Tensor::heaviside_(const Tensor& values) { return wick::heaviside_(*this, values); }
Tensor& Tensor::deg2rad_() { return wick::deg2rad_(*this); }
Tensor& Tensor::rad2deg_() { return wick::rad2deg_(*this); }
Tensor& Tensor::float_power_(const Tensor& exponent) { return wick::float_power_(*this, exponent); }
Tensor& Tensor::float_power_(Scalar exponent) { return wick::float_power_(*this, exponent); }
Tensor& Tensor::true_divide_(const Tensor& o) { return wick::true_divide_(*this, o); }
Tensor& Tensor::floor_divide_(const Tensor& o) { return wick::floor_divide_(*this, o); }
Tensor& Tensor::ldexp_(const Tensor& o) { return wick::ldexp_(*this, o); }
Tensor& Tensor::bitwise_and_(const Tensor& o) { return wick::bitwise_and_(*this, o); }
Tensor& Tensor::bitwise_or_(const Tensor& o) { return wick::bitwise_or_(*this, o); }
Tensor& Tensor::bitwise_xor_(const Tensor& o) { return wick::bitwise_xor_(*this, o); }
Tensor& Tensor::bitwise_not_() { return wick::bitwise_not_(*this); }
Tensor& Tensor::logical_xor_(const Tensor& o) { return wick::logical_xor_(*this, o); }
Tensor& Tensor::gcd_(const Tensor& o) { return wick::gcd_(*this, o); }
Tensor& Tensor::lcm_(const Tensor& o) { return wick::lcm_(*this, o); }
Tensor Tensor::nansum(IntArrayRef dims, bool keepdim, std::optional<DType> dtype) const {
  return wick::nansum(*this, dims, keepdim, dtype);
}
Tensor Tensor::nanmean(IntArrayRef dims, bool keepdim, std::optional<DType> dtype) const {
  return wick::nanmean(*this, dims, keepdim, dtype);
}
Tensor Tensor::nanmedian() const { return wick::nanmedian(*this); }
std::tuple<Tensor, Tensor> Tensor::nanmedian(int64_t dim, bool keepdim) const {
  return wick::nanmedian(*this, dim, keepdim);
}
Tensor Tensor::quantile(double q, std::optional<int64_t> dim, bool keepdim, std::string_view interpolation) const {
  return wick::quantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::quantile(const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                        std::string_view interpolation) const {
  return wick::quantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::nanquantile(double q, std::optional<int64_t> dim, bool keepdim, std::string_view interpolation) const {
  return wick::nanquantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::nanquantile(const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                           std::string_view interpolation) const {
  return wick::nanquantile(*this, q, dim, keepdim, interpolation);
}
std::tuple<Tensor, Tensor> Tensor::aminmax(std::optional<int64_t> dim, bool keepdim) const {
  return wick::aminmax(*this, dim, keepdim);
}
Tensor Tensor::count_nonzero(IntArrayRef dims) const { return wick::count_nonzero(*this, dims); }
Tensor Tensor::cov(int64_t correction, const Tensor& fweights, const Tensor& aweights) const {
  return wick::cov(*this, correction, fweights, aweights);
}
Tensor Tensor::corrcoef() const { return wick::corrcoef(*this); }

}  // namespace wick
