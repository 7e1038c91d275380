// Strided copy with dtype conversion between two tensors on one device.
#include "kernels.h"
#include "launch.cuh"
#include "wick/core/dtype.h"
#include "wick/core/int_math.h"

namespace wick::cuda {

namespace {
template <typename D, typename S>
struct CastApply {
  D* out;
  const S* in;
  __device__ __forceinline__ void operator()(int64_t i) const { out[i] = math::convert<D>(in[i]); }
  __device__ __forceinline__ void operator()(const int64_t (&off)[2]) const {
    out[off[0]] = math::convert<D>(in[off[1]]);
  }
};
}  // namespace

void kernels::copy(const KernelTensor& dst, const KernelTensor& src) {
  const auto L = layout_of<2>({&dst, &src});
  if (L.numel == 0) return;
  if (dst.dtype == src.dtype && detail::is_dense(L)) {
    // Same dtype, both dense: a plain device-to-device memcpy (full copy bandwidth).
    WICK_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, static_cast<size_t>(L.numel) * element_size(dst.dtype),
                                    cudaMemcpyDeviceToDevice, detail::current_raw_stream()));
    return;
  }
  dispatch(dst.dtype, "copy", [&]<typename D>() {
    dispatch(src.dtype, "copy", [&]<typename S>() {
      detail::launch_elementwise<2>(
          L, CastApply<D, S>{reinterpret_cast<D*>(dst.data), reinterpret_cast<const S*>(src.data)});
    });
  });
}

}  // namespace wick::cuda
