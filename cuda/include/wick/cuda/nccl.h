#pragma once
// NCCL collectives on wick tensors (Note [NCCL] in docs/cuda.md).
//
// These are the primitives the parallel layer's NCCL communicator is built on. Each call takes
// one tensor per device (all CUDA, dense and contiguous, same dtype and number of elements, on
// distinct devices), finds or creates the NCCL communicator for that ordered list of devices
// (cached for the life of the process), and queues the collective on each device's *current
// stream*; nothing waits on the host. The header includes no NCCL or CUDA header.
#include <string>
#include <vector>

#include "wick/core/backend.h"
#include "wick/core/tensor.h"

namespace wick::cuda {

/// True when NCCL can run a collective on `tensors`: every tensor is a dense contiguous CUDA
/// tensor of a dtype NCCL supports, all on distinct devices with the same dtype and numel.
bool nccl_is_available(const std::vector<Tensor>& tensors);

/// The NCCL library's version, e.g. 22703 for 2.27.3.
int nccl_version();

/// Copies tensors[0] into every other tensor (root: index 0).
void nccl_broadcast(std::vector<Tensor>& tensors);

/// output = op(inputs[0], ..., inputs[n-1]) elementwise; `output` lives on inputs[root]'s device
/// (it may be inputs[root] itself). Bool tensors support only Max/Min (logical or/and).
void nccl_reduce(const std::vector<Tensor>& inputs, Tensor& output, int root = 0, ReduceOp op = ReduceOp::Sum);

/// outputs[i] = op(inputs[0], ..., inputs[n-1]) on every device (outputs[i] on inputs[i]'s
/// device; it may be inputs[i] itself, for an in-place all-reduce).
void nccl_all_reduce(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, ReduceOp op = ReduceOp::Sum);
/// In-place all-reduce: tensors[i] = op over all tensors, on every device.
void nccl_all_reduce(std::vector<Tensor>& tensors, ReduceOp op = ReduceOp::Sum);

/// RAII ncclGroupStart/ncclGroupEnd: collectives issued inside (e.g. one per bucket of a
/// coalesced broadcast) are launched together. Call end() to see errors of the group; the
/// destructor ends a group still open and drops its error (destructors never throw).
class NcclGroupGuard {
 public:
  NcclGroupGuard();
  ~NcclGroupGuard();
  /// ncclGroupEnd; throws wick::BackendError when NCCL reports a failure.
  void end();
  NcclGroupGuard(const NcclGroupGuard&) = delete;
  NcclGroupGuard& operator=(const NcclGroupGuard&) = delete;

 private:
  bool open_ = false;
};

/// Destroys every cached communicator (e.g. before the process forks or devices are reset).
void nccl_clear_communicators();

}  // namespace wick::cuda
