#pragma once
// Whether a Scalar (a fill value, a clamp bound, a weight) fits the dtype it is converted to.
//
// Note [Scalar fits dtype]
// An op that converts a Scalar argument into the tensor's dtype before using it (fill_, full,
// full_like, clamp and clamp_, masked_fill(_), where with a scalar operand, index_fill(_),
// lerp(_) with a scalar weight, addcmul(_) and addcdiv(_) value, add(_) and sub(_) alpha, addmm,
// baddbmm, addmv(_), addr(_) and addbmm(_) beta and alpha; F::threshold, hardtanh, leaky_relu,
// elu and celu alpha, softplus beta and threshold, hardshrink and softshrink lambda, rrelu lower
// and upper, pad's value, hinge_embedding_loss's margin, normalize's eps) checks the conversion
// first, as PyTorch 1.13's checked conversion does, and refuses before anything is written:
//   float32  a finite value of magnitude above float32's largest finite value
//            (3.4028234663852886e38, compared exactly, as PyTorch does: a value just above it is
//            refused even though it would round to it) is a ValueError; inf and NaN pass.
//   int64    a floating value that is NaN, infinite or outside [-2^63, 2^63) is a ValueError
//            (PyTorch writes INT64_MIN for 2^63: wick refuses it, as the conversion would be
//            undefined); a fractional one truncates toward zero (2.5 -> 2).
//   float64, bool  everything passes (a bool is true for any nonzero value, NaN included).
// The dtype checked is the one the op converts the Scalar to: the result dtype after promotion
// (clamp of an int64 tensor with a floating bound checks float32; where(cond, int64, 1e300)
// checks float32; add(f32, f64, alpha) computes in float64 and add(f32, 0-d f64, alpha) in
// float32, add_ likewise), else the tensor's own.
// Tensor-scalar arithmetic (add, sub, mul, div, pow, fmod, remainder, comparisons with a Scalar
// operand), nan_to_num, renorm, linalg::pinv's atol, arange and the nn parameters PyTorch uses as
// plain numbers (dropout's p, layer_norm's and batch_norm's eps, glu, clip_grad_norm_'s max_norm,
// huber_loss's delta, smooth_l1_loss's beta, margin_ranking_loss's margin, cosine_similarity's
// and pairwise_distance's eps) do not check, as PyTorch does not: float32 + 1e300 is inf.
// native::full (which binary ops use for their 0-d operands) checks only the integer targets,
// where a conversion without the check would be undefined behaviour; native::fill_ checks every
// dtype, as fill_.
// docs/tensors.md, "Scalars that do not fit the dtype".
#include "wick/core/dim_vector.h"
#include "wick/core/dtype.h"
#include "wick/core/scalar.h"

namespace wick {

/// Whether `v` converts to `dtype` under Note [Scalar fits dtype]: float32 refuses a finite value
/// beyond its largest finite value, int64 a floating value that is NaN, inf or out of range;
/// float64 and bool take every value.
bool scalar_fits(Scalar v, DType dtype);

/// Throws wick::ValueError naming `op`, the argument `arg` ("value", "max", "weight", ...), its
/// value, `dtype` and the tensor's `shape` when `v` does not fit `dtype` (scalar_fits).
void check_scalar_fits(const char* op, const char* arg, Scalar v, DType dtype, IntArrayRef shape);

}  // namespace wick
