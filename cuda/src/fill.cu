// where, fill and arange kernels (every dtype).
#include "kernels.h"
#include "launch.cuh"
#include "wick/core/dtype.h"
#include "wick/core/int_math.h"

namespace wick::cuda {

namespace {
template <typename T>
struct WhereApply {
  T* out;
  const bool* cond;
  const T* a;
  const T* b;
  __device__ __forceinline__ void operator()(int64_t i) const { out[i] = cond[i] ? a[i] : b[i]; }
  __device__ __forceinline__ void operator()(const int64_t (&off)[4]) const {
    out[off[0]] = cond[off[1]] ? a[off[2]] : b[off[3]];
  }
};

template <typename T>
struct FillApply {
  T* out;
  T value;
  __device__ __forceinline__ void operator()(int64_t i) const { out[i] = value; }
  __device__ __forceinline__ void operator()(const int64_t (&off)[1]) const { out[off[0]] = value; }
};

template <typename T>
struct ArangeApply {
  T* out;
  double start, step;
  // Explicit rounding (no fused multiply-add) so the values match the CPU's bit for bit.
  __device__ __forceinline__ void operator()(int64_t i) const {
    out[i] = static_cast<T>(__dadd_rn(start, __dmul_rn(static_cast<double>(i), step)));
  }
  __device__ __forceinline__ void operator()(const int64_t (&off)[1]) const {}
};
}  // namespace

void kernels::where(const KernelTensor& out, const KernelTensor& cond, const KernelTensor& a, const KernelTensor& b) {
  const auto L = layout_of<4>({&out, &cond, &a, &b});
  dispatch(out.dtype, "where", [&]<typename T>() {
    detail::launch_elementwise<4>(
        L, WhereApply<T>{reinterpret_cast<T*>(out.data), reinterpret_cast<const bool*>(cond.data),
                         reinterpret_cast<const T*>(a.data), reinterpret_cast<const T*>(b.data)});
  });
}

void kernels::fill(const KernelTensor& dst, double value) {
  const auto L = layout_of<1>({&dst});
  dispatch(dst.dtype, "fill", [&]<typename T>() {
    detail::launch_elementwise<1>(L, FillApply<T>{reinterpret_cast<T*>(dst.data), math::convert<T>(value)});
  });
}

void kernels::arange(const KernelTensor& out, double start, double step) {
  int64_t n = 1;
  for (auto s : out.sizes) n *= s;
  StridedLayout<1> L;  // contiguous by contract
  L.ndim = 1;
  L.numel = n;
  L.sizes[0] = n;
  L.strides[0][0] = 1;
  dispatch(out.dtype, "arange", [&]<typename T>() {
    detail::launch_elementwise<1>(L, ArangeApply<T>{reinterpret_cast<T*>(out.data), start, step});
  });
}

}  // namespace wick::cuda
