#pragma once
// comm: moving tensors between devices, without autograd (PyTorch's torch.nn.parallel.comm).
//
// Every function works on any mix of devices (cpu:0, cpu:1, ..., cuda:0, ...); the bytes move
// through the Communicator that fits the devices (Note [Choosing a communicator]). Every bad
// argument raises a wick::Error subclass saying what was expected. None of these functions records
// gradients: the differentiable versions are the nodes in functions.h.
//
// Note [Coalesced outputs and version counters]
// broadcast_coalesced and reduce_add_coalesced pack many tensors into one flat bucket per dtype
// and device, move each bucket once, and return views of the buckets. Views of one buffer
// would normally share one version counter, so an in-place update of one output (a BatchNorm
// running mean in a replica) would look like a modification of its siblings saved for backward
// (PyTorch #13594). Each output therefore gets a version counter of its own (as PyTorch's
// `.data` re-wrap). The outputs for the source device of a broadcast are the inputs themselves.
// Where the local communicator does the work (CPU devices), reduce_add_coalesced sums each tensor
// into a tensor of its own instead (Communicator::wants_flat_buckets): no bytes cross a link
// there, so a flat bucket buys nothing, and a sum that owns its memory is what AccumulateGrad
// takes as `.grad` without copying it (DataParallel's reduced gradients).
//
// Note [Bucketing rule]
// Tensors are grouped by dtype, in input order. Before a tensor joins its dtype's open bucket,
// the bucket is closed if it is non-empty and the tensor would push it past buffer_size bytes.
// So a bucket never exceeds buffer_size, except a bucket holding one tensor that alone is
// larger (PyTorch Python's _take_tensors rule). Outputs come back in input order regardless.
#include <cstddef>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::parallel::comm {

inline constexpr size_t kDefaultBufferSize = size_t{10} << 20;  ///< 10 MiB, as PyTorch

/// Copies `tensor` to every device in `devices`; entry i is on devices[i]. An entry whose
/// device is the tensor's own is `tensor` itself (no copy), even when it repeats.
std::vector<Tensor> broadcast(const Tensor& tensor, const std::vector<Device>& devices);

/// Copies `tensor` into each of `out` (any devices, each with tensor's shape and dtype) and
/// returns `out`. An entry that is `tensor` itself is left alone.
std::vector<Tensor> broadcast_out(const Tensor& tensor, const std::vector<Tensor>& out);

/// Broadcasts many tensors at once: result[d][i] is tensors[i] on devices[d]. All tensors must
/// be on devices[0]; result[0] holds the input tensors themselves. Buckets follow Note
/// [Bucketing rule]; each bucket moves once per destination device; the outputs on other
/// devices are contiguous views of their bucket, each with its own version counter (Note
/// [Coalesced outputs and version counters]). Empty tensors become fresh empty tensors.
std::vector<std::vector<Tensor>> broadcast_coalesced(const std::vector<Tensor>& tensors,
                                                     const std::vector<Device>& devices,
                                                     size_t buffer_size = kDefaultBufferSize);

/// The elementwise sum of `tensors` (same shape and dtype, any devices) on `destination`, which
/// must be the device of one of them. Summation runs in list order. Returns a new tensor; the
/// inputs are untouched.
Tensor reduce_add(const std::vector<Tensor>& tensors, Device destination);

/// inputs[d][i] is tensor i of device d; returns, for each i, the sum over d on `destination`
/// (the device of one of the lists). Every list must have the same shapes and dtypes in the
/// same order. Buckets as broadcast_coalesced; each output has its own version counter.
std::vector<Tensor> reduce_add_coalesced(const std::vector<std::vector<Tensor>>& inputs, Device destination,
                                         size_t buffer_size = kDefaultBufferSize);

/// Splits `tensor` along `dim` (negative counts from the end) and puts chunk i on devices[i].
/// Without chunk_sizes the split is tensor.chunk(devices.size()), which gives fewer chunks than
/// devices when the dim is too short (5 rows on 4 devices: 2, 2, 1; 2 rows on 4 devices: 1, 1);
/// chunk_sizes, when given, has one non-negative size per device summing to the dim's size. A
/// chunk whose device is the tensor's own is a view of it (same data, no copy).
std::vector<Tensor> scatter(const Tensor& tensor, const std::vector<Device>& devices,
                            const std::vector<int64_t>& chunk_sizes = {}, int64_t dim = 0);

/// Copies the slices of `tensor` along `dim` into `out` (sizes along dim taken from `out`,
/// which must match the tensor elsewhere and sum to its size) and returns `out`.
std::vector<Tensor> scatter_out(const Tensor& tensor, const std::vector<Tensor>& out, int64_t dim = 0);

/// Concatenates `tensors` (any devices; same dtype, same rank, equal sizes except along dim)
/// along `dim` on `destination` (a CPU device is fine).
Tensor gather(const std::vector<Tensor>& tensors, int64_t dim, Device destination);

/// gather into an existing tensor `out` (its device is the destination); returns `out`.
Tensor gather_out(const std::vector<Tensor>& tensors, const Tensor& out, int64_t dim = 0);

/// The buckets the Note [Bucketing rule] makes of `tensors`: lists of input indices, in the
/// order the buckets are closed (exposed for tests and docs).
std::vector<std::vector<size_t>> bucket_indices(const std::vector<Tensor>& tensors, size_t buffer_size);

}  // namespace wick::parallel::comm
