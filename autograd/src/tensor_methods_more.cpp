// Tensor methods of the scans, math, selection and scattered writes: each calls the free function
// of the same name (wick/autograd/functions.h). Their in-place forms are in tensor_inplace.cpp.
#include "wick/autograd/functions.h"

namespace wick {

Tensor Tensor::logcumsumexp(int64_t dim) const { return wick::logcumsumexp(*this, dim); }
std::tuple<Tensor, Tensor> Tensor::cummax(int64_t dim) const { return wick::cummax(*this, dim); }
std::tuple<Tensor, Tensor> Tensor::cummin(int64_t dim) const { return wick::cummin(*this, dim); }
Tensor Tensor::renorm(double p, int64_t dim, double maxnorm) const { return wick::renorm(*this, p, dim, maxnorm); }
Tensor Tensor::nan_to_num(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) const {
  return wick::nan_to_num(*this, nan, posinf, neginf);
}
Tensor Tensor::logit(std::optional<double> eps) const { return wick::logit(*this, eps); }
Tensor Tensor::xlogy(const Tensor& y) const { return wick::xlogy(*this, y); }
Tensor Tensor::xlogy(Scalar y) const { return wick::xlogy(*this, y); }
Tensor Tensor::lerp(const Tensor& end, Scalar weight) const { return wick::lerp(*this, end, weight); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const { return wick::lerp(*this, end, weight); }
Tensor Tensor::hypot(const Tensor& o) const { return wick::hypot(*this, o); }
Tensor Tensor::rot90(int64_t k, IntArrayRef dims) const { return wick::rot90(*this, k, dims); }
Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim,
                                 std::optional<int64_t> output_size) const {
  return wick::repeat_interleave(*this, repeats, dim, output_size);
}
Tensor Tensor::repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim,
                                 std::optional<int64_t> output_size) const {
  return wick::repeat_interleave(*this, repeats, dim, output_size);
}
Tensor Tensor::tile(IntArrayRef dims) const { return wick::tile(*this, dims); }
Tensor Tensor::masked_select(const Tensor& mask) const { return wick::masked_select(*this, mask); }
Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<int64_t> dim) const {
  return wick::take_along_dim(*this, indices, dim);
}
Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                              bool include_self) const {
  return wick::scatter_reduce(*this, dim, index, src, reduce, include_self);
}
Tensor Tensor::index_put(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) const {
  return wick::index_put(*this, indices, values, accumulate);
}

}  // namespace wick
