#pragma once
// Reducer: the gradient buckets of one DistributedDataParallel and the per-backward state that
// fills, launches and unpacks them (Note [Gradient buckets and overlap]).
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "wick/core/removable_handle.h"
#include "wick/distributed/comm_hook.h"
#include "wick/distributed/distributed_data_parallel.h"

namespace wick::distributed::detail {

class Reducer : public std::enable_shared_from_this<Reducer> {
 public:
  /// `params` (with their dotted names) in registration order; they must all require grad.
  Reducer(std::vector<Tensor> params, std::vector<std::string> names, std::shared_ptr<ProcessGroup> group,
          std::vector<int64_t> size_limits, bool find_unused_parameters, bool gradient_as_bucket_view,
          bool static_graph);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  /// Registers the hooks (needs shared_from_this, so not in the constructor).
  void install_hooks();

  /// At the start of a forward with grad mode on: fixes and returns whether its backward
  /// synchronises (no_sync()'s state now). StateError, for good (every later call raises it
  /// again: the ranks' collectives may no longer pair), when an earlier backward did not finish,
  /// or naming the parameters that got no gradient in the last synchronised backward (without
  /// find_unused_parameters; Note [An unfinished reduction is final]).
  bool prepare_for_forward();
  /// At the end of such a forward whose backward synchronises, with its outputs: arms the
  /// reduction of the next backward (Note [One reduction per forward]) and, with
  /// find_unused_parameters and without static_graph, walks their graph to find the parameters
  /// the forward did not use.
  void prepare_for_backward(const std::vector<Tensor>& outputs);

  bool sync() const;
  void set_sync(bool on);
  /// What the gradients of the following synchronised backwards are divided by (each rank's
  /// share is scaled by its inverse before the sum): the world size (the default), or, under
  /// join with divide_by_initial_world_size false, the number of ranks still training (Note
  /// [Join]). At least 1.
  void set_divisor(int64_t divisor);
  /// Makes `hook` synchronise every bucket from the next bucket on (Note [Communication hooks]).
  /// StateError when a hook is already registered (once only, as PyTorch) or during a backward.
  void set_comm_hook(CommHook hook);

  /// The buckets as indices into the parameters, in bucket order: reverse registration order
  /// until the first synchronised backward ends, then the order its gradients arrived in (Note
  /// [Bucket rebuild]). Read it between iterations.
  const std::vector<std::vector<size_t>>& bucket_indices() const { return bucket_params_; }
  /// For a joined rank: the collectives one synchronised backward of the others runs, with
  /// zero gradients (every bucket in order, then the used map with find_unused_parameters),
  /// tagged with `iteration`, the active ranks' synchronised iteration, which this reducer
  /// adopts (Note [Tagged buckets]); the results then become .grad as in the active ranks'
  /// backward. Rethrows the first failure once every one has finished.
  void shadow_backward(int64_t iteration);
  /// The synchronised iterations so far: forwards whose backward synchronises (Note [Tagged
  /// buckets]).
  int64_t iteration() const;
  CommStats stats() const;
  void reset_stats();

 private:
  struct Bucket {
    Tensor flat;                     // the bucket: one flat tensor of its dtype and device
    std::vector<size_t> params;      // indices into params_
    std::vector<int64_t> offsets;    // each param's first element in flat
    size_t pending = 0;              // params not ready yet in this backward
    std::shared_ptr<Work> work;      // without a hook: the all-reduce
    std::shared_ptr<Future> future;  // with one: what the hook returned
    std::chrono::steady_clock::time_point launched;
  };

  void on_gradient_ready(size_t index);
  /// Replaces the buckets with those of compute_bucket_assignment_by_size over the parameters in
  /// `order` (indices into params_, the earliest ready first). A parameter whose .grad is its
  /// old slot gets its new slot as .grad, with the same values.
  void build_buckets(const std::vector<size_t>& order);
  /// The parameters' indices, last registered first: the first layout's order, and the rebuild's
  /// order among equal arrivals.
  std::vector<size_t> reverse_registration_order() const;
  /// The first synchronised backward's end (and a joined rank's shadow of it): all-reduces
  /// `arrival` (this rank's arrival positions, zeros on a joined rank) and rebuilds the buckets in
  /// the summed order (Note [Bucket rebuild]).
  void rebuild_buckets_locked(const std::vector<double>& arrival);
  /// Whether this backward's end rebuilds the buckets (PyTorch's should_rebuild_buckets).
  bool should_rebuild() const { return !rebuilt_ && (!find_unused_ || static_graph_); }
  /// find_unused_parameters without static_graph: the graph walk and the used map every iteration.
  bool dynamic_find_unused() const { return find_unused_ && !static_graph_; }
  /// static_graph's first synchronised backward, which learns the graph (Note [Static graph]).
  bool learning() const { return static_graph_ && !learned_; }
  void mark_ready_locked(size_t index, bool has_grad);
  void launch_ready_buckets_locked();
  void finalize_backward();
  /// Runs the hook on bucket `b` (its current contents) with `tag`; the hook's future.
  std::shared_ptr<Future> run_hook_locked(size_t b, CollectiveTag tag);
  /// Waits for bucket `b`'s future and puts the hook's result into the bucket.
  void adopt_hook_result_locked(size_t b);
  /// Copies the first `buckets` buckets' results into .grad (or makes the slots .grad, bucket
  /// views), skipping the parameters no rank used (`global_used`: the used map's sums, or empty).
  void copy_out_locked(size_t buckets, const std::vector<double>& global_used);
  /// The reducer's lock; StateError when the calling thread is inside this reducer's hook (it
  /// would wait for itself).
  std::unique_lock<std::mutex> locked() const;
  void reset_iteration_locked();
  Tensor slot(size_t bucket, size_t k) const;
  /// True when `param`'s .grad is its slot itself (gradient_as_bucket_view).
  bool grad_is_slot(size_t param, const Tensor& slot) const;
  /// gradient_as_bucket_view: gives `param` a .grad of its own (a copy of the slot) when its
  /// .grad is the slot, before the slot is overwritten with something that is not its gradient.
  void detach_grad_from_slot(size_t param, const Tensor& slot);

  std::vector<Tensor> params_;
  std::vector<std::string> names_;
  std::shared_ptr<ProcessGroup> group_;
  bool find_unused_;
  bool bucket_view_;                  // gradient_as_bucket_view (Note [Gradients as bucket views])
  bool static_graph_;                 // Note [Static graph]
  std::vector<int64_t> size_limits_;  // compute_bucket_assignment_by_size's: first bucket, the rest
  bool rebuilt_ = false;              // Note [Bucket rebuild]
  std::vector<double> arrival_;       // per param: 1 + position of its last gradient this backward; 0: none
  double arrivals_ = 0;               // gradients counted into arrival_ this backward
  bool learned_ = false;              // static_graph: the first synchronised backward finished
  std::vector<int> grad_count_;       // per param: gradients its hook saw in this backward
  std::vector<int> expected_grads_;   // static_graph: per param, the learned count
  std::vector<char> global_unused_;   // static_graph: no rank used it in the learned backward
  std::vector<std::vector<size_t>> bucket_params_;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<size_t, size_t>> where_;  // param -> (bucket, position in bucket)
  std::vector<RemovableHandle> hooks_;
  CommHook comm_hook_;  // register_comm_hook's; empty: the built-in averaging all-reduce

  mutable std::mutex mutex_;
  bool sync_ = true;            // no_sync() is not active
  bool iteration_sync_ = true;  // sync_ as the last forward saw it: what its backward does
  bool in_backward_ = false;    // the end-of-backward callback is queued
  // The last synchronising forward's graph was not reduced yet (Note [One reduction per
  // forward]; PyTorch's expect_autograd_hooks_).
  bool expect_hooks_ = false;
  bool unused_marked_ = false;  // the unused parameters of this iteration were marked ready
  size_t next_bucket_ = 0;      // the next bucket to launch
  int64_t iteration_ = 0;       // synchronising forwards so far (Note [Tagged buckets])
  int64_t divisor_ = 1;         // set_divisor(); the group's size from construction
  std::vector<char> ready_;     // per param, this backward
  std::vector<char> used_;      // per param: got a gradient on this rank, this backward
  std::vector<char>
      unused_;  // per param: not reached from the last forward's outputs (static_graph: no gradient when learned)
  std::vector<char> used_unsynced_;  // per param: got a gradient in a no_sync() backward since the last sync
  std::vector<size_t> unfinished_;   // params that got no gradient in the last backward
  std::string broken_;               // set when a reduction did not finish: every later forward raises it
  CommStats stats_;
};

}  // namespace wick::distributed::detail
