#pragma once
// The NCCL backend of ProcessGroup (CUDA tensors, one device per process). Built only when CMake
// found CUDA (WICK_WITH_CUDA); it reaches NCCL and CUDA through wick::cuda's rank-level API
// (cuda/include/wick/cuda/nccl_rank.h), so no CUDA or NCCL header is included here.
//
// Note [The NCCL process group]
// * Start-up: one thread owns MPI, as in the MPI backend (Note [The communication thread],
//   comm_thread.h: the same CommThread and MPI helpers). It initializes MPI, picks this rank's device (cuda:(local rank
//   % device count), Note [One device per process]), lets rank 0 make an NCCL unique id and hands it to every rank with
//   MPI_Bcast (as llm.c does), then creates the rank's communicator (ncclCommInitRank).
// * A collective checks its tensor on the calling thread (a CPU tensor, or one on another GPU,
//   is refused), stages a contiguous copy when needed and records an event on the caller's
//   current stream, then queues the call. The thread exchanges the fingerprint over MPI (Note
//   [Collective fingerprints]; on the CPU, so a mismatch fails on every rank and no NCCL kernel
//   waits for a peer that will never come), makes the group's NCCL stream (one from the device's
//   pool) wait on the caller's event, queues the NCCL kernel on that stream and records the
//   Work's end event after it. The caller's stream is never blocked by the queueing, and
//   backward can go on computing while the kernel runs (PyTorch's ProcessGroupNCCL pattern).
// * Work::wait() blocks the host only until the kernel is queued (after the fingerprint
//   exchange), then makes the caller's *current stream* wait on the end event: later work on
//   that stream sees the result, and a host read through it (.item(), .to(kCPU)) waits for it,
//   but the host itself does not wait for the GPU. is_completed() queries the end event.
// * The tensors' memory is marked as used on the NCCL stream (record_stream), so the caching
//   allocator does not hand it out again before the collective has finished with it.
// * Timeout: a watchdog thread polls the end events of the collectives in flight. One not done
//   within the group's timeout makes it print the collective, its sequence number, the rank and
//   the sizes, then call ncclCommAbort (the stuck kernel returns) and MPI_Abort (mpirun stops
//   every rank). The fingerprint exchange has the same timeout on the MPI thread.
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "threaded_process_group.h"
#include "wick/cuda/nccl_rank.h"
#include "wick/cuda/stream.h"

namespace wick::distributed::detail {

class NcclWork;

/// One queued collective of the NCCL backend.
struct NcclTask : QueuedCollective {
  std::shared_ptr<cuda::Event> ready;                                    // recorded on the caller's current stream
  std::function<void(cuda::NcclRankCommunicator&, cuda::Stream)> issue;  // queues the NCCL call(s)
  std::shared_ptr<NcclWork> work;
};

class NcclProcessGroup final : public ThreadedProcessGroup<NcclTask> {
 public:
  using Task = NcclTask;

  /// Starts the thread, which initializes MPI and creates the communicator. DeviceUnavailable
  /// without a CUDA device; BackendError when MPI or NCCL fail to start.
  explicit NcclProcessGroup(std::chrono::milliseconds timeout);
  /// shutdown(): issues every queued collective, waits for the NCCL stream, destroys the
  /// communicator and finalizes MPI.
  ~NcclProcessGroup() override;

  std::string backend_name() const override { return "nccl"; }
  Device device() const override { return Device(DeviceType::CUDA, device_); }
  void check_operand(std::string_view op, const Tensor& t) const override;

  using ProcessGroup::all_reduce;  // the untagged overload
  std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op, const CollectiveTag& tag) override;
  std::shared_ptr<Work> broadcast(const Tensor& tensor, int root) override;
  std::shared_ptr<Work> all_gather(const std::vector<Tensor>& outputs, const Tensor& input) override;
  std::shared_ptr<Work> barrier() override;

 private:
  std::shared_ptr<Work> enqueue(Task task);
  /// The thread's steps (CommThread::Steps).
  void start_up();
  void run(Task& task);
  void tear_down();
  /// start_up's work: MPI, this rank's device, the communicator and the NCCL stream.
  void join_world();
  void watchdog_main();
  /// Prints why, aborts the communicator and ends the process; never returns. On the
  /// communication thread (the one that makes MPI calls) it ends the job with MPI_Abort; on the
  /// watchdog thread it may not call MPI (MPI_THREAD_FUNNELED: the communication thread may be
  /// inside an MPI call), so it exits and mpirun ends the other ranks, as the mpi backend's
  /// watchdog does.
  [[noreturn]] void abort_job(const std::string& what, double waited_seconds, bool on_comm_thread);
  [[noreturn]] void abort_job_because(const std::string& why, bool on_comm_thread);

  int device_ = 0;
  std::unique_ptr<cuda::NcclRankCommunicator> comm_;
  bool in_nccl_init_ = false;  // join_world reached ncclCommInitRank
  cuda::Stream stream_;

  struct InFlight {
    std::shared_ptr<NcclWork> work;
    std::string what;
    std::chrono::steady_clock::time_point issued;
  };
  std::mutex watch_mutex_;
  std::condition_variable watch_cv_;
  std::vector<InFlight> in_flight_;
  bool watch_stop_ = false;
  std::thread watchdog_;
};

}  // namespace wick::distributed::detail
