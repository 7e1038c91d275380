// Counter-based random numbers (Note [Random numbers] in docs/cuda.md): element i of the output
// is a function of (seed, offset + i) only, computed by the same wick::math functions as the
// CPU backend, so a seed gives the same tensor on every device and launch configuration.
#include "kernels.h"
#include "launch.cuh"
#include "wick/core/dtype.h"
#include "wick/core/generator.h"

namespace wick::cuda {

namespace {
template <typename T>
struct RandomApply {
  T* out;
  RandomKind kind;
  double a, b;
  uint64_t seed, offset;
  // __dadd_rn/__dmul_rn: no fused multiply-add, so the affine maps round as on the CPU.
  __device__ __forceinline__ void operator()(int64_t i) const {
    const uint64_t c = offset + static_cast<uint64_t>(i);
    double v = 0;
    switch (kind) {
      case RandomKind::Uniform:
        v = __dadd_rn(a, __dmul_rn(b - a, math::random_uniform(seed, c)));
        break;
      case RandomKind::Normal:
        v = __dadd_rn(a, __dmul_rn(b, math::random_normal(seed, c)));
        break;
      case RandomKind::RandInt:
        v = __dadd_rn(a, floor(__dmul_rn(math::random_uniform(seed, c), b - a)));
        break;
      case RandomKind::Bernoulli:
        v = math::random_uniform(seed, c) < a ? 1.0 : 0.0;
        break;
    }
    out[i] = static_cast<T>(v);
  }
  __device__ __forceinline__ void operator()(const int64_t (&off)[1]) const {}
};
}  // namespace

void kernels::random(const KernelTensor& out, RandomKind kind, double a, double b, uint64_t seed, uint64_t offset) {
  int64_t n = 1;
  for (auto s : out.sizes) n *= s;
  StridedLayout<1> L;  // contiguous by contract
  L.ndim = 1;
  L.numel = n;
  L.sizes[0] = n;
  L.strides[0][0] = 1;
  dispatch(out.dtype, "random", [&]<typename T>() {
    detail::launch_elementwise<1>(L, RandomApply<T>{reinterpret_cast<T*>(out.data), kind, a, b, seed, offset});
  });
}

}  // namespace wick::cuda
