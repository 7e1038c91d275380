#pragma once
// Gradient buckets: PyTorch's compute_bucket_assignment_by_size rule.
//
// Note [Bucket assignment]
// Tensors are taken in the order given (DDP gives its parameters in reverse registration
// order, roughly the order backward produces their gradients). Each (dtype, device) has its
// own open bucket and its own position in `size_limits`: a tensor joins the open bucket of its
// kind, and when that bucket holds at least the current limit in bytes it is closed and the
// kind moves on to the next limit (staying on the last one). Buckets still open at the end are
// closed too. The buckets come out ordered by the smallest tensor index they hold. With limits
// {1 MiB, bucket_cap_mb} the first bucket is small, so its all-reduce starts early in backward.
// This function is PyTorch's; the layout DDP builds with it is not quite (Note [Gradient buckets
// and overlap], distributed_data_parallel.h): PyTorch 1.13 starts with one bucket for everything
// (find_unused_parameters off) or buckets over registration order, reversed (on), and rebuilds
// them once in the order gradients arrived; wick starts from reverse registration order and
// rebuilds once, in the summed arrival order of every rank (Note [Bucket rebuild], reducer.cpp).
#include <cstdint>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::distributed {

/// PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES.
inline constexpr int64_t kDefaultFirstBucketBytes = 1024 * 1024;

/// Groups `tensors` (by index) into buckets by the rule of Note [Bucket assignment].
/// ValueError when size_limits is empty or holds a non-positive limit, or a tensor is undefined.
std::vector<std::vector<size_t>> compute_bucket_assignment_by_size(const std::vector<Tensor>& tensors,
                                                                   const std::vector<int64_t>& size_limits);

}  // namespace wick::distributed
