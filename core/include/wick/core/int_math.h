#pragma once
// Integer arithmetic and floating-to-integer conversion without undefined behaviour, written
// once for the CPU loops and the CUDA kernels (Note [Math written once], docs/cuda.md).
//
// Note [Integer overflow and conversions]
// * int64 add, sub, mul, neg, abs, square, pow, sum, prod and cumsum wrap modulo 2^64, as
//   PyTorch's do on every machine it runs on. C++ leaves signed overflow undefined, so these
//   compute in uint64 and convert back (modular since C++20).
// * An integer power with a negative exponent follows PyTorch's integer pow: 1 for base 1, +1
//   or -1 for base -1 (even or odd exponent), else 0. A negative *scalar* exponent with an
//   integer tensor is refused by the front-end, as PyTorch refuses it ("Integers to negative
//   integer powers are not allowed").
// * A floating value converts to int64 by truncation toward zero; NaN gives 0, and a value
//   outside int64's range saturates to its min or max. That is what a CUDA GPU's conversion
//   instruction does; an x86 CPU's gives INT64_MIN for all three, and C++ leaves them
//   undefined, so without this rule the two backends disagreed. To bool: nonzero (NaN too) is
//   true, as C++ defines.
// * A scalar reaches the kernels as a double (Backend::fill, the binary_scalar stub), exact for
//   integers up to 2^53. The front-ends send larger integers another way (native_factory.cpp's
//   full, native_elementwise.cpp's takes_scalar_kernel), so no integer is rounded.
#include <cstdint>
#include <type_traits>

#include "wick/core/host_device.h"

namespace wick::math {

/// True for the integer types whose overflow C++ leaves undefined (int64; not bool).
template <typename T>
inline constexpr bool is_wrapping_int_v = std::is_integral_v<T>&& std::is_signed_v<T>;

/// a + b, wrapping modulo 2^bits for signed integers; plain + otherwise.
template <typename T>
WICK_HOST_DEVICE T wrapping_add(T a, T b) {
  if constexpr (is_wrapping_int_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return static_cast<T>(a + b);
  }
}

/// a - b, wrapping as wrapping_add.
template <typename T>
WICK_HOST_DEVICE T wrapping_sub(T a, T b) {
  if constexpr (is_wrapping_int_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return static_cast<T>(a - b);
  }
}

/// a * b, wrapping as wrapping_add.
template <typename T>
WICK_HOST_DEVICE T wrapping_mul(T a, T b) {
  if constexpr (is_wrapping_int_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return static_cast<T>(a * b);
  }
}

/// -x, wrapping (the most negative value is its own negation).
template <typename T>
WICK_HOST_DEVICE T wrapping_neg(T x) {
  if constexpr (is_wrapping_int_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U(0) - static_cast<U>(x));
  } else {
    return static_cast<T>(-x);
  }
}

/// base ** exp for int64, PyTorch's integer rule (Note [Integer overflow and conversions]):
/// exact up to wrapping; a negative exponent gives 1 (base 1), +-1 (base -1) or 0.
WICK_HOST_DEVICE int64_t int_pow(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base), e = static_cast<uint64_t>(exp);
  while (e != 0) {  // square and multiply: at most 63 rounds
    if (e & 1) result *= b;
    e >>= 1;
    if (e != 0) b *= b;
  }
  return static_cast<int64_t>(result);
}

/// static_cast<D>(v), except that a floating v converted to a signed integer type truncates
/// toward zero with NaN -> 0 and out-of-range values saturated (Note [Integer overflow and
/// conversions]).
template <typename D, typename S>
WICK_HOST_DEVICE D convert(S v) {
  if constexpr (std::is_floating_point_v<S> && is_wrapping_int_v<D>) {
    using U = std::make_unsigned_t<D>;
    constexpr D kMax = static_cast<D>(static_cast<U>(~U(0)) >> 1);
    constexpr D kMin = static_cast<D>(-kMax - 1);
    // -2^(bits-1) is exact in S; so is 2^(bits-1), which kMax rounds to for int64.
    constexpr S kLow = static_cast<S>(kMin);
    constexpr S kHigh = -kLow;
    if (!(v == v)) return D(0);
    if (v >= kHigh) return kMax;
    if (v < kLow) return kMin;
    return static_cast<D>(v);
  } else {
    return static_cast<D>(v);
  }
}

}  // namespace wick::math
