#pragma once
// The random affine maps, written once for every backend (Note [Random affine maps]). No CUDA
// includes: the CPU backend and cuda/src/random.cu both call random_value.
//
// Note [Random affine maps]
// Element i of a random tensor is random_value(kind, a, b, seed, offset + i): a function of the
// counter only, so a seed gives the same tensor on every device and launch configuration.
//  - Uniform [a, b): a + (b - a) * u, u in [0, 1) with 53 random bits. The double result is
//    below b, but the cast to T can round it up to b (float32: whenever u is within 2^-25 of 1
//    for [0, 1); doubles too when a != 0). Such a value becomes the largest T below T(b), so the
//    interval stays half-open on every device.
//  - Normal: a + b * z, z from Box-Muller (random_normal).
//  - RandInt [a, b): a + floor(u * (b - a)); u < 1 keeps it below b.
//  - Bernoulli: 1 when u < a, else 0 (a = 1 always 1, a = 0 never).
// Sums and products are rounded one by one (add_rn, mul_rn): a fused multiply-add on the device
// would round differently from the CPU.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "wick/core/generator.h"
#include "wick/core/host_device.h"

namespace wick {

enum class RandomKind : int8_t { Uniform, Normal, RandInt, Bernoulli };

namespace math {

/// x + y, rounded once (never contracted into a fused multiply-add).
WICK_HOST_DEVICE double add_rn(double x, double y) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(x, y);
#else
  return x + y;
#endif
}

/// x * y, rounded once (never contracted into a fused multiply-add).
WICK_HOST_DEVICE double mul_rn(double x, double y) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(x, y);
#else
  return x * y;
#endif
}

/// The largest T below `bound` (T float or double).
template <typename T>
WICK_HOST_DEVICE T next_below(T bound) {
  if constexpr (std::is_same_v<T, float>) {
    return ::nextafterf(bound, -HUGE_VALF);
  } else {
    return ::nextafter(bound, -HUGE_VAL);
  }
}

/// A uniform double u in [0, 1) mapped to [a, b) in T (b > a), never equal to T(b) for a
/// floating T: a value that rounds up to the bound becomes next_below(T(b)).
template <typename T>
WICK_HOST_DEVICE T uniform_in(double u, double a, double b) {
  const double v = add_rn(a, mul_rn(b - a, u));
  if constexpr (std::is_floating_point_v<T>) {
    const T t = static_cast<T>(v), bound = static_cast<T>(b);
    return (t >= bound && b > a) ? next_below(bound) : t;
  } else {
    return static_cast<T>(v);
  }
}

/// Element `counter` of a random tensor of `kind` with parameters (a, b) (Note [Random affine
/// maps]).
template <typename T>
WICK_HOST_DEVICE T random_value(RandomKind kind, double a, double b, uint64_t seed, uint64_t counter) {
  switch (kind) {
    case RandomKind::Uniform:
      return uniform_in<T>(random_uniform(seed, counter), a, b);
    case RandomKind::Normal:
      return static_cast<T>(add_rn(a, mul_rn(b, random_normal(seed, counter))));
    case RandomKind::RandInt:
      return static_cast<T>(add_rn(a, ::floor(mul_rn(random_uniform(seed, counter), b - a))));
    case RandomKind::Bernoulli:
      return static_cast<T>(random_uniform(seed, counter) < a ? 1.0 : 0.0);
  }
  return T(0);
}

}  // namespace math
}  // namespace wick
