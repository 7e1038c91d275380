#pragma once
// Note [Collective fingerprints]
// Before a collective moves data, every rank contributes a fixed-size record of what it is
// about to do, and the records are all-gathered (one small collective whose size never depends
// on the arguments, so it cannot itself mismatch). Every rank then runs the same comparison on
// the same records and reaches the same verdict: either all ranks proceed, or all fail with the
// same message. This is PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL check, always on: it costs one
// latency-bound exchange of 144 bytes per collective. Compared: the kind, the reduce op or root,
// dtype, device type, shape, and the caller's tag (Note [Collective tags], process_group.h),
// which lets DistributedDataParallel's buckets of different iterations fail instead of pairing.
// Not compared: the sequence number, informational only (the group's count of its collectives,
// printed in messages and timeouts): the k-th exchange of every rank pairs with the k-th of the
// others by construction, so the numbers always agree.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "wick/core/tensor.h"
#include "wick/distributed/process_group.h"

namespace wick::distributed::detail {

enum class CollectiveKind : int64_t { AllReduce = 1, Broadcast = 2, AllGather = 3, Barrier = 4 };

/// What one rank is about to do. Fixed size; plain int64 fields.
struct Fingerprint {
  static constexpr int kMaxDims = 7;
  int64_t kind = 0;
  int64_t sequence = 0;  // informational: never compared (see the Note)
  int64_t refused = 0;   // 1: this rank rejected its own arguments (it has the detailed error)
  int64_t detail = 0;    // the reduce op of all_reduce, the root of broadcast
  int64_t dtype = -1;    // -1: no tensor (barrier)
  int64_t device_type = -1;
  int64_t ndim = 0;
  int64_t numel = 0;
  std::array<int64_t, kMaxDims> sizes{};  // the first dims; further dims folded into the last
  int64_t tag_iteration = 0;              // the caller's CollectiveTag; {0, 0}: untagged
  int64_t tag_index = 0;
  // Not part of the call, never compared: 1 when this rank's caller was waiting for the group's
  // work as the exchange began (Note [Blocking data transfers]).
  int64_t caller_waiting = 0;
};
static_assert(sizeof(Fingerprint) == 18 * sizeof(int64_t));

/// The fingerprint of a collective of `kind` over `t` (undefined for a barrier).
Fingerprint make_fingerprint(CollectiveKind kind, int64_t sequence, const Tensor& t, int64_t detail,
                             const CollectiveTag& tag = {});

/// "all_reduce(sum) #3 float64 [2, 3] on cpu", "all_reduce(sum) #9 [iteration 2, bucket 0]
/// float64 [8] on cpu" (what the record says).
std::string describe(const Fingerprint& f);

/// Empty when every record equals rank 0's (sequence and caller_waiting aside) and none
/// refused; otherwise the message every rank raises, naming the ranks that differ and what each
/// passed, and, when the tags differ, that the ranks are out of step.
std::string compare_fingerprints(const std::vector<Fingerprint>& all);

}  // namespace wick::distributed::detail
