// Tensor's op methods and operators (declared in core's tensor.h): thin forwards to the
// differentiable free functions.
#include "op_helpers.h"

namespace wick {

namespace {
Tensor st(Scalar s, const Tensor& like) {
  return native::scalar_tensor(s, native::result_type(like, s), like.device());
}
}  // namespace

Tensor Tensor::view(IntArrayRef s) const { return wick::view(*this, s); }
Tensor Tensor::reshape(IntArrayRef s) const { return wick::reshape(*this, s); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return wick::transpose(*this, a, b); }
Tensor Tensor::permute(IntArrayRef d) const { return wick::permute(*this, d); }
Tensor Tensor::t() const {
  WICK_CHECK(dim() <= 2, "t: expects a tensor with at most 2 dims, got shape [{}]; use transpose(d0, d1)",
             fmt::join(sizes(), ", "));
  return dim() < 2 ? *this : wick::transpose(*this, 0, 1);
}
Tensor Tensor::narrow(int64_t d, int64_t s, int64_t l) const { return wick::narrow(*this, d, s, l); }
Tensor Tensor::slice(int64_t d, std::optional<int64_t> s, std::optional<int64_t> e, int64_t step) const {
  return wick::slice(*this, d, s, e, step);
}
Tensor Tensor::select(int64_t d, int64_t i) const { return wick::select(*this, d, i); }
Tensor Tensor::expand(IntArrayRef s) const { return wick::expand(*this, s); }
Tensor Tensor::squeeze() const { return wick::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return wick::squeeze(*this, d); }
Tensor Tensor::unsqueeze(int64_t d) const { return wick::unsqueeze(*this, d); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return wick::flatten(*this, s, e); }
Tensor Tensor::contiguous() const { return wick::contiguous(*this); }
std::vector<Tensor> Tensor::split(int64_t s, int64_t d) const { return wick::split(*this, s, d); }
std::vector<Tensor> Tensor::chunk(int64_t c, int64_t d) const { return wick::chunk(*this, c, d); }

Tensor Tensor::to(Device d) const { return wick::to(*this, d, dtype()); }
Tensor Tensor::to(DType t) const { return wick::to(*this, device(), t); }
Tensor Tensor::to(Device d, DType t) const { return wick::to(*this, d, t); }
Tensor Tensor::clone() const { return wick::clone(*this); }

Tensor Tensor::add(const Tensor& o, Scalar alpha) const { return wick::add(*this, o, alpha); }
Tensor Tensor::add(Scalar o) const { return detail::scalar_op(BinaryOp::Add, *this, o); }
Tensor Tensor::sub(const Tensor& o, Scalar alpha) const { return wick::sub(*this, o, alpha); }
Tensor Tensor::sub(Scalar o) const { return detail::scalar_op(BinaryOp::Sub, *this, o); }
Tensor Tensor::mul(const Tensor& o) const { return wick::mul(*this, o); }
Tensor Tensor::mul(Scalar o) const { return detail::scalar_op(BinaryOp::Mul, *this, o); }
Tensor Tensor::div(const Tensor& o) const { return wick::div(*this, o); }
Tensor Tensor::div(Scalar o) const { return detail::scalar_op(BinaryOp::Div, *this, o); }
Tensor Tensor::pow(const Tensor& e) const { return wick::pow(*this, e); }
Tensor Tensor::pow(Scalar e) const { return wick::pow(*this, e); }
Tensor Tensor::maximum(const Tensor& o) const { return wick::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return wick::minimum(*this, o); }
Tensor Tensor::neg() const { return wick::neg(*this); }
Tensor Tensor::abs() const { return wick::abs(*this); }
Tensor Tensor::exp() const { return wick::exp(*this); }
Tensor Tensor::log() const { return wick::log(*this); }
Tensor Tensor::sqrt() const { return wick::sqrt(*this); }
Tensor Tensor::rsqrt() const { return wick::rsqrt(*this); }
Tensor Tensor::tanh() const { return wick::tanh(*this); }
Tensor Tensor::sigmoid() const { return wick::sigmoid(*this); }
Tensor Tensor::relu() const { return wick::relu(*this); }
Tensor Tensor::sin() const { return wick::sin(*this); }
Tensor Tensor::cos() const { return wick::cos(*this); }
Tensor Tensor::square() const { return wick::square(*this); }
Tensor Tensor::reciprocal() const { return wick::reciprocal(*this); }
Tensor Tensor::sign() const { return wick::sign(*this); }
Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const { return wick::clamp(*this, lo, hi); }
Tensor Tensor::eq(const Tensor& o) const { return wick::eq(*this, o); }
Tensor Tensor::ne(const Tensor& o) const { return wick::ne(*this, o); }
Tensor Tensor::lt(const Tensor& o) const { return wick::lt(*this, o); }
Tensor Tensor::le(const Tensor& o) const { return wick::le(*this, o); }
Tensor Tensor::gt(const Tensor& o) const { return wick::gt(*this, o); }
Tensor Tensor::ge(const Tensor& o) const { return wick::ge(*this, o); }
Tensor Tensor::eq(Scalar o) const { return native::binary(BinaryOp::Eq, *this, o); }
Tensor Tensor::ne(Scalar o) const { return native::binary(BinaryOp::Ne, *this, o); }
Tensor Tensor::lt(Scalar o) const { return native::binary(BinaryOp::Lt, *this, o); }
Tensor Tensor::le(Scalar o) const { return native::binary(BinaryOp::Le, *this, o); }
Tensor Tensor::gt(Scalar o) const { return native::binary(BinaryOp::Gt, *this, o); }
Tensor Tensor::ge(Scalar o) const { return native::binary(BinaryOp::Ge, *this, o); }
Tensor Tensor::sum() const { return wick::sum(*this); }
Tensor Tensor::sum(IntArrayRef d, bool k) const { return wick::sum(*this, d, k); }
Tensor Tensor::mean() const { return wick::mean(*this); }
Tensor Tensor::mean(IntArrayRef d, bool k) const { return wick::mean(*this, d, k); }
Tensor Tensor::amax(IntArrayRef d, bool k) const { return wick::amax(*this, d, k); }
Tensor Tensor::amin(IntArrayRef d, bool k) const { return wick::amin(*this, d, k); }
Tensor Tensor::argmax(int64_t d, bool k) const { return wick::argmax(*this, d, k); }
Tensor Tensor::argmin(int64_t d, bool k) const { return wick::argmin(*this, d, k); }
Tensor Tensor::var(IntArrayRef d, bool u, bool k) const { return wick::var(*this, d, u, k); }
Tensor Tensor::logsumexp(IntArrayRef d, bool k) const { return wick::logsumexp(*this, d, k); }
Tensor Tensor::matmul(const Tensor& o) const { return wick::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return wick::mm(*this, o); }
Tensor Tensor::softmax(int64_t d) const { return wick::softmax(*this, d); }
Tensor Tensor::log_softmax(int64_t d) const { return wick::log_softmax(*this, d); }
Tensor Tensor::index_select(int64_t d, const Tensor& i) const { return wick::index_select(*this, d, i); }
Tensor Tensor::gather(int64_t d, const Tensor& i) const { return wick::gather(*this, d, i); }
Tensor Tensor::scatter_add(int64_t d, const Tensor& i, const Tensor& s) const {
  return wick::scatter_add(*this, d, i, s);
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return a.add(b); }
Tensor operator-(const Tensor& a, Scalar b) { return a.sub(b); }
Tensor operator*(const Tensor& a, Scalar b) { return a.mul(b); }
Tensor operator/(const Tensor& a, Scalar b) { return a.div(b); }
Tensor operator+(Scalar a, const Tensor& b) { return b.add(a); }  // commutes, bit for bit
Tensor operator-(Scalar a, const Tensor& b) { return sub(st(a, b), b); }
Tensor operator*(Scalar a, const Tensor& b) { return b.mul(a); }  // commutes, bit for bit
Tensor operator/(Scalar a, const Tensor& b) { return div(st(a, b), b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
Tensor& operator+=(Tensor& a, Scalar b) { return a.add_(b); }
Tensor& operator*=(Tensor& a, Scalar b) { return a.mul_(b); }

Tensor Tensor::max() const { return wick::max(*this); }
Tensor Tensor::min() const { return wick::min(*this); }
Tensor Tensor::var() const { return wick::var(*this); }
Tensor Tensor::std() const { return wick::std(*this); }
Tensor Tensor::std(IntArrayRef d, bool unbiased, bool keepdim) const { return wick::std(*this, d, unbiased, keepdim); }
Tensor Tensor::norm(double p) const { return wick::norm(*this, p); }
Tensor Tensor::norm(double p, IntArrayRef d, bool keepdim) const { return wick::norm(*this, p, d, keepdim); }
Tensor Tensor::all() const { return wick::all(*this); }
Tensor Tensor::any() const { return wick::any(*this); }
Tensor Tensor::all(int64_t d, bool keepdim) const { return wick::all(*this, d, keepdim); }
Tensor Tensor::any(int64_t d, bool keepdim) const { return wick::any(*this, d, keepdim); }
Tensor Tensor::isnan() const { return wick::isnan(*this); }
Tensor Tensor::isinf() const { return wick::isinf(*this); }
Tensor Tensor::isfinite() const { return wick::isfinite(*this); }
bool Tensor::equal(const Tensor& o) const { return wick::equal(*this, o); }
bool Tensor::allclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
  return wick::allclose(*this, o, rtol, atol, equal_nan);
}
Tensor Tensor::cumsum(int64_t d) const { return wick::cumsum(*this, d); }
Tensor Tensor::masked_fill(const Tensor& mask, Scalar v) const { return wick::masked_fill(*this, mask, v); }
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& v) const { return wick::masked_fill(*this, mask, v); }
Tensor Tensor::tril(int64_t k) const { return wick::tril(*this, k); }
Tensor Tensor::triu(int64_t k) const { return wick::triu(*this, k); }
Tensor Tensor::bmm(const Tensor& o) const { return wick::bmm(*this, o); }
Tensor Tensor::dot(const Tensor& o) const { return wick::dot(*this, o); }
Tensor Tensor::outer(const Tensor& o) const { return wick::outer(*this, o); }
std::tuple<Tensor, Tensor> Tensor::sort(int64_t d, bool descending) const { return wick::sort(*this, d, descending); }
Tensor Tensor::argsort(int64_t d, bool descending) const { return wick::argsort(*this, d, descending); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t d, bool largest, bool sorted) const {
  return wick::topk(*this, k, d, largest, sorted);
}
Tensor Tensor::repeat(IntArrayRef r) const { return wick::repeat(*this, r); }
Tensor Tensor::flip(IntArrayRef d) const { return wick::flip(*this, d); }
Tensor Tensor::roll(IntArrayRef s, IntArrayRef d) const { return wick::roll(*this, s, d); }
Tensor Tensor::diag(int64_t k) const { return wick::diag(*this, k); }
std::vector<Tensor> Tensor::unbind(int64_t d) const { return wick::unbind(*this, d); }

Tensor Tensor::prod() const { return wick::prod(*this); }
Tensor Tensor::prod(int64_t d, bool keepdim) const { return wick::prod(*this, d, keepdim); }
Tensor Tensor::cumprod(int64_t d) const { return wick::cumprod(*this, d); }
std::tuple<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t d, bool keepdim) const {
  return wick::kthvalue(*this, k, d, keepdim);
}
Tensor Tensor::median() const { return wick::median(*this); }
std::tuple<Tensor, Tensor> Tensor::median(int64_t d, bool keepdim) const { return wick::median(*this, d, keepdim); }
std::tuple<Tensor, Tensor> Tensor::mode(int64_t d, bool keepdim) const { return wick::mode(*this, d, keepdim); }
Tensor Tensor::floor() const { return wick::floor(*this); }
Tensor Tensor::ceil() const { return wick::ceil(*this); }
Tensor Tensor::round() const { return wick::round(*this); }
Tensor Tensor::trunc() const { return wick::trunc(*this); }
Tensor Tensor::frac() const { return wick::frac(*this); }
Tensor Tensor::remainder(const Tensor& o) const { return wick::remainder(*this, o); }
Tensor Tensor::remainder(Scalar o) const { return wick::remainder(*this, o); }
Tensor Tensor::fmod(const Tensor& o) const { return wick::fmod(*this, o); }
Tensor Tensor::fmod(Scalar o) const { return wick::fmod(*this, o); }
Tensor Tensor::tan() const { return wick::tan(*this); }
Tensor Tensor::asin() const { return wick::asin(*this); }
Tensor Tensor::acos() const { return wick::acos(*this); }
Tensor Tensor::atan() const { return wick::atan(*this); }
Tensor Tensor::atan2(const Tensor& o) const { return wick::atan2(*this, o); }
Tensor Tensor::sinh() const { return wick::sinh(*this); }
Tensor Tensor::cosh() const { return wick::cosh(*this); }
Tensor Tensor::asinh() const { return wick::asinh(*this); }
Tensor Tensor::acosh() const { return wick::acosh(*this); }
Tensor Tensor::atanh() const { return wick::atanh(*this); }
Tensor Tensor::bincount(const Tensor& w, int64_t minlength) const { return wick::bincount(*this, w, minlength); }
Tensor Tensor::histc(int64_t bins, Scalar lo, Scalar hi) const { return wick::histc(*this, bins, lo, hi); }
Tensor Tensor::diag_embed(int64_t k, int64_t d1, int64_t d2) const { return wick::diag_embed(*this, k, d1, d2); }
Tensor Tensor::kron(const Tensor& o) const { return wick::kron(*this, o); }

}  // namespace wick
