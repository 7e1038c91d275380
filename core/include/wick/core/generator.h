#pragma once
// The seeded random generator: counter based, so a sequence depends only on the seed and on how
// many numbers were drawn before, never on threads or launch configuration.
#include <cmath>
#include <cstdint>

namespace wick {

/// Reseeds the global generator (and resets its counter).
void manual_seed(uint64_t seed);

/// Reserves `count` numbers; returns {seed, first counter}. Thread-safe.
struct RandomDraw {
  uint64_t seed;
  uint64_t offset;
};
RandomDraw reserve_random(uint64_t count);

// Note [RNG state]
// The whole state of the global generator is its seed and the counter of the next draw, for
// every device. PyTorch's torch.get_rng_state returns a ByteTensor; here a typed struct of the
// two integers says what it holds, needs no size or dtype check on the way back (every state is
// valid) and keeps the generator free of tensors. The activation checkpoint saves it in forward
// and sets it for the recomputation (docs/autograd.md, "Activation checkpointing").
struct RngState {
  uint64_t seed;
  uint64_t counter;
  bool operator==(const RngState&) const = default;
};
/// The generator's current state (torch.get_rng_state). Thread-safe.
RngState get_rng_state();
/// Puts the generator back into `state` (torch.set_rng_state): the next draws are those that
/// followed get_rng_state(). Every state is valid. Thread-safe.
void set_rng_state(const RngState& state);

namespace math {
/// A 64-bit hash of (seed, counter): splitmix64 over a mixed key. Host and device.
#if defined(__CUDACC__)
__host__ __device__ __forceinline__
#else
inline
#endif
    uint64_t
    random_bits(uint64_t seed, uint64_t counter) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + counter * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  z = (z ^ (z >> 29)) * 0xBF58476D1CE4E5B9ull;
  return z ^ (z >> 32);
}
/// Uniform double in [0, 1) from the top 53 of 64 random bits: all ones gives 1 - 2^-53, the
/// largest value (tests drive the maps with it).
#if defined(__CUDACC__)
__host__ __device__ __forceinline__
#else
inline
#endif
    double
    uniform_from_bits(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}
/// Uniform double in [0, 1) from counter `counter`.
#if defined(__CUDACC__)
__host__ __device__ __forceinline__
#else
inline
#endif
    double
    random_uniform(uint64_t seed, uint64_t counter) {
  return uniform_from_bits(random_bits(seed, counter));
}
/// Standard normal from counter `counter` (Box-Muller on two hashed uniforms).
#if defined(__CUDACC__)
__host__ __device__ __forceinline__
#else
inline
#endif
    double
    random_normal(uint64_t seed, uint64_t counter) {
  double u1 = random_uniform(seed ^ 0x5851F42D4C957F2Dull, counter);
  double u2 = random_uniform(seed ^ 0x14057B7EF767814Full, counter);
  u1 = u1 > 1e-300 ? u1 : 1e-300;
  // Qualified calls: unqualified sqrt/log/cos would find wick::sqrt(const Tensor&) & co. first
  // (name lookup stops at the innermost namespace declaring the name) once functions.h is seen.
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586476925 * u2);
}
}  // namespace math

}  // namespace wick
