// Counter-based random numbers (Note [Random numbers] in docs/cuda.md): element i of the output
// is math::random_value(kind, a, b, seed, offset + i) (wick/core/random_functors.h, Note [Random
// affine maps]), the same function the CPU backend calls, so a seed gives the same tensor on
// every device and launch configuration.
#include "kernels.h"
#include "launch.cuh"
#include "wick/core/dtype.h"
#include "wick/core/random_functors.h"

namespace wick::cuda {

namespace {
template <typename T>
struct RandomApply {
  T* out;
  RandomKind kind;
  double a, b;
  uint64_t seed, offset;
  __device__ __forceinline__ void operator()(int64_t i) const {
    out[i] = math::random_value<T>(kind, a, b, seed, offset + static_cast<uint64_t>(i));
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
