#pragma once
// Internal: the checks and the reduction that the losses of functional_loss_more.h share.
#include "shape_text.h"
#include "wick/core/error.h"
#include "wick/nn/functional_loss.h"

namespace wick::nn::detail {

/// The unreduced per-sample (or per-element) loss reduced as r says (kNone, kMean or kSum; the
/// caller has checked r).
inline Tensor reduce_loss(const Tensor& loss, Reduction r) {
  if (r == Reduction::Sum) return sum(loss);
  if (r == Reduction::Mean) return mean(loss);
  return loss;
}

/// ValueError naming `op` and `name` unless t is defined.
inline void check_defined_arg(const char* op, const Tensor& t, const char* name) {
  WICK_CHECK(t.defined(), "{}: {} must be a defined tensor", op, name);
}

/// TypeError unless t is float32 or float64.
inline void check_floating_arg(const char* op, const Tensor& t, const char* name) {
  WICK_CHECK_TYPE(t.is_floating_point(), "{}: {} must be float32 or float64, got {}", op, name, t.dtype());
}

/// `other` has `input`'s dtype (TypeError) and device (ValueError).
inline void check_same_kind(const char* op, const Tensor& input, const char* input_name, const Tensor& other,
                            const char* other_name) {
  WICK_CHECK_TYPE(other.dtype() == input.dtype(), "{}: {} is {} but {} is {}; convert one with .to({})", op, other_name,
                  other.dtype(), input_name, input.dtype(), input.dtype());
  WICK_CHECK(other.device() == input.device(), "{}: {} is on {} but {} is on {}; move one with .to()", op, other_name,
             other.device(), input_name, input.device());
}

/// A class-index target: int64 (TypeError) on input's device (ValueError).
inline void check_index_target(const char* op, const Tensor& input, const Tensor& target) {
  WICK_CHECK_TYPE(target.dtype() == kInt64,
                  "{}: target must hold int64 class indices, got {}; convert with .to(kInt64)", op, target.dtype());
  WICK_CHECK(target.device() == input.device(), "{}: target is on {} but input is on {}; move one with .to()", op,
             target.device(), input.device());
}

/// input [N, C], [C] or 0-d with C > 0, as PyTorch's multi-margin losses take it (ValueError).
inline void check_margin_input(const char* op, const Tensor& input) {
  WICK_CHECK((input.dim() == 2 && input.size(1) != 0) || (input.dim() == 1 && input.size(0) != 0) || input.dim() == 0,
             "{}: input must be a non-empty vector [C] or matrix [N, C] (N may be 0), got {}", op, shape_str(input));
}

}  // namespace wick::nn::detail
