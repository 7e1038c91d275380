#pragma once
// Note [Collective fingerprints]
// Before a collective moves data, every rank contributes a fixed-size record of what it is
// about to do, and the records are all-gathered (one small collective whose size never depends
// on the arguments, so it cannot itself mismatch). Every rank then runs the same comparison on
// the same records and reaches the same verdict: either all ranks proceed, or all fail with the
// same message. This is PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL check, always on: it costs one
// latency-bound exchange of 128 bytes per collective.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::distributed::detail {

enum class CollectiveKind : int64_t { AllReduce = 1, Broadcast = 2, AllGather = 3, Barrier = 4 };

/// What one rank is about to do. Fixed size; plain int64 fields.
struct Fingerprint {
  static constexpr int kMaxDims = 7;
  int64_t kind = 0;
  int64_t sequence = 0;
  int64_t refused = 0;  // 1: this rank rejected its own arguments (it has the detailed error)
  int64_t detail = 0;   // the reduce op of all_reduce, the root of broadcast
  int64_t dtype = -1;   // -1: no tensor (barrier)
  int64_t device_type = -1;
  int64_t ndim = 0;
  int64_t numel = 0;
  std::array<int64_t, kMaxDims> sizes{};  // the first dims; further dims folded into the last
  // Not part of the call, never compared: 1 when this rank's caller was waiting for the group's
  // work as the exchange began (Note [Blocking data transfers]).
  int64_t caller_waiting = 0;
};
static_assert(sizeof(Fingerprint) == 16 * sizeof(int64_t));

/// The fingerprint of a collective of `kind` over `t` (undefined for a barrier).
Fingerprint make_fingerprint(CollectiveKind kind, int64_t sequence, const Tensor& t, int64_t detail);

/// "all_reduce(sum) #3 float64 [2, 3] on cpu" (what the record says).
std::string describe(const Fingerprint& f);

/// Empty when every record equals rank 0's and none refused; otherwise the message every rank
/// raises, naming the ranks that differ and what each passed.
std::string compare_fingerprints(const std::vector<Fingerprint>& all);

}  // namespace wick::distributed::detail
