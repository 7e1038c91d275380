// F::embedding and the pieces it shares with F::embedding_bag (functional_embedding_bag.cpp):
// the argument checks, max_norm's in-place renormalization, and the row lookup whose gradient is
// masked at padding_idx or scaled by frequency.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "embedding_parts.h"
#include "shape_text.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/record.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn {
namespace detail {

void check_embedding_indices(const char* op, const Tensor& indices, const Tensor& weight) {
  WICK_CHECK(indices.defined() && weight.defined(), "{}: indices and weight must be defined", op);
  WICK_CHECK(weight.dim() == 2, "{}: weight must be 2-d [num_embeddings, embedding_dim], got {}", op,
             shape_str(weight));
  WICK_CHECK_TYPE(indices.dtype() == kInt64,
                  "{}: indices must be int64, got {} {}; convert them with .to(wick::kInt64)", op, indices.dtype(),
                  shape_str(indices));
  WICK_CHECK(indices.device() == weight.device(), "{}: indices are on {} but weight is on {}; move one of them", op,
             indices.device(), weight.device());
  if (indices.numel() == 0) return;
  const int64_t num = weight.size(0);
  const Tensor flat = native::reshape(indices, {-1});
  const int64_t lo = native::amin(flat, {}, false).item<int64_t>();
  const int64_t hi = native::amax(flat, {}, false).item<int64_t>();
  WICK_CHECK_INDEX(lo >= 0 && hi < num,
                   "{}: index {} is out of range for {} embeddings (weight {}; valid: 0..{}); every index must "
                   "name a row of the weight",
                   op, lo < 0 ? lo : hi, num, shape_str(weight), num - 1);
}

std::optional<int64_t> wrap_padding_idx(const char* op, std::optional<int64_t> padding_idx, int64_t num) {
  if (!padding_idx) return std::nullopt;
  const int64_t p = *padding_idx;
  WICK_CHECK_INDEX(p >= -num && p < num, "{}: padding_idx {} is out of range for {} embeddings (valid: {}..{})", op, p,
                   num, -num, num - 1);
  return p < 0 ? p + num : p;
}

void check_embedding_flags(const char* op, const Tensor& weight, bool sparse, std::optional<double> max_norm,
                           double norm_type) {
  WICK_CHECK_NOT_IMPLEMENTED(!sparse,
                             "{}: sparse = true asks for a sparse gradient of the weight, but wick has no sparse "
                             "tensors; use sparse = false (the default): the gradient is dense",
                             op);
  WICK_CHECK(!max_norm || *max_norm >= 0.0,
             "{}: max_norm must be a non-negative number, got {}; leave it unset for no renormalization", op,
             max_norm ? *max_norm : 0.0);
  WICK_CHECK(!std::isnan(norm_type), "{}: norm_type is NaN; give the order of the norm (2, 1, inf, ...)", op);
  WICK_CHECK_TYPE(!max_norm || is_floating(weight.dtype()),
                  "{}: max_norm renormalizes the weight's rows, which needs a floating weight, got {} {}", op,
                  weight.dtype(), shape_str(weight));
}

// Note [Embedding max_norm]
// PyTorch 1.13's torch.embedding_renorm_ (CPU) sorts the indices and, for each distinct one,
// computes norm = ||weight[i]||_p (as a double) and, when norm > max_norm, multiplies the row by
// scale = max_norm / (norm + 1e-7), in place and outside the graph. Here the same formula runs on
// whole tensors, so it works on every device with no new kernel: `hit` marks the rows the indices
// name (index_add of ones, so a repeated index is counted but scaled once), the norms of every row
// are computed, and the weight is multiplied in place by a per-row factor that is the scale where
// a named row exceeds max_norm and exactly 1 elsewhere (x * 1 == x, so other rows keep their
// bits). The scale is computed in float64, as PyTorch's, then cast to the weight's dtype. This
// reads the whole weight once (and writes it once when a row is rescaled), where PyTorch's kernel
// loops over the named rows only. The weight's version is bumped even when no row changes, as by
// PyTorch's in-place op, so "a saved tensor was modified" does not depend on the data. Callers
// check every argument before calling this, so an error never leaves the weight half-updated.
void embedding_renorm_(const Tensor& weight, const Tensor& indices, double max_norm, double norm_type) {
  NoGradGuard no_grad;
  const int64_t num = weight.size(0);
  const DType dt = weight.dtype();
  const Device dev = weight.device();
  if (indices.numel() > 0 && weight.size(1) > 0) {
    const Tensor flat = native::reshape(indices, {-1});
    const Tensor counts =
        native::index_add(native::zeros({num}, dt, dev), 0, flat, native::ones({flat.numel()}, dt, dev));
    const Tensor norms = native::to(wick::norm(weight, norm_type, {1}, false), dev, kFloat64);
    const Tensor rescale = native::binary(BinaryOp::LogicalAnd, native::binary(BinaryOp::Gt, counts, Scalar(0.0)),
                                          native::binary(BinaryOp::Gt, norms, Scalar(max_norm)));
    if (native::amax(native::to(rescale, dev, kInt64), {}, false).item<int64_t>() != 0) {
      const Tensor scale = native::binary(BinaryOp::Div, native::full({num}, Scalar(max_norm), kFloat64, dev),
                                          native::binary(BinaryOp::Add, norms, Scalar(1e-7)));
      const Tensor factor = native::where(rescale, scale, native::ones({num}, kFloat64, dev));
      native::binary_(BinaryOp::Mul, weight, native::unsqueeze(native::to(factor, dev, dt), 1));
      return;
    }
  }
  weight.bump_version();
}

Tensor embedding_rows(const Tensor& weight, const Tensor& flat, std::optional<int64_t> padding_idx,
                      bool scale_grad_by_freq, const Tensor& counted) {
  if (!padding_idx && !scale_grad_by_freq) return index_select(weight, 0, flat);
  Tensor rows = native::index_select(weight, 0, flat);
  if (!autograd::needs_grad({&weight})) return rows;
  const int64_t num = weight.size(0);
  const DType dt = weight.dtype();
  const Device dev = weight.device();
  Tensor keep, inv_count;  // [M, 1]: false at padding_idx; 1 / count of the row's index
  if (padding_idx) keep = native::unsqueeze(native::binary(BinaryOp::Ne, flat, Scalar(*padding_idx)), 1);
  if (scale_grad_by_freq) {
    const Tensor c = native::reshape(counted, {-1});
    const Tensor counts = native::index_add(native::zeros({num}, dt, dev), 0, c, native::ones({c.numel()}, dt, dev));
    inv_count = native::unsqueeze(native::unary(UnaryOp::Reciprocal, native::index_select(counts, 0, flat)), 1);
  }
  const DimVector weight_shape(weight.sizes());
  // The backward is written on differentiable ops (where, mul, index_add), so it is itself
  // differentiable: double backward works as through index_select.
  autograd::record_function(
      "EmbeddingBackward", {weight}, {rows},
      [weight_shape, keep, inv_count](const autograd::variable_list& grads,
                                      const autograd::variable_list& saved) -> autograd::variable_list {
        Tensor g = grads[0];
        if (inv_count.defined()) g = g * inv_count;
        if (keep.defined()) g = where(keep, g, Scalar(0.0));
        return {index_add(zeros(weight_shape, g.options()), 0, saved[0], g)};
      },
      {flat});
  return rows;
}

}  // namespace detail

namespace functional {

Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx) {
  return embedding(indices, weight, EmbeddingFuncOptions().padding_idx(padding_idx));
}

Tensor embedding(const Tensor& indices, const Tensor& weight, const EmbeddingFuncOptions& options) {
  constexpr const char* op = "embedding";
  detail::check_embedding_indices(op, indices, weight);
  detail::check_embedding_flags(op, weight, options.sparse(), options.max_norm(), options.norm_type());
  const std::optional<int64_t> padding_idx = detail::wrap_padding_idx(op, options.padding_idx(), weight.size(0));
  if (options.max_norm()) detail::embedding_renorm_(weight, indices, *options.max_norm(), options.norm_type());
  const Tensor flat = native::reshape(indices, {-1});
  const Tensor rows = detail::embedding_rows(weight, flat, padding_idx, options.scale_grad_by_freq(), flat);
  DimVector shape(indices.sizes());
  shape.push_back(weight.size(1));
  return view(rows, shape);
}

}  // namespace functional
}  // namespace wick::nn
