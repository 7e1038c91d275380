// index_select, gather (reads through an int64 index) and index_add, scatter_add (atomic adds).
// The layouts mirror the CPU backend's: the indexed dim gets stride 0 in the data operand and
// the index supplies the position along it.
#include "kernels.h"
#include "launch.cuh"
#include "wick/core/dtype.h"

namespace wick::cuda {

namespace {
template <typename T>
__device__ __forceinline__ void atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    atomicAdd(p, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    // Two's complement: unsigned addition gives the signed sum.
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    // bool: x + v as bool is x || v. OR the byte into its aligned 32-bit word.
    if (!v) return;
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    unsigned int* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3});
    atomicOr(word, 1u << (8 * (addr & 3)));
  }
}

// out[off0] = in[off1 + index[off2] * stride_dim]   (index_select, gather)
template <typename T>
struct GatherApply {
  T* out;
  const T* in;
  const int64_t* index;
  int64_t stride_dim;
  __device__ __forceinline__ void operator()(int64_t i) const { out[i] = in[i + index[i] * stride_dim]; }
  __device__ __forceinline__ void operator()(const int64_t (&off)[3]) const {
    out[off[0]] = in[off[1] + index[off[2]] * stride_dim];
  }
};

// out[off1 + index[off2] * stride_dim] += src[off0]   (index_add)
template <typename T>
struct IndexAddApply {
  T* out;
  const T* src;
  const int64_t* index;
  int64_t stride_dim;
  __device__ __forceinline__ void operator()(int64_t i) const { atomic_add(out + i + index[i] * stride_dim, src[i]); }
  __device__ __forceinline__ void operator()(const int64_t (&off)[3]) const {
    atomic_add(out + off[1] + index[off[2]] * stride_dim, src[off[0]]);
  }
};

// out[off1 + index[off0] * stride_dim] += src[off2]   (scatter_add)
template <typename T>
struct ScatterAddApply {
  T* out;
  const T* src;
  const int64_t* index;
  int64_t stride_dim;
  __device__ __forceinline__ void operator()(int64_t i) const { atomic_add(out + i + index[i] * stride_dim, src[i]); }
  __device__ __forceinline__ void operator()(const int64_t (&off)[3]) const {
    atomic_add(out + off[1] + index[off[0]] * stride_dim, src[off[2]]);
  }
};

template <template <typename> class Apply>
void launch_indexed(const StridedLayout<3>& L, DType dtype, const char* op, void* out, const void* data,
                    const void* index, int64_t stride_dim) {
  dispatch(dtype, op, [&]<typename T>() {
    detail::launch_elementwise<3>(L, Apply<T>{reinterpret_cast<T*>(out), reinterpret_cast<const T*>(data),
                                              reinterpret_cast<const int64_t*>(index), stride_dim});
  });
}
}  // namespace

void kernels::index_select(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) {
  const size_t d = static_cast<size_t>(dim);
  KernelTensor in0 = in, idx = index;
  in0.sizes = out.sizes;
  in0.strides[d] = 0;
  idx.sizes = out.sizes;
  idx.strides = DimVector(out.sizes.size(), 0);
  idx.strides[d] = index.strides[0];
  const auto L = detail::layout_of<3>({&out, &in0, &idx});
  launch_indexed<GatherApply>(L, out.dtype, "index_select", out.data, in.data, index.data, in.strides[d]);
}

void kernels::index_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) {
  const size_t d = static_cast<size_t>(dim);
  KernelTensor out0 = out, idx = index;
  out0.sizes = src.sizes;
  out0.strides[d] = 0;
  idx.sizes = src.sizes;
  idx.strides = DimVector(src.sizes.size(), 0);
  idx.strides[d] = index.strides[0];
  const auto L = detail::layout_of<3>({&src, &out0, &idx});
  launch_indexed<IndexAddApply>(L, out.dtype, "index_add", out.data, src.data, index.data, out.strides[d]);
}

void kernels::gather(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) {
  const size_t d = static_cast<size_t>(dim);
  KernelTensor in0 = in;
  in0.sizes = out.sizes;
  in0.strides[d] = 0;
  const auto L = detail::layout_of<3>({&out, &in0, &index});
  launch_indexed<GatherApply>(L, out.dtype, "gather", out.data, in.data, index.data, in.strides[d]);
}

void kernels::scatter_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) {
  const size_t d = static_cast<size_t>(dim);
  KernelTensor out0 = out, src0 = src;
  out0.sizes = index.sizes;
  out0.strides[d] = 0;
  src0.sizes = index.sizes;
  const auto L = detail::layout_of<3>({&index, &out0, &src0});
  launch_indexed<ScatterAddApply>(L, out.dtype, "scatter_add", out.data, src.data, index.data, out.strides[d]);
}

}  // namespace wick::cuda
