// The CUDA backend: device selection per op (Note [Which device runs an op], op_device.h),
// registration with core, byte transfers.
#include "cuda_backend.h"

#include "caching_allocator.h"
#include "cuda_check.h"
#include "kernels.h"
#include "op_device.h"
#include "stream_internal.h"
#include "wick/core/error.h"
#include "wick/cuda/memory.h"
#include "wick/cuda/runtime.h"
#include "wick/cuda/stream.h"

namespace wick::cuda {

namespace {
void check_cuda_device(Device d, const char* what) {
  WICK_CHECK(d.is_cuda(), "CUDA backend: {} got non-CUDA device {}", what, d);
  check_device_index(d.index);
}
}  // namespace

Allocator& CudaBackend::allocator() { return the_caching_allocator(); }
int CudaBackend::device_count() { return cuda::device_count(); }

void CudaBackend::set_device(Device d) {
  check_cuda_device(d, "set_device");
  cuda::set_device(d.index);
}

Device CudaBackend::current_device() {
  // Without devices there is no current one: a DeviceGuard on "cuda:0" must fail loudly.
  if (cuda::device_count() == 0) check_device_index(0);
  return Device(DeviceType::CUDA, cuda::current_device());
}

void CudaBackend::synchronize(Device d) {
  check_cuda_device(d, "synchronize");
  cuda::synchronize(d.index);
}

uintptr_t CudaBackend::current_stream(Device d) {
  check_cuda_device(d, "current_stream");
  return reinterpret_cast<uintptr_t>(get_current_stream(d.index).handle());
}

void CudaBackend::set_current_stream(Device d, uintptr_t stream) {
  check_cuda_device(d, "set_current_stream");
  cuda::set_current_stream(Stream(d.index, reinterpret_cast<void*>(stream)));
}

void CudaBackend::unary(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1) {
  OpDevice g(out.data);
  kernels::unary(op, out, in, p0, p1);
}

void CudaBackend::binary(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b) {
  OpDevice g(out.data);
  kernels::binary(op, out, a, b);
}

void CudaBackend::where(const KernelTensor& out, const KernelTensor& cond, const KernelTensor& a,
                        const KernelTensor& b) {
  OpDevice g(out.data);
  kernels::where(out, cond, a, b);
}

void CudaBackend::copy(const KernelTensor& dst, const KernelTensor& src) {
  OpDevice g(dst.data);
  kernels::copy(dst, src);
}

void CudaBackend::copy_bytes_host(void* dst, const void* src, size_t bytes, Device device, bool to_device) {
  if (bytes == 0) return;
  check_cuda_device(device, "copy_bytes_host");
  const Stream s = get_current_stream(device.index);
  if (to_device) {
    // From pageable memory cudaMemcpyAsync returns once the bytes are staged, so `src` may be
    // reused at once; from pinned memory the copy is truly asynchronous, so wait for it.
    CUDAGuard guard(device.index);
    WICK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, static_cast<cudaStream_t>(s.handle())));
    if (is_pinned(src)) s.synchronize();
  } else {
    copy_to_host_async(dst, src, bytes, s);
    s.synchronize();  // the caller reads `dst` right away
  }
}

void CudaBackend::copy_bytes_peer(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) {
  check_cuda_device(dst_device, "copy_bytes_peer");
  check_cuda_device(src_device, "copy_bytes_peer");
  copy_peer_async(dst, dst_device.index, src, src_device.index, bytes);
}

void CudaBackend::fill(const KernelTensor& dst, double value) {
  OpDevice g(dst.data);
  kernels::fill(dst, value);
}

void CudaBackend::arange(const KernelTensor& out, double start, double step) {
  OpDevice g(out.data);
  kernels::arange(out, start, step);
}

void CudaBackend::random(const KernelTensor& out, RandomKind kind, double a, double b, uint64_t seed, uint64_t offset) {
  OpDevice g(out.data);
  kernels::random(out, kind, a, b, seed, offset);
}

void CudaBackend::reduce(ReduceOp op, const KernelTensor& out, const KernelTensor& in) {
  OpDevice g(out.data);
  kernels::reduce(op, out, in);
}

void CudaBackend::arg_reduce(ArgReduceOp op, const KernelTensor& out, const KernelTensor& in, int64_t dim) {
  OpDevice g(out.data);
  kernels::arg_reduce(op, out, in, dim);
}

void CudaBackend::index_select(const KernelTensor& out, const KernelTensor& in, int64_t dim,
                               const KernelTensor& index) {
  OpDevice g(out.data);
  kernels::index_select(out, in, dim, index);
}

void CudaBackend::index_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) {
  OpDevice g(out.data);
  kernels::index_add(out, dim, index, src);
}

void CudaBackend::gather(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) {
  OpDevice g(out.data);
  kernels::gather(out, in, dim, index);
}

void CudaBackend::scatter_add(const KernelTensor& out, int64_t dim, const KernelTensor& index,
                              const KernelTensor& src) {
  OpDevice g(out.data);
  kernels::scatter_add(out, dim, index, src);
}

void CudaBackend::sort_indices(const KernelTensor& indices, const KernelTensor& in, int64_t dim, bool descending) {
  OpDevice g(indices.data);
  kernels::sort_indices(indices, in, dim, descending);
}

void CudaBackend::cumsum(const KernelTensor& out, const KernelTensor& in, int64_t dim, bool reverse) {
  OpDevice g(out.data);
  kernels::cumsum(out, in, dim, reverse);
}

void CudaBackend::gemm(const GemmArgs& args) {
  OpDevice g(args.c);
  cublas_gemm(args);
}

void CudaBackend::im2col(const Im2ColArgs& g, const void* image, void* columns) {
  OpDevice d(columns);
  kernels::im2col(g, image, columns);
}

void CudaBackend::col2im(const Im2ColArgs& g, const void* columns, void* image) {
  OpDevice d(image);
  kernels::col2im(g, columns, image);
}

void CudaBackend::max_pool2d(const Im2ColArgs& g, const void* image, void* out, int64_t* indices) {
  OpDevice d(out);
  kernels::max_pool2d(g, image, out, indices);
}

void CudaBackend::max_pool2d_backward(const Im2ColArgs& g, const void* grad_out, const int64_t* indices,
                                      void* grad_image) {
  OpDevice d(grad_image);
  kernels::max_pool2d_backward(g, grad_out, indices, grad_image);
}

void busy_wait(Stream s, int64_t microseconds) {
  CUDAGuard g(s.device());
  kernels::busy_wait(s.handle(), microseconds);
}

}  // namespace wick::cuda

// Note [Backend registration] (backend.h): core calls this the first time a CUDA device is used.
extern "C" void wick_cuda_register_backend() {
  static wick::cuda::CudaBackend* backend = new wick::cuda::CudaBackend();  // never destroyed
  wick::cuda::kernels::register_optim_stubs();  // the fused kernels' entries (Note [Dispatch stubs])
  wick::cuda::kernels::register_binary_scalar_stub();
  wick::cuda::kernels::register_im2col_stubs();
  wick::cuda::kernels::register_row_stubs();
  wick::register_backend(wick::DeviceType::CUDA, backend);
}
