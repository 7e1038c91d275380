#pragma once
// NCCL for one rank of a multi-process job (Note [NCCL ranks] in docs/distributed.md).
//
// cuda/include/wick/cuda/nccl.h drives every device of one process from that process
// (ncclCommInitAll). A multi-process job instead runs one process per device: each process
// creates its rank's communicator from a unique id that rank 0 made and handed to the others
// (wick::distributed sends it with MPI_Bcast), and queues its collectives on a stream it chooses.
// The header includes no NCCL or CUDA header: the unique id is plain bytes, streams are
// wick::cuda::Stream.
#include <array>
#include <atomic>
#include <memory>
#include <string>

#include "wick/core/tensor.h"
#include "wick/cuda/stream.h"

namespace wick::cuda {

/// ncclUniqueId's bytes (NCCL_UNIQUE_ID_BYTES).
using NcclUniqueId = std::array<char, 128>;

/// A fresh unique id (ncclGetUniqueId); rank 0 makes it, every rank passes it to
/// NcclRankCommunicator::create. BackendError when NCCL cannot make one (no network interface).
NcclUniqueId nccl_get_unique_id();

/// The reductions of NcclRankCommunicator::all_reduce. Avg is ncclAvg where the NCCL headers
/// have it (2.10 and later), else a sum followed by a division on the same stream; floating
/// point only. Max on bool tensors is a logical or.
enum class NcclRankOp { Sum, Avg, Max };

/// True when Avg is NCCL's own ncclAvg (false: sum, then divide).
bool nccl_has_native_avg();

/// One rank's NCCL communicator over `world_size` processes, bound to one device.
class NcclRankCommunicator {
 public:
  /// ncclCommInitRank on `device`; blocks until every rank of the job called it with the same
  /// id. DeviceUnavailable for a device that does not exist, BackendError when NCCL fails.
  static std::unique_ptr<NcclRankCommunicator> create(const NcclUniqueId& id, int world_size, int rank, int device);
  /// ncclCommDestroy, unless cancel_collectives() ran.
  ~NcclRankCommunicator();
  NcclRankCommunicator(const NcclRankCommunicator&) = delete;
  NcclRankCommunicator& operator=(const NcclRankCommunicator&) = delete;

  int device() const { return device_; }
  int rank() const { return rank_; }
  int world_size() const { return world_size_; }

  /// In place: `t` = op over every rank's `t`, queued on `s`. `t` must be a contiguous CUDA
  /// tensor on device() (the caller checked it; ValueError otherwise).
  void all_reduce(const Tensor& t, NcclRankOp op, Stream s);
  /// `t` = rank `root`'s `t`, queued on `s`.
  void broadcast(const Tensor& t, int root, Stream s);
  /// `output` (contiguous, world_size() * input.numel() elements, input's dtype) receives every
  /// rank's `input` in rank order, queued on `s`.
  void all_gather(const Tensor& input, const Tensor& output, Stream s);

  /// ncclCommAbort: cancels the collectives in flight on this communicator (for a watchdog that
  /// gives up on them); the process goes on. Safe to call from another thread while a
  /// collective hangs; the communicator is unusable afterwards. Never throws.
  void cancel_collectives() noexcept;
  /// ncclCommGetAsyncError: empty while the communicator is healthy (or its collectives are
  /// still in progress), else NCCL's description of the failure that broke it (a peer died, the
  /// network failed). A watchdog polls it from its own thread. Never throws.
  std::string async_error() const noexcept;

 private:
  NcclRankCommunicator(void* comm, int world_size, int rank, int device)
      : comm_(comm), world_size_(world_size), rank_(rank), device_(device) {}
  void* comm_;  // ncclComm_t
  int world_size_, rank_, device_;
  std::atomic<bool> aborted_{false};
};

}  // namespace wick::cuda
