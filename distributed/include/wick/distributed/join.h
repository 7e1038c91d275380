#pragma once
// Join: training with uneven inputs across ranks, for several joinables at once
// (torch.distributed.algorithms.join.Join, Joinable, JoinHook, PyTorch 1.13).
//
// Note [Join context]
// Collectives only complete when every rank calls them. When ranks have different amounts of
// data, the one whose data runs out first stops calling them and the others wait until the
// timeout aborts the job. A Join over some joinables (DistributedDataParallel,
// ZeroRedundancyOptimizer, or a class of one's own deriving from Joinable) fixes that:
//  - on a rank still training, each joinable notifies the context at the start of each of its
//    iterations (DDP: each forward; ZeroRedundancyOptimizer: each step()): one small all-reduce
//    of [1 (active), 0, one-hot of the notifying joinable, that joinable's payload (what its
//    iteration will run)];
//  - a rank whose data has run out calls join(): it loops on the same all-reduce with zeros.
//    Each sum says how many ranks are still active, which joinable they notified, and the
//    payload summed over them; the joined rank runs that joinable's main hook, which shadows
//    the collectives the active ranks' iteration runs (DDP: the buffer broadcast and every
//    bucket's all-reduce with zeros; ZeroRedundancyOptimizer: the step's agreement and
//    broadcasts). A sum of 0 active ranks means every rank has joined: all leave the loop at the
//    same collective. The ranks whose first exchange in join() found no rank active are the
//    last joiners (PyTorch's is_last_joiner); one more all-reduce gives every rank the highest
//    of them, and every joinable's post hook runs with it (DDP copies that rank's parameters
//    and buffers to all).
// The notifier's one-hot makes the protocol general where PyTorch's is one all-reduce of a
// count plus each joinable's own collectives: a joined rank learns from one exchange which
// joinable's collectives follow, so the active ranks may interleave them in any order they all
// follow (forward, backward, step; or several forwards per step with no_sync). Active ranks
// that notify different joinables at the same exchange (their programs differ) all raise a
// StateError there.
// With throw_on_early_termination, the first rank to join sends a 1 in the second slot and
// raises; every active rank sees it in its next notification's sum and raises too (PyTorch's
// "Detected at least one rank that exhausted inputs"), so all ranks stop at the same
// collective and can continue with new collectives.
// The joinables must outlive the Join, use the same process group, and a joinable is in at most
// one Join at a time. When an exception leaves the training loop, destroying the Join ends it
// on the joinables without the loop (PyTorch's context manager skips its exit then).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wick/distributed/process_group.h"

namespace wick::distributed {

struct JoinOptions {
  /// false: the Join does nothing (no notification, join() returns at once), PyTorch's enable.
  bool enable = true;
  /// The first rank to run out of data makes every rank raise a StateError at its next
  /// notification instead of shadowing their collectives (PyTorch's throw_on_early_termination).
  bool throw_on_early_termination = false;
  /// For DistributedDataParallel: divide the synchronised gradients by the world size (true,
  /// PyTorch's default) or by the number of ranks still training at that forward.
  bool divide_by_initial_world_size = true;
};

class Join;

/// What the ranks still training told a joined rank, summed over them.
struct JoinNotification {
  int64_t active = 0;            ///< ranks still training (0: every rank has joined)
  std::vector<int64_t> payload;  ///< the notifying joinable's payload, summed over the active ranks
};

/// A class whose collectives a joined rank can shadow (PyTorch's Joinable and its JoinHook).
class Joinable {
 public:
  Joinable() = default;
  /// A copy is in no Join.
  Joinable(const Joinable&) {}
  Joinable& operator=(const Joinable&) { return *this; }
  /// Leaves its Join, if any (the Join then skips it).
  virtual ~Joinable();

  /// The group this joinable's collectives run on.
  virtual ProcessGroup& join_process_group() const = 0;
  /// The name errors use ("DistributedDataParallel").
  virtual std::string join_name() const = 0;
  /// How many numbers this joinable's notifications carry (its payload).
  virtual size_t join_payload_size() const { return 0; }
  /// Refuses (ValueError/StateError) to take part in a Join with `options`; nothing changes.
  virtual void join_check(const JoinOptions& options) const { (void)options; }
  /// The Join started (options given) or ended on this joinable.
  virtual void join_started(const JoinOptions& options) { (void)options; }
  virtual void join_ended() {}
  /// On a joined rank, once for each notification of this joinable by the ranks still training:
  /// runs the collectives they run in that iteration (PyTorch's JoinHook.main_hook).
  virtual void join_main_hook(const JoinNotification& n) = 0;
  /// On every rank after every rank has joined; `last_joiner` is the highest rank whose join()
  /// found no rank active (PyTorch's JoinHook.post_hook and _sync_final_model's rank).
  virtual void join_post_hook(int last_joiner) { (void)last_joiner; }

 protected:
  /// On a rank still training, at the start of each of this joinable's iterations: tells the
  /// joined ranks what follows (`payload`, join_payload_size() numbers) and returns the sums
  /// over the ranks still training. Collective among the ranks of the group. Without a Join (or
  /// with enable false) it communicates nothing and returns active = the world size and this
  /// rank's payload. StateError on every rank when a rank ran out of data under
  /// throw_on_early_termination, or when the active ranks notified different joinables.
  JoinNotification notify_join_context(std::span<const int64_t> payload);
  /// Whether this joinable is in an enabled Join.
  bool join_enabled() const;

 private:
  friend class Join;
  Join* join_ = nullptr;
};

class Join {
 public:
  /// Starts join on `joinables` (each outlives the Join). ValueError for an empty list, a
  /// joinable listed twice, or joinables on different process groups; StateError for a joinable
  /// already in a Join; a joinable's own refusal (join_check). Nothing starts on any joinable
  /// when one refuses. Not a collective.
  explicit Join(std::vector<Joinable*> joinables, JoinOptions options = {});
  /// Ends join on the joinables still listed, without the join loop, when join() was not called.
  ~Join();
  Join(const Join&) = delete;
  Join& operator=(const Join&) = delete;

  /// Collective: this rank has no more data. Shadows the ranks still training (Note [Join
  /// context]) until every rank has joined, then runs the post hooks and ends join on the
  /// joinables. With throw_on_early_termination, a rank that joins while others train raises a
  /// StateError (after telling them). Call once; StateError when called again.
  void join();

  const JoinOptions& options() const { return options_; }

 private:
  friend class Joinable;
  JoinNotification notify(Joinable& who, std::span<const int64_t> payload);
  void forget(Joinable* who);
  void end();
  size_t payload_width() const;

  std::vector<Joinable*> joinables_;
  JoinOptions options_;
  bool ended_ = false;
};

}  // namespace wick::distributed
