#pragma once
// A test device type's kernels: the CPU backend's, run on the host memory its tensors hold.
#include "wick/core/backend.h"

namespace wick::test {

/// Forwards every kernel to the CPU backend. A test backend (mirror_backend.cpp's, the failing
/// copies of state_dict_test.cpp) derives from it and adds its allocator, device bookkeeping and
/// whatever it changes; `copy` and the byte copies stay virtual for that.
class CpuKernelsBackend : public Backend {
 public:
  void unary(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1) override {
    cpu().unary(op, out, in, p0, p1);
  }
  void binary(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b) override {
    cpu().binary(op, out, a, b);
  }
  void where(const KernelTensor& out, const KernelTensor& cond, const KernelTensor& a, const KernelTensor& b) override {
    cpu().where(out, cond, a, b);
  }
  void copy(const KernelTensor& dst, const KernelTensor& src) override { cpu().copy(dst, src); }
  void copy_bytes_host(void* dst, const void* src, size_t bytes, Device device, bool to_device) override {
    cpu().copy_bytes_host(dst, src, bytes, device, to_device);
  }
  void copy_bytes_peer(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) override {
    cpu().copy_bytes_peer(dst, dst_device, src, src_device, bytes);
  }
  void fill(const KernelTensor& dst, double value) override { cpu().fill(dst, value); }
  void arange(const KernelTensor& out, double start, double step) override { cpu().arange(out, start, step); }
  void random(const KernelTensor& out, RandomKind kind, double a, double b, uint64_t seed, uint64_t offset) override {
    cpu().random(out, kind, a, b, seed, offset);
  }
  void reduce(ReduceOp op, const KernelTensor& out, const KernelTensor& in) override { cpu().reduce(op, out, in); }
  void arg_reduce(ArgReduceOp op, const KernelTensor& out, const KernelTensor& in, int64_t dim) override {
    cpu().arg_reduce(op, out, in, dim);
  }
  void index_select(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) override {
    cpu().index_select(out, in, dim, index);
  }
  void index_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) override {
    cpu().index_add(out, dim, index, src);
  }
  void gather(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) override {
    cpu().gather(out, in, dim, index);
  }
  void scatter_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) override {
    cpu().scatter_add(out, dim, index, src);
  }
  void sort_indices(const KernelTensor& indices, const KernelTensor& in, int64_t dim, bool descending) override {
    cpu().sort_indices(indices, in, dim, descending);
  }
  void cumsum(const KernelTensor& out, const KernelTensor& in, int64_t dim, bool reverse) override {
    cpu().cumsum(out, in, dim, reverse);
  }
  void gemm(const GemmArgs& args) override { cpu().gemm(args); }
  void im2col(const Im2ColArgs& g, const void* image, void* columns) override { cpu().im2col(g, image, columns); }
  void col2im(const Im2ColArgs& g, const void* columns, void* image) override { cpu().col2im(g, columns, image); }
  void max_pool2d(const Im2ColArgs& g, const void* image, void* out, int64_t* indices) override {
    cpu().max_pool2d(g, image, out, indices);
  }
  void max_pool2d_backward(const Im2ColArgs& g, const void* grad_out, const int64_t* indices,
                           void* grad_image) override {
    cpu().max_pool2d_backward(g, grad_out, indices, grad_image);
  }

 protected:
  static Backend& cpu() { return backend(DeviceType::CPU); }
};

}  // namespace wick::test
