// index_select, gather (reads through an int64 index) and index_add, scatter_add (atomic adds).
// The layouts are the CPU backend's (wick/core/indexed_layout.h, Note [Indexed kernels]): the
// indexed dim gets stride 0 in the data operand and the index supplies the position along it.
#include "kernels.h"
#include "launch.cuh"
#include "wick/core/dtype.h"
#include "wick/core/indexed_layout.h"

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

// out[off1 + index[off2] * stride_dim] += src[off0]   (index_add, scatter_add)
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

template <template <typename> class Apply>
void launch_indexed(const IndexedLayout& I, DType dtype, const char* op, void* out, const void* data,
                    const void* index) {
  dispatch(dtype, op, [&]<typename T>() {
    detail::launch_elementwise<3>(I.layout, Apply<T>{reinterpret_cast<T*>(out), reinterpret_cast<const T*>(data),
                                                     reinterpret_cast<const int64_t*>(index), I.stride_dim});
  });
}
}  // namespace

void kernels::index_select(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) {
  launch_indexed<GatherApply>(index_select_layout(out, in, dim, index), out.dtype, "index_select", out.data, in.data,
                              index.data);
}

void kernels::index_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) {
  launch_indexed<IndexAddApply>(index_add_layout(out, dim, index, src), out.dtype, "index_add", out.data, src.data,
                                index.data);
}

void kernels::gather(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) {
  launch_indexed<GatherApply>(gather_layout(out, in, dim, index), out.dtype, "gather", out.data, in.data, index.data);
}

void kernels::scatter_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) {
  launch_indexed<IndexAddApply>(scatter_add_layout(out, dim, index, src), out.dtype, "scatter_add", out.data, src.data,
                                index.data);
}

}  // namespace wick::cuda
