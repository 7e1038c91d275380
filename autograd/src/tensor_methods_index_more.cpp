// Tensor's methods for the ops of wick/autograd/functions_index_more.h and their in-place forms
// (Note [In-place ops] in tensor_inplace.cpp, through detail::inplace_apply).
#include "inplace_apply.h"
#include "op_helpers.h"
#include "wick/core/scalar_fit.h"

namespace wick {

using TL = std::vector<Tensor>;

namespace {
// addcmul_/addcdiv_'s value is converted to the operands' promoted dtype: it must fit, checked
// before anything is written (Note [Scalar fits dtype]); undefined operands are the op's to refuse.
void check_value_fits(const char* op, const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value) {
  if (!self.defined() || !t1.defined() || !t2.defined()) return;
  check_scalar_fits(op, "value", value, promote_types(self.dtype(), promote_types(t1.dtype(), t2.dtype())),
                    self.sizes());
}

// addbmm_'s, addmv_'s and addr_'s beta and alpha are converted to the operands' promoted dtype:
// they must fit it, checked before anything is written (Note [Scalar fits dtype]).
void check_beta_alpha_fit(const char* op, const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar beta,
                          Scalar alpha) {
  if (!self.defined() || !t1.defined() || !t2.defined()) return;
  const DType t = promote_types(self.dtype(), promote_types(t1.dtype(), t2.dtype()));
  check_scalar_fits(op, "beta", beta, t, self.sizes());
  check_scalar_fits(op, "alpha", alpha, t, self.sizes());
}
}  // namespace

Tensor Tensor::index_copy(int64_t dim, const Tensor& index, const Tensor& source) const {
  return wick::index_copy(*this, dim, index, source);
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, Scalar value) const {
  return wick::index_fill(*this, dim, index, value);
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, const Tensor& value) const {
  return wick::index_fill(*this, dim, index, value);
}
Tensor Tensor::index_reduce(int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                            bool include_self) const {
  return wick::index_reduce(*this, dim, index, source, reduce, include_self);
}
Tensor Tensor::put(const Tensor& index, const Tensor& source, bool accumulate) const {
  return wick::put(*this, index, source, accumulate);
}
Tensor Tensor::addcmul(const Tensor& tensor1, const Tensor& tensor2, Scalar value) const {
  return wick::addcmul(*this, tensor1, tensor2, value);
}
Tensor Tensor::addcdiv(const Tensor& tensor1, const Tensor& tensor2, Scalar value) const {
  return wick::addcdiv(*this, tensor1, tensor2, value);
}

Tensor& Tensor::index_copy_(int64_t dim, const Tensor& index, const Tensor& source) {
  return detail::inplace_apply(*this, {source}, "index_copy_",
                               [&](const Tensor& s, const TL& o) { return wick::index_copy(s, dim, index, o[0]); });
}
Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, Scalar value) {
  if (defined()) check_scalar_fits("index_fill_", "value", value, dtype(), sizes());  // Note [Scalar fits dtype]
  return detail::inplace_apply(*this, {}, "index_fill_",
                               [&](const Tensor& s, const TL&) { return wick::index_fill(s, dim, index, value); });
}
Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, const Tensor& value) {
  return detail::inplace_apply(*this, {value}, "index_fill_",
                               [&](const Tensor& s, const TL& o) { return wick::index_fill(s, dim, index, o[0]); });
}
Tensor& Tensor::index_reduce_(int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                              bool include_self) {
  return detail::inplace_apply(*this, {source}, "index_reduce_", [&](const Tensor& s, const TL& o) {
    return wick::index_reduce(s, dim, index, o[0], reduce, include_self);
  });
}
Tensor& Tensor::put_(const Tensor& index, const Tensor& source, bool accumulate) {
  return detail::inplace_apply(*this, {source}, "put_",
                               [&](const Tensor& s, const TL& o) { return wick::put(s, index, o[0], accumulate); });
}
Tensor& Tensor::addcmul_(const Tensor& tensor1, const Tensor& tensor2, Scalar value) {
  check_value_fits("addcmul_", *this, tensor1, tensor2, value);
  return detail::inplace_apply(*this, {tensor1, tensor2}, "addcmul_",
                               [&](const Tensor& s, const TL& o) { return wick::addcmul(s, o[0], o[1], value); });
}
Tensor& Tensor::addcdiv_(const Tensor& tensor1, const Tensor& tensor2, Scalar value) {
  check_value_fits("addcdiv_", *this, tensor1, tensor2, value);
  return detail::inplace_apply(*this, {tensor1, tensor2}, "addcdiv_",
                               [&](const Tensor& s, const TL& o) { return wick::addcdiv(s, o[0], o[1], value); });
}
Tensor& Tensor::addbmm_(const Tensor& batch1, const Tensor& batch2, Scalar beta, Scalar alpha) {
  check_beta_alpha_fit("addbmm_", *this, batch1, batch2, beta, alpha);
  return detail::inplace_apply(*this, {batch1, batch2}, "addbmm_",
                               [&](const Tensor& s, const TL& o) { return wick::addbmm(s, o[0], o[1], beta, alpha); });
}
Tensor& Tensor::addmv_(const Tensor& mat, const Tensor& vec, Scalar beta, Scalar alpha) {
  check_beta_alpha_fit("addmv_", *this, mat, vec, beta, alpha);
  return detail::inplace_apply(*this, {mat, vec}, "addmv_",
                               [&](const Tensor& s, const TL& o) { return wick::addmv(s, o[0], o[1], beta, alpha); });
}
Tensor& Tensor::addr_(const Tensor& vec1, const Tensor& vec2, Scalar beta, Scalar alpha) {
  check_beta_alpha_fit("addr_", *this, vec1, vec2, beta, alpha);
  return detail::inplace_apply(*this, {vec1, vec2}, "addr_",
                               [&](const Tensor& s, const TL& o) { return wick::addr(s, o[0], o[1], beta, alpha); });
}

Tensor Tensor::argwhere() const { return wick::argwhere(*this); }
Tensor Tensor::diagflat(int64_t offset) const { return wick::diagflat(*this, offset); }
Tensor Tensor::addbmm(const Tensor& batch1, const Tensor& batch2, Scalar beta, Scalar alpha) const {
  return wick::addbmm(*this, batch1, batch2, beta, alpha);
}
Tensor Tensor::addmv(const Tensor& mat, const Tensor& vec, Scalar beta, Scalar alpha) const {
  return wick::addmv(*this, mat, vec, beta, alpha);
}
Tensor Tensor::addr(const Tensor& vec1, const Tensor& vec2, Scalar beta, Scalar alpha) const {
  return wick::addr(*this, vec1, vec2, beta, alpha);
}
Tensor Tensor::ger(const Tensor& vec2) const { return wick::ger(*this, vec2); }
Tensor Tensor::vdot(const Tensor& other) const { return wick::vdot(*this, other); }
Tensor Tensor::logdet() const { return wick::logdet(*this); }

}  // namespace wick
