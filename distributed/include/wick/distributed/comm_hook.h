#pragma once
// Communication hooks: what DistributedDataParallel runs to synchronise one gradient bucket
// (PyTorch's DDP communication hooks: `ddp.register_comm_hook(state, hook)`, GradBucket and
// torch.futures.Future).
//
// Note [Communication hooks]
// Without a hook, each bucket holds its gradients times 1/world size and is all-reduced (sum).
// With a hook (DistributedDataParallel::register_comm_hook), the bucket holds the gradients as
// they are (not divided: the hook decides the scaling, as in PyTorch), and the hook is called
// with it when the bucket is full, during backward, on the thread that filled it. It starts
// whatever communication it likes and returns a Future of the bucket's new contents; when
// backward ends DDP waits for the buckets' futures in bucket order and copies each result into
// the parameters' .grad. So:
//  - every rank must register an equivalent hook, and a hook must start the same collectives in
//    the same order on every rank (else ranks wait on each other until the group's timeout);
//  - a hook must not call back into its DistributedDataParallel (a StateError);
//  - the result must have the bucket's number of elements, dtype and device (a ValueError on the
//    rank where it does not, naming the bucket); it may be the bucket's buffer itself;
//  - a joined rank (Note [Join]) runs the hook on buckets of zeros, so its collectives pair with
//    those of the ranks still training.
// Future::then differs from PyTorch's: the continuation runs on the thread that first waits
// for the returned future (for DDP, the end of backward, in bucket order), not on the thread
// that completes the first one. Ranks then start a continuation's collectives in the same order
// without any locking, but only a hook's first collective overlaps with backward.
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "wick/core/tensor.h"
#include "wick/distributed/process_group.h"

namespace wick::distributed {

/// A tensor that becomes available when a communication finishes (torch.futures.Future
/// holding one tensor). Thread-safe.
class Future : public std::enable_shared_from_this<Future> {
 public:
  /// Already done, holding `value`.
  static std::shared_ptr<Future> completed(Tensor value);
  /// Done when `work` is; then holds `value` (the tensor that `work` writes). ValueError when
  /// `work` is null.
  static std::shared_ptr<Future> of(std::shared_ptr<Work> work, Tensor value);

  /// A future holding fn(this future's value). fn runs once, on the thread that first waits for
  /// the returned future, after this one is done (Note [Communication hooks]); if it throws, every
  /// wait() of the returned future rethrows that. ValueError when fn is empty.
  std::shared_ptr<Future> then(std::function<Tensor(const Tensor&)> fn);
  /// Blocks until done and returns the value; rethrows the communication's or the
  /// continuation's error (every call, not only the first).
  Tensor wait();
  /// True when wait() returns without blocking on a communication (a then() future: once its
  /// continuation has run).
  bool is_completed() const;

 private:
  Future() = default;
  mutable std::mutex mutex_;
  std::shared_ptr<Work> work_;               // of(): the communication
  std::shared_ptr<Future> parent_;           // then(): the future fn waits for
  std::function<Tensor(const Tensor&)> fn_;  // then(): the continuation
  bool done_ = false;                        // value_ or error_ is final
  Tensor value_;
  std::exception_ptr error_;
};

/// One bucket handed to a communication hook (PyTorch's dist.GradBucket).
class GradBucket {
 public:
  /// `buffer` is the flat bucket; `parameters[k]`'s gradient is buffer's elements from
  /// `offsets[k]` on, in its shape. `tag` is what DDP would tag this bucket's all-reduce with
  /// (Note [Collective tags]).
  GradBucket(int64_t index, int64_t bucket_count, Tensor buffer, std::vector<Tensor> parameters,
             std::vector<int64_t> offsets, CollectiveTag tag);

  /// The bucket's position in bucket order (0: the first reduced).
  int64_t index() const { return index_; }
  /// True for the last bucket of the backward.
  bool is_last() const { return index_ + 1 == bucket_count_; }
  /// The flat bucket: the gradients of parameters(), one after the other, not divided by the
  /// world size. A hook may change it in place and return it.
  const Tensor& buffer() const { return buffer_; }
  /// Views of buffer(), one per parameter, in its shape.
  std::vector<Tensor> gradients() const;
  /// The parameters whose gradients the bucket holds, in bucket order.
  const std::vector<Tensor>& parameters() const { return parameters_; }
  /// {DDP's synchronised iteration, index()}: pass it to ProcessGroup::all_reduce so that ranks
  /// out of step fail on every rank instead of mixing iterations (not in PyTorch).
  CollectiveTag tag() const { return tag_; }

 private:
  int64_t index_;
  int64_t bucket_count_;
  Tensor buffer_;
  std::vector<Tensor> parameters_;
  std::vector<int64_t> offsets_;
  CollectiveTag tag_;
};

/// A communication hook: starts the communication of one bucket and returns the future of its
/// synchronised contents (PyTorch's `hook(state, bucket) -> Future[Tensor]`; state is whatever
/// the function object captures).
using CommHook = std::function<std::shared_ptr<Future>(GradBucket&)>;

}  // namespace wick::distributed
