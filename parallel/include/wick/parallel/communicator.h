#pragma once
// Communicator: how comm moves bytes between devices (docs/parallel.md, "Choosing a communicator").
//
// Note [Choosing a communicator]
// comm (comm.h) never broadcasts or sums across devices itself; for broadcast, reduce_add and
// their coalesced forms it asks select_communicator() for the implementation that fits the
// devices taking part, then hands it whole buckets. (scatter and gather are not collectives
// here: they copy each chunk to or from its device with the backends' copy (native::copy_),
// one point-to-point copy per device, and never reach a Communicator.) The implementations:
//  - an NCCL communicator, when one is registered (builds with CUDA register it lazily, see
//    nccl_communicator.cpp), every device of the call is a CUDA device, the devices are
//    pairwise distinct and NCCL supports the dtype. Everything comm hands it is a dense,
//    contiguous flat buffer, so NCCL's "dense, contiguous, CUDA, distinct devices" rule holds;
//  - the local communicator otherwise: CPU devices, mixed CPU/CUDA lists, duplicate devices.
//    It copies with memcpy (or the backends' copy) and sums with plain loops on the host (or
//    native ops on accelerators).
// Registered factories are asked in registration order; the first that returns a communicator
// wins, and the local one is the fallback. docs/parallel.md restates the rule.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::parallel {

class Communicator {
 public:
  virtual ~Communicator() = default;
  /// "local", "nccl", ... (tests and error messages).
  virtual std::string name() const = 0;

  /// Copies tensors[0] (the root) into tensors[1..]. All have the same dtype and numel and are
  /// contiguous; an entry that is the root itself (same data) is skipped.
  virtual void broadcast(const std::vector<Tensor>& tensors) = 0;
  /// output = inputs[0] + inputs[1] + ... (in list order), written into `output`, which lives on
  /// inputs[root]'s device. Inputs are not modified. Same dtype and numel, contiguous.
  virtual void reduce(const std::vector<Tensor>& inputs, const Tensor& output, int root) = 0;
  /// outputs[i] = sum of all inputs, on inputs[i]'s device (outputs[i] may be inputs[i]).
  virtual void all_reduce(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) = 0;
  /// Collectives issued between group_begin and group_end may be launched together (NCCL's
  /// ncclGroupStart/End). The local communicator runs each at once.
  virtual void group_begin() {}
  virtual void group_end() {}

  /// One bucket of a coalesced broadcast: `pieces` (on the root device, any layout) are packed
  /// back to back, in order, into every flat buffer of `flats` (1-d, contiguous, one per
  /// destination device, sized to hold all pieces). The default flattens the pieces on the root
  /// and calls broadcast once (one transfer per bucket); the local communicator copies each
  /// piece straight into place, skipping the staging copy.
  virtual void broadcast_bucket(const std::vector<Tensor>& pieces, const std::vector<Tensor>& flats);
  /// One bucket of a coalesced reduce: pieces[d][i] is tensor i of device d; `flat` (1-d,
  /// contiguous, on the destination) receives sum_d pieces[d][i] packed back to back. The
  /// default flattens each device's pieces and calls reduce once.
  virtual void reduce_bucket(const std::vector<std::vector<Tensor>>& pieces, const Tensor& flat);
  /// One bucket of a coalesced reduce into separate outputs: outs[i] (1-d, contiguous, on the
  /// destination) receives sum_d pieces[d][i]. Used where wants_flat_buckets() is false. The
  /// default calls reduce_bucket once per tensor; the local communicator splits the whole
  /// bucket's range over the devices' threads at once.
  virtual void reduce_bucket_each(const std::vector<std::vector<Tensor>>& pieces, const std::vector<Tensor>& outs);
  /// Whether reduce_add_coalesced hands this communicator whole buckets (one collective per
  /// bucket: NCCL) or one tensor at a time, each output then owning its memory (the local
  /// communicator, where no bytes cross a link: Note [Coalesced outputs and version counters]).
  virtual bool wants_flat_buckets() const { return true; }
};

/// The local communicator (always available; thread-safe, stateless).
Communicator& local_communicator();

/// Returns a communicator for a collective over `devices` moving `dtype`, or nullptr when the
/// factory does not apply (Note [Choosing a communicator]).
using CommunicatorFactory =
    std::function<std::shared_ptr<Communicator>(const std::vector<Device>& devices, DType dtype)>;

/// Adds a factory (e.g. the NCCL one) and returns its id. Thread-safe.
int register_communicator_factory(std::string name, CommunicatorFactory factory);
/// Removes a factory added by register_communicator_factory (tests use it); unknown ids are ignored.
void unregister_communicator_factory(int id);

/// The communicator for a collective over `devices` (Note [Choosing a communicator]). The
/// returned pointer stays valid while it is held.
std::shared_ptr<Communicator> select_communicator(const std::vector<Device>& devices, DType dtype);

/// Concatenates `pieces` (same dtype and device) into one new 1-d contiguous tensor.
Tensor flatten_dense(const std::vector<Tensor>& pieces);

}  // namespace wick::parallel
