#pragma once
// The CPU backend: loops over strided layouts, OpenBLAS for GEMM.
#include "cpu/cpu_allocator.h"
#include "wick/core/backend.h"

namespace wick::cpu {

class CpuBackend final : public Backend {
 public:
  Allocator& allocator() override { return allocator_; }
  int device_count() override { return 1; }
  void set_device(Device) override {}
  Device current_device() override { return kCPU; }
  void synchronize(Device) override {}

  void unary(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1) override;
  void binary(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b) override;
  void where(const KernelTensor& out, const KernelTensor& cond, const KernelTensor& a, const KernelTensor& b) override;
  void copy(const KernelTensor& dst, const KernelTensor& src) override;
  void copy_bytes_host(void* dst, const void* src, size_t bytes, Device device, bool to_device) override;
  void copy_bytes_peer(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) override;
  void fill(const KernelTensor& dst, double value) override;
  void arange(const KernelTensor& out, double start, double step) override;
  void random(const KernelTensor& out, RandomKind kind, double a, double b, uint64_t seed, uint64_t offset) override;
  void reduce(ReduceOp op, const KernelTensor& out, const KernelTensor& in) override;
  void arg_reduce(ArgReduceOp op, const KernelTensor& out, const KernelTensor& in, int64_t dim) override;
  void index_select(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) override;
  void index_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) override;
  void gather(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) override;
  void scatter_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) override;
  void sort_indices(const KernelTensor& indices, const KernelTensor& in, int64_t dim, bool descending) override;
  void cumsum(const KernelTensor& out, const KernelTensor& in, int64_t dim, bool reverse) override;
  void gemm(const GemmArgs& args) override;
  void im2col(const Im2ColArgs& g, const void* image, void* columns) override;
  void col2im(const Im2ColArgs& g, const void* columns, void* image) override;
  void max_pool2d(const Im2ColArgs& g, const void* image, void* out, int64_t* indices) override;
  void max_pool2d_backward(const Im2ColArgs& g, const void* grad_out, const int64_t* indices,
                           void* grad_image) override;
  uintptr_t current_stream(Device) override { return 0; }  // CPU devices have no streams
  void set_current_stream(Device, uintptr_t) override {}

 private:
  CpuAllocator allocator_;
};

}  // namespace wick::cpu
