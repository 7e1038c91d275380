#pragma once
// Checked arithmetic on sizes: element counts, byte counts and strides that cannot overflow.
//
// Note [Checked sizes]
// Every tensor that exists has sizes whose product (numel), whose contiguous strides (the
// products of max(size, 1) from the right) and whose byte count (numel * element size) all fit
// in int64. Factories (empty, empty_strided, full, ...), views that can grow the element count
// (expand, as_strided, view/reshape of an empty tensor) and loaders (safetensors, IDX) check
// this with the overflow-detecting builtins below before they allocate or build a TensorImpl, so
// numel(), nbytes() and stride arithmetic everywhere else can use plain int64 operations. An
// impossible size is a wick::ValueError that names the op and the shape, never a wrapped count,
// a zero-byte allocation or undefined behaviour. docs/hostile-input.md lists the limits.
#include <cstddef>
#include <cstdint>

#include "wick/core/dim_vector.h"

namespace wick {

/// a * b into *out; true when the exact result does not fit (then *out is unspecified).
template <class T>
[[nodiscard]] constexpr bool mul_overflow(T a, T b, T* out) {
  return __builtin_mul_overflow(a, b, out);
}
/// a + b into *out; true when the exact result does not fit (then *out is unspecified).
template <class T>
[[nodiscard]] constexpr bool add_overflow(T a, T b, T* out) {
  return __builtin_add_overflow(a, b, out);
}

/// The number of elements of `shape` (sizes must be >= 0). Throws wick::ValueError naming `op`
/// and the shape when the count, or any contiguous stride of the shape, overflows int64
/// (Note [Checked sizes]).
int64_t checked_numel(IntArrayRef shape, const char* op);

/// checked_numel(shape) * element_size bytes; throws wick::ValueError naming `op`, the shape
/// and the element size when the byte count overflows int64.
size_t checked_nbytes(IntArrayRef shape, size_t element_size, const char* op);

/// Whether `v` converts to int64 without undefined behaviour (finite, within range); the
/// conversion truncates toward zero.
constexpr bool double_fits_int64(double v) {
  // 2^63 is exactly representable; every double below it and >= -2^63 truncates into range.
  return v >= -9223372036854775808.0 && v < 9223372036854775808.0;  // false for NaN
}

/// Whether the integer `v` survives a round trip through double (|v| <= 2^53): kernels take
/// scalars as doubles (Note [Integer overflow and conversions], int_math.h).
constexpr bool int64_fits_double(int64_t v) {
  constexpr int64_t kExact = int64_t{1} << 53;
  return v >= -kExact && v <= kExact;
}

}  // namespace wick
