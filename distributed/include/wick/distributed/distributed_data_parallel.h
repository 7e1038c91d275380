#pragma once
// DistributedDataParallel: one process per device, gradients averaged across the processes
// during backward (torch.nn.parallel.DistributedDataParallel).
//
// Note [What DistributedDataParallel promises]
// Construction checks that every rank's module has the same parameters and buffers (count,
// order, dtypes, device types, every dim, requires_grad; names are not compared, only printed in
// the error) and copies rank 0's parameters and buffers to every rank; those named in
// params_and_buffers_to_ignore are left out of all of it (Note [Ignored parameters and buffers]). After each
// backward outside no_sync(), every parameter's .grad holds the average over the ranks of the
// gradients they computed (accumulated .grad included), identical bit for bit on every rank.
// So, with the same optimizer on every rank, training with a per-rank batch of B on N ranks
// equals training one process on the N*B samples with a mean loss, and the parameters stay
// identical across ranks. It does not promise:
//  - batch statistics across ranks: BatchNorm normalizes with its rank's batch unless its
//    layers were converted (convert_sync_batchnorm, sync_batch_norm.h); buffers are copied from
//    rank 0 before a forward that follows a synchronised one (broadcast_buffers, Note [When
//    buffers are broadcast]), so the other ranks' buffer updates are discarded;
//  - unused parameters without find_unused_parameters: a parameter that gets no gradient in a
//    backward leaves its bucket unreduced, and every later forward with grad raises a
//    StateError naming it (Note [An unfinished reduction is final], reducer.cpp).
//    With the flag, parameters no rank used keep .grad as it was (undefined when it was), and a
//    parameter unused on this rank only contributes what its .grad holds (zero when undefined)
//    to the average (Note [A locally unused parameter's .grad], reducer.cpp);
//  - that every rank calls forward and backward the same number of times: without
//    enable_join()/join() (Note [Join]) a rank that stops early leaves the others waiting until
//    the timeout aborts the job; a rank that skips one backward (or runs an extra synchronising
//    forward) makes every rank's next backward raise a ValueError naming the iterations (Note
//    [Tagged buckets]); a further backward through an already reduced graph only accumulates
//    locally (Note [One reduction per forward]);
//  - anything about parameters changed in place between ranks after construction.
//
// Note [Gradient buckets and overlap]
// The parameters that require grad are assigned to buckets (bucketing.h) in reverse order, a
// 1 MiB first bucket then bucket_cap_mb. Each bucket is one flat tensor. A post-accumulate-
// grad hook on every parameter copies its .grad, scaled by 1/world size, into its slot of the
// bucket; when a bucket's last slot is filled and every earlier bucket has been launched, its
// all_reduce(sum) is queued to the process group's communication thread, which runs it while
// backward goes on. A callback queued at the first hook runs when backward ends: it waits for
// the buckets in order and copies each slot back into .grad. Buckets launch strictly in bucket
// order on every rank, so the ranks' collectives always line up, and each carries its
// iteration and index as a tag (Note [Tagged buckets], reducer.cpp).
// PyTorch 1.13's layout differs: without find_unused_parameters its first iteration runs one
// bucket for everything, and it then rebuilds the buckets once in the order the gradients
// became ready on rank 0; with find_unused_parameters it assigns over registration order and
// reverses the list, so its small first bucket holds the first-registered parameters and is
// reduced last. wick starts from reverse registration order in every mode and rebuilds the
// buckets once, at the end of the first synchronised backward, in the order its gradients
// arrived (without find_unused_parameters, or with static_graph; Note [Bucket rebuild],
// reducer.cpp), so that a late gradient does not hold back every bucket after its own.
//
// Note [Gradients as bucket views]
// With gradient_as_bucket_view, the hook that fills a slot then makes the slot the parameter's
// .grad (a view of the bucket), and the end of backward has nothing to copy back: the all-reduce
// averaged .grad in place. When .grad already is the slot (zero_grad(false), no_sync(), a second
// backward), the gradient was accumulated in the bucket itself and the hook only scales it.
// zero_grad() (set_to_none) drops the view; the next backward's hook copies the fresh gradient
// in and makes the slot .grad again. The values are those of the default mode, bit for bit.
// What differs: the parameters' gradients share the buckets' memory (one version counter per
// bucket), and a parameter whose .grad is its slot is given a copy of it first wherever the
// slot is about to hold something else (a locally unused parameter's zeros, a joined rank's
// shadow collectives), so its .grad keeps its values.
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "wick/distributed/comm_hook.h"
#include "wick/distributed/join.h"
#include "wick/distributed/process_group.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/value.h"

namespace wick::distributed {

namespace detail {
class Reducer;
}

struct DistributedDataParallelOptions {
  /// The cap of every bucket after the first, in MiB (PyTorch's bucket_cap_mb).
  double bucket_cap_mb = 25;
  /// The cap of the first bucket in bytes (PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES).
  int64_t first_bucket_bytes = 1024 * 1024;
  /// Copy rank 0's buffers to every rank before a forward that follows a forward with grad
  /// outside no_sync, and before the first (PyTorch's rule; Note [When buffers are broadcast]).
  bool broadcast_buffers = true;
  /// Find the parameters a forward did not use, so that backward still completes the buckets.
  bool find_unused_parameters = false;
  /// Make each parameter's .grad a view of its slot in its bucket, so that backward copies each
  /// gradient into the bucket once and nothing back (PyTorch's gradient_as_bucket_view; Note
  /// [Gradients as bucket views]).
  bool gradient_as_bucket_view = false;
  /// The graph is the same every iteration: the first synchronised backward learns how many
  /// gradients each parameter gets (none: unused; two or more: a parameter used inside and
  /// outside a reentrant activation checkpoint) and reduces at its end; later ones reduce each
  /// parameter once its last gradient has arrived, with no graph walk (PyTorch's static_graph;
  /// Note [Static graph]). A backward that deviates is a StateError. Not with enable_join().
  bool static_graph = false;
  /// The group to reduce over; null: the default group (init_process_group()).
  std::shared_ptr<ProcessGroup> process_group;
  /// Parameters and buffers (their names in the wrapped module's named_parameters() and
  /// named_buffers()) that DDP leaves alone: not compared or copied at construction, not
  /// bucketed (their .grad stays this rank's own), not broadcast before a forward or after join
  /// (PyTorch's _set_params_and_buffers_to_ignore_for_model; Note [Ignored parameters and
  /// buffers]). A name the module does not have is a ValueError.
  std::vector<std::string> params_and_buffers_to_ignore;
};

/// Time spent on gradient communication, summed over the backwards since construction (or
/// reset_comm_stats()). Read it between iterations.
struct CommStats {
  int64_t backwards = 0;            ///< synchronised backwards counted
  int64_t buckets = 0;              ///< bucket all-reduces run
  double allreduce_seconds = 0;     ///< from each bucket's launch to its completion, summed
  double exposed_wait_seconds = 0;  ///< time the end-of-backward callback waited for them
};

class DistributedDataParallel : public nn::Cloneable<DistributedDataParallel>, public Joinable {
 public:
  /// Wraps `module` (already on its device). Collective: every rank must construct it at the
  /// same point. ValueError on every rank naming the first parameter or buffer that differs when
  /// the ranks' modules do not match (count, dtype, every dim, requires_grad), or when no
  /// parameter requires grad (PyTorch's "DistributedDataParallel is not needed ..."); nothing is
  /// copied then. StateError when no process group is running.
  explicit DistributedDataParallel(std::shared_ptr<nn::Module> module, DistributedDataParallelOptions options = {});
  DistributedDataParallel(const DistributedDataParallel&) = default;  // clone(); Joinable's copy joins nothing
  /// Ends enable_join()'s Join, if any, without the join loop.
  ~DistributedDataParallel() override;

  /// Runs the module on this rank's inputs (and, before that, the checks and the buffer
  /// broadcast of Note [What DistributedDataParallel promises]).
  nn::Value forward_value(const std::vector<nn::Value>& args) override;
  /// One tensor in, one tensor out.
  Tensor forward(const Tensor& input);

  nn::Module& module() const { return *child_ptr(module_); }
  std::shared_ptr<nn::Module> module_ptr() const { return child_ptr(module_); }
  ProcessGroup& process_group() const { return *options_.process_group; }
  const DistributedDataParallelOptions& options() const { return options_; }

  /// The buckets, as indices into module().parameters() (those that require grad), in bucket
  /// order (Note [Bucket assignment]): reverse registration order until the first synchronised
  /// backward ends, then the order its gradients arrived in (Note [Bucket rebuild]).
  const std::vector<std::vector<size_t>>& bucket_indices() const;

  /// RAII: while alive, backward only accumulates into .grad, without communication
  /// (torch's `with ddp.no_sync():`). The first backward after it averages everything
  /// accumulated.
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(std::shared_ptr<detail::Reducer> reducer);
    ~NoSyncGuard();
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    std::shared_ptr<detail::Reducer> reducer_;
    bool previous_;
  };
  [[nodiscard]] NoSyncGuard no_sync() const {
    reducer();  // a clone's refusal
    return NoSyncGuard(reducer_);
  }

  /// Uneven inputs (PyTorch's `with ddp.join():`, Note [Join]): a Join (join.h) over this module
  /// alone. Call enable_join() on every rank before the training loop: from then on every
  /// forward (training or eval, with or without grad) first tells the other ranks that this
  /// rank is still training and what that forward will run. That is a collective, so the ranks
  /// still training must run the same forwards, evaluation ones included. A rank whose data has
  /// run out calls join(): it shadows the collectives of the ranks still training, contributing
  /// zero gradients, until every rank has joined. The synchronised gradient is the sum over the
  /// ranks divided by the world size (divide_by_initial_world_size, PyTorch's default: while
  /// ranks have joined it is smaller than the active ranks' average), or with
  /// divide_by_initial_world_size false by the number of ranks still training at that forward
  /// (the active ranks' average). Meanwhile buffers are broadcast from the highest rank still
  /// training (PyTorch's _find_common_rank), not rank 0, and a joined rank's .grad receives the
  /// synchronised gradients. Then every rank gets the parameters and buffers of the highest
  /// last joiner (the ranks that ran the most forwards since enable_join(), with or without
  /// grad). Every training forward of an enabled rank must be followed by its backward.
  /// ValueError with a synchronised BatchNorm, StateError with static_graph. To combine with a
  /// ZeroRedundancyOptimizer, or for throw_on_early_termination, use a Join directly.
  void enable_join(bool divide_by_initial_world_size = true);
  void join();

  /// Makes `hook` synchronise every gradient bucket instead of the built-in averaging
  /// all-reduce (PyTorch's register_comm_hook; the hook's state is what it captures; ready-made
  /// hooks: ddp_comm_hooks.h, powersgd_hook.h). Every rank must register an equivalent hook at the
  /// same point. The buckets then hold the gradients undivided, and the hook's result becomes the
  /// gradients (Note [Communication hooks], comm_hook.h). ValueError for an empty hook; StateError
  /// when a hook is already registered, during a backward, or on a clone.
  void register_comm_hook(CommHook hook);

  CommStats comm_stats() const;
  void reset_comm_stats();
  std::string extra_repr() const override;
  /// A clone or replica of a DistributedDataParallel has no reducer: its forward, no_sync, join
  /// and statistics raise a StateError that says to wrap a copy of the module instead.
  void on_replicated() override;

  // Joinable (Note [Join]).
  ProcessGroup& join_process_group() const override;
  std::string join_name() const override { return "DistributedDataParallel"; }
  size_t join_payload_size() const override;
  void join_check(const JoinOptions& options) const override;
  void join_started(const JoinOptions& options) override;
  void join_ended() override;
  void join_main_hook(const JoinNotification& n) override;
  void join_post_hook(int last_joiner) override;

 private:
  static constexpr int64_t kJoinPayloadFixed = 3;  // [sync, buffers, iteration], then a one-hot of the ranks
  detail::Reducer& reducer() const;
  /// The buffers the next forward broadcasts (Note [When buffers are broadcast]): none, or the
  /// synced ones.
  std::vector<Tensor> buffers_to_sync() const;
  /// Broadcasts `buffers` from `root` (0, or under join the highest active rank).
  void sync_buffers(const std::vector<Tensor>& buffers, int root);
  /// The module's parameters and buffers DDP synchronises (those not ignored), as they are now.
  std::vector<Tensor> synced_buffers() const;
  std::vector<Tensor> synced_parameters() const;
  /// Under join: this rank's notification (Note [Join]); returns the rank to broadcast the
  /// buffers from.
  int announce_active(bool syncs_buffers, bool backward_syncs);
  /// The highest rank still training at notification `n`.
  int buffer_root_of(const JoinNotification& n) const;

  nn::ChildSlot<nn::Module> module_;
  DistributedDataParallelOptions options_;
  std::shared_ptr<detail::Reducer> reducer_;
  bool divide_by_initial_world_size_ = true;  // the Join's (Note [Join])
  // PyTorch's require_forward_param_sync: the last forward ran with grad outside no_sync (true
  // before the first forward). Note [When buffers are broadcast].
  bool require_forward_param_sync_ = true;
  std::unordered_set<std::string> ignored_;  // options_.params_and_buffers_to_ignore
  std::shared_ptr<Join> own_join_;           // enable_join()'s; last, so that it ends first
};

}  // namespace wick::distributed
