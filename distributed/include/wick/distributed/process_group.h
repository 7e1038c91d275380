#pragma once
// ProcessGroup: the collectives that the ranks of one job run together (torch.distributed's
// ProcessGroup), and Work, the handle of one collective in flight.
//
// Note [Collectives and their contract]
// * Every rank calls the same collectives in the same order. A collective is queued to the
//   group's communication thread and returns a Work at once; the tensors it names must stay
//   untouched (not read, not written) until work->wait() returns.
// * Before moving any data the ranks exchange a fingerprint of the call (Note [Collective
//   fingerprints], fingerprint.h): collective kind, dtype, device, shape, reduce op or root, and
//   the caller's tag (Note [Collective tags]); the sequence number travels with it for the
//   messages but is not compared (the k-th exchange of every rank pairs with the k-th of the
//   others, so it always agrees). When they disagree, or when one rank refused its own
//   arguments, EVERY rank's Work fails with the same wick::Error naming the ranks and what each
//   passed, and no rank waits for data.
// * A collective that does not finish within the group's timeout ends the whole job: the rank
//   that notices prints the collective, its sequence number, the rank and the tensor sizes to
//   stderr and calls MPI_Abort (mpirun then stops every rank). A stalled or dead peer therefore
//   never leaves the others waiting forever.
// * all_reduce results are identical, bit for bit, on every rank (the engine reduces each
//   element once and hands the result out).
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::distributed {

/// The reduction of all_reduce. Avg is the sum divided by the world size (floating point only).
enum class ReduceOp { Sum, Avg };

/// Note [Collective tags]
/// What a caller that runs its collectives in numbered rounds says one call is, compared in the
/// fingerprint like the shape: ranks out of step by a round then fail on every rank instead of
/// pairing different rounds' data (same shapes, so nothing else would notice).
/// DistributedDataParallel tags each bucket all-reduce with {its synchronised iteration (from 1),
/// the bucket index}, and its used-parameter map with {iteration, -1}. {0, 0}: untagged.
struct CollectiveTag {
  int64_t iteration = 0;
  int64_t index = 0;
};

/// The handle of one collective in flight (torch's Work).
class Work {
 public:
  virtual ~Work() = default;
  /// Blocks until the collective has finished; rethrows its error (a wick::Error) if it failed.
  virtual void wait() = 0;
  /// True once the collective has finished, successfully or not. Never blocks.
  virtual bool is_completed() const = 0;
  /// Seconds the backend spent on it, from taking it off its queue (fingerprint exchange
  /// included) to completion; 0 until completed.
  virtual double seconds() const = 0;
};

/// The collectives of one group of processes.
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  /// This process's rank in [0, size()).
  virtual int rank() const = 0;
  /// The number of processes.
  virtual int size() const = 0;
  /// "mpi", "nccl".
  virtual std::string backend_name() const = 0;
  /// How long one collective may take before the job is aborted.
  virtual std::chrono::milliseconds timeout() const = 0;
  /// The device whose tensors the collectives move: the CPU for "mpi", this rank's GPU for
  /// "nccl" (Note [One device per process]). Not in torch's ProcessGroup (its backends take any
  /// device of their kind); wick's groups are bound to one device, and DistributedDataParallel
  /// stages its bookkeeping tensors there.
  virtual Device device() const = 0;
  /// Raises the wick::Error that a collective named `op` would raise for `t` on this rank's
  /// side (a device or size the backend cannot move), without communicating; returns when `t`
  /// is acceptable. Callers that must learn it on every rank before a collective changes
  /// anything (DistributedDataParallel's constructor) exchange the outcome themselves. Not in
  /// torch's ProcessGroup. The default accepts every tensor.
  virtual void check_operand(std::string_view op, const Tensor& t) const {
    (void)op;
    (void)t;
  }

  /// Reduces `tensor` element-wise over every rank, in place on every rank.
  std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum) {
    return all_reduce(tensor, op, CollectiveTag{});
  }
  /// The same, with `tag` in the call's fingerprint: every rank must pass the same tag, else
  /// every rank's Work fails with a ValueError naming each rank's tag (Note [Collective tags]).
  virtual std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op, const CollectiveTag& tag) = 0;
  /// Copies rank `root`'s `tensor` into every other rank's `tensor` (same shape and dtype).
  virtual std::shared_ptr<Work> broadcast(const Tensor& tensor, int root = 0) = 0;
  /// outputs[r] receives rank r's `input`; `outputs` holds size() tensors of input's shape,
  /// dtype and device.
  virtual std::shared_ptr<Work> all_gather(const std::vector<Tensor>& outputs, const Tensor& input) = 0;
  /// Completes once every rank has called it.
  virtual std::shared_ptr<Work> barrier() = 0;
};

}  // namespace wick::distributed
