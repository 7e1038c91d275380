// F::cosine_similarity and F::pairwise_distance, composed of differentiable ops, with PyTorch
// 1.13's eps rules (at::cosine_similarity, at::pairwise_distance).
#include <algorithm>

#include "shape_text.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
// Both inputs, broadcast to one shape, after the checks every op here shares.
void broadcast_pair(const char* op, const Tensor& x1, const Tensor& x2, Tensor& a, Tensor& b) {
  WICK_CHECK(x1.defined() && x2.defined(), "{}: an input is undefined", op);
  WICK_CHECK_TYPE(x1.dtype() == x2.dtype(), "{}: x1 ({}) and x2 ({}) must have one dtype", op, x1.dtype(), x2.dtype());
  dispatch_floating(x1.dtype(), op, []<typename T>() {});
  const auto shape = native::broadcast_shapes(x1.sizes(), x2.sizes(), op);
  a = expand(x1, shape);
  b = expand(x2, shape);
}
}  // namespace

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& options) {
  Tensor a, b;
  broadcast_pair("cosine_similarity", x1, x2, a, b);
  const int64_t r = a.dim();
  int64_t dim = options.dim();
  WICK_CHECK(dim >= -std::max<int64_t>(r, 1) && dim < std::max<int64_t>(r, 1),
             "cosine_similarity: dim {} is out of range for the broadcast shape of x1 {} and x2 {}", dim,
             detail::shape_str(x1), detail::shape_str(x2));
  WICK_CHECK(r >= 1, "cosine_similarity: x1 {} and x2 {} are 0-d; give vectors", detail::shape_str(x1),
             detail::shape_str(x2));
  if (dim < 0) dim += r;
  const double eps = options.eps();
  // PyTorch 1.13 clamps each squared norm at eps^2 in place under no_grad, then divides by its
  // root: the value is max(|x|, eps), but the gradient reaches x through the unclamped sum of
  // squares. A detached correction gives both.
  auto clamped_norm = [&](const Tensor& t) {
    const Tensor s = sum(mul(t, t), {dim}, true);
    return sqrt(add(s, sub(clamp(s, eps * eps, std::nullopt), s).detach()));
  };
  return sum(mul(div(a, clamped_norm(a)), div(b, clamped_norm(b))), {dim});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& options) {
  Tensor a, b;
  broadcast_pair("pairwise_distance", x1, x2, a, b);
  WICK_CHECK(a.dim() >= 1, "pairwise_distance: x1 {} and x2 {} are 0-d; give vectors", detail::shape_str(x1),
             detail::shape_str(x2));
  return norm(sub(a, b) + options.eps(), options.p(), {a.dim() - 1}, options.keepdim());
}

}  // namespace wick::nn::functional
