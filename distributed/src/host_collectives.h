#pragma once
// Small collectives over host values, staged through the group's device (Note [Bookkeeping on
// the group's device], distributed_data_parallel.cpp): DDP's parameter checks, join's
// announcements, the reducer's used map and bucket-rebuild order, ZeroRedundancyOptimizer's
// agreements.
#include <cstdint>
#include <vector>

#include "wick/distributed/process_group.h"

namespace wick::distributed::detail {

/// Every rank's copy of the CPU tensor `mine`, gathered through the group's device; the results
/// are on the CPU. Collective.
std::vector<Tensor> gather_on_cpu(ProcessGroup& group, const Tensor& mine);

/// The element-wise sum over the ranks of `mine` (every rank passes as many values), with `tag`
/// in the collective's fingerprint. Collective; rethrows the all-reduce's error.
std::vector<int64_t> sum_on_cpu(ProcessGroup& group, const std::vector<int64_t>& mine, const CollectiveTag& tag = {});
std::vector<double> sum_on_cpu(ProcessGroup& group, const std::vector<double>& mine, const CollectiveTag& tag = {});

/// The ranks whose `flag` is true, in increasing order, the same list on every rank: one
/// all-reduce of a one-hot (ZeroRedundancyOptimizer's agreements, Join's last joiners).
/// Collective.
std::vector<int> flagged_ranks(ProcessGroup& group, bool flag);

}  // namespace wick::distributed::detail
