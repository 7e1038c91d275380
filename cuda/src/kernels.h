#pragma once
// The kernel entry points of the CUDA backend, one family per .cu file. Each launches on the
// calling thread's current device and current stream; cuda_backend.cpp makes the operands'
// device current first. Operands are already validated by the core front-ends.
#include <cstdint>

#include "wick/core/backend.h"

namespace wick::cuda::kernels {

// unary_float.cu, unary_int.cu (unary dispatches on the dtype in cuda_backend.cpp)
void unary(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1);
void unary_floating(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1);
void unary_integral(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1);

// binary_float.cu, binary_int.cu
void binary(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b);
void binary_floating(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b);
void binary_integral(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b);

// binary_scalar_float.cu, binary_scalar_int.cu: a tensor and a scalar kernel argument (Note
// [Scalar operands]); register_binary_scalar_stub puts the entry into stubs::binary_scalar.
void binary_scalar_floating(BinaryOp op, const KernelTensor& out, const KernelTensor& a, double b);
void binary_scalar_integral(BinaryOp op, const KernelTensor& out, const KernelTensor& a, double b);
void register_binary_scalar_stub();

// fill.cu: where, fill, arange
void where(const KernelTensor& out, const KernelTensor& cond, const KernelTensor& a, const KernelTensor& b);
void fill(const KernelTensor& dst, double value);
void arange(const KernelTensor& out, double start, double step);

// copy.cu: strided copy with dtype conversion (same device)
void copy(const KernelTensor& dst, const KernelTensor& src);

// scan_sort.cu: one thread per line along dim
void cumsum(const KernelTensor& out, const KernelTensor& in, int64_t dim, bool reverse);
void sort_indices(const KernelTensor& indices, const KernelTensor& in, int64_t dim, bool descending);

// optim.cu: puts the fused SGD and Adam steps into their dispatch stubs (Note [Dispatch stubs])
void register_optim_stubs();

// row_stubs.cu: puts softmax, log_softmax and layer_norm over rows, and their backwards, into
// their dispatch stubs (a thread per row through the CPU's functors)
void register_row_stubs();

// random.cu
void random(const KernelTensor& out, RandomKind kind, double a, double b, uint64_t seed, uint64_t offset);

// reduce.cu, arg_reduce.cu
void reduce(ReduceOp op, const KernelTensor& out, const KernelTensor& in);
void arg_reduce(ArgReduceOp op, const KernelTensor& out, const KernelTensor& in, int64_t dim);

// index.cu
void index_select(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index);
void index_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src);
void gather(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index);
void scatter_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src);

// im2col.cu; register_im2col_stubs puts the batched forms into stubs::im2col_images and
// stubs::col2im_images (Note [Batched im2col]).
void im2col(const Im2ColArgs& g, const void* image, void* columns);
void col2im(const Im2ColArgs& g, const void* columns, void* image);
void register_im2col_stubs();

// max_pool.cu
void max_pool2d(const Im2ColArgs& g, const void* image, void* out, int64_t* indices);
void max_pool2d_backward(const Im2ColArgs& g, const void* grad_out, const int64_t* indices, void* grad_image);

// busy_wait.cu: keeps `stream` (a cudaStream_t) busy for about `microseconds`.
void busy_wait(void* stream, int64_t microseconds);

}  // namespace wick::cuda::kernels
