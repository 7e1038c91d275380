#pragma once
// The math of the reductions, written once for every backend (Note [Reduction rules]): the
// identity and combine of sum/prod/max/min, the (value, index) rule of argmax/argmin and the
// selection rule of max-pooling. No CUDA includes: core/src/cpu/ and cuda/src/reduce.cu,
// arg_reduce.cu and max_pool.cu all call these.
//
// Note [Reduction rules]
//  - sum, prod: IEEE, accumulated in accumulate_type_t<T> (float32 in double). Identity 0, 1.
//    int64 wraps modulo 2^64 (Note [Integer overflow and conversions], int_math.h).
//  - max, min: NaN propagates (a NaN operand wins, and once the running value is NaN every
//    comparison keeps it). Identity -inf / +inf, or the type's lowest / max without infinity.
//  - argmax, argmin (arg_take): among (value, index) pairs a NaN beats every number and the
//    smaller index wins among NaNs and among equal values: the first NaN if there is one, else
//    the first extremum, as PyTorch. The rule is associative and commutative, so a parallel tree
//    (the CUDA warp) returns what the sequential scan returns.
//  - max-pool (pool_take): scanned in window order, a later value replaces the best when it is
//    greater or NaN: the first maximum, or the last NaN, as PyTorch's max_pool2d.
#include <cstdint>
#include <limits>

#include "wick/core/host_device.h"
#include "wick/core/int_math.h"

namespace wick {

enum class ReduceOp : int8_t { Sum, Prod, Max, Min };
enum class ArgReduceOp : int8_t { ArgMax, ArgMin };

namespace math {

/// Identity and combine of reduction `Op` over accumulator type A (Note [Reduction rules]).
template <typename A, ReduceOp Op>
struct ReduceRule {
  WICK_HOST_DEVICE static A identity() {
    if constexpr (Op == ReduceOp::Sum) {
      return A(0);
    } else if constexpr (Op == ReduceOp::Prod) {
      return A(1);
    } else if constexpr (Op == ReduceOp::Max) {
      return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::lowest();
    } else {
      return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity() : std::numeric_limits<A>::max();
    }
  }
  /// r: the running value; v: the next one.
  WICK_HOST_DEVICE static A combine(A r, A v) {
    if constexpr (Op == ReduceOp::Sum) {
      return wrapping_add(r, v);  // int64 wraps (Note [Integer overflow and conversions])
    } else if constexpr (Op == ReduceOp::Prod) {
      return wrapping_mul(r, v);
    } else if constexpr (Op == ReduceOp::Max) {
      return (v != v || v > r) ? v : r;
    } else {
      return (v != v || v < r) ? v : r;
    }
  }
};

/// Whether (v, i) beats the best so far (bv, bi) for argmax (IsMax) or argmin: a NaN beats a
/// number, and the smaller index wins among NaNs and among equal values (Note [Reduction rules]).
template <typename T, bool IsMax>
WICK_HOST_DEVICE bool arg_take(T bv, int64_t bi, T v, int64_t i) {
  const bool bn = bv != bv, vn = v != v;
  if (bn || vn) return (bn && vn) ? i < bi : vn;
  if constexpr (IsMax) {
    return v > bv || (v == bv && i < bi);
  } else {
    return v < bv || (v == bv && i < bi);
  }
}

/// arg_take for a scan in increasing index order (i > bi always), without the index compare:
/// true exactly when arg_take would be (tests check the two agree on every case).
template <typename T, bool IsMax>
WICK_HOST_DEVICE bool arg_take_later(T bv, T v) {
  if constexpr (IsMax) {
    return bv == bv && (v > bv || v != v);
  } else {
    return bv == bv && (v < bv || v != v);
  }
}

/// Max-pool selection, scanning a window in order: whether v replaces the best b (greater, or
/// NaN; Note [Reduction rules]).
template <typename T>
WICK_HOST_DEVICE bool pool_take(T b, T v) {
  return (v > b) | (v != v);
}

}  // namespace math
}  // namespace wick
