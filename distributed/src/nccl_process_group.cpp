// The NCCL backend of ProcessGroup (Note [The NCCL process group], nccl_process_group.h).
#include "wick/config.h"

#if WICK_WITH_CUDA

#include <fmt/format.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "collective_args.h"
#include "nccl_process_group.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"
#include "wick/cuda/memory.h"
#include "wick/cuda/runtime.h"
#include "wick/distributed/backend_choice.h"

namespace wick::distributed::detail {

using Clock = std::chrono::steady_clock;

class NcclWork final : public Work {
 public:
  explicit NcclWork(int device) : device_(device) {}

  void wait() override {
    std::shared_ptr<cuda::Event> end;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return state_ != State::Queued; });
      if (error_) std::rethrow_exception(error_);
      end = end_;
    }
    end->block(cuda::get_current_stream(device_));
  }
  bool is_completed() const override {
    std::shared_ptr<cuda::Event> end;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (state_ == State::Queued) return false;
      if (state_ == State::Failed) return true;
      end = end_;
    }
    return end->query();
  }
  double seconds() const override {
    std::shared_ptr<cuda::Event> start, end;
    double host = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (state_ == State::Queued) return 0;
      host = host_seconds_;
      if (state_ == State::Failed) return host;
      start = start_;
      end = end_;
    }
    if (!end->query()) return 0;
    return host + static_cast<double>(start->elapsed_ms(*end)) / 1000.0;
  }

  /// The thread queued the kernel between `start` and `end` (timing events on the NCCL stream).
  void issued(std::shared_ptr<cuda::Event> start, std::shared_ptr<cuda::Event> end, double host_seconds) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      start_ = std::move(start);
      end_ = std::move(end);
      host_seconds_ = host_seconds;
      state_ = State::Issued;
    }
    cv_.notify_all();
  }
  void failed(std::exception_ptr error, double host_seconds) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::move(error);
      host_seconds_ = host_seconds;
      state_ = State::Failed;
    }
    cv_.notify_all();
  }

 private:
  enum class State { Queued, Issued, Failed };
  const int device_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  State state_ = State::Queued;
  std::exception_ptr error_;
  std::shared_ptr<cuda::Event> start_, end_;
  double host_seconds_ = 0;
};

namespace {

constexpr auto kWatchEvery = std::chrono::milliseconds(50);  // the watchdog's polling period

// An event recorded on the caller's current stream of `device`: the NCCL stream waits on it, so
// the collective sees every write the caller queued before calling.
std::shared_ptr<cuda::Event> record_ready(int device) {
  auto e = std::make_shared<cuda::Event>();
  e->record(cuda::get_current_stream(device));
  return e;
}

// The issue step of a collective NCCL runs in place on `buf` (the caller's tensor `t`, or a
// contiguous staging copy of it): `call(comm, buf, stream)` queues the NCCL call, and a staging
// copy is then copied back into `t` on the same stream. Both tensors are marked as used there.
template <class Call>
std::function<void(cuda::NcclRankCommunicator&, cuda::Stream)> in_place(Tensor buf, Tensor t, Call call) {
  return [buf, t, call](cuda::NcclRankCommunicator& comm, cuda::Stream s) mutable {
    cuda::record_stream(buf, s);
    call(comm, buf, s);
    if (!buf.is_same(t)) {
      cuda::StreamGuard on(s);
      cuda::record_stream(t, s);
      t.copy_(buf);
    }
  };
}

}  // namespace

NcclProcessGroup::NcclProcessGroup(std::chrono::milliseconds timeout) : ThreadedProcessGroup(timeout) {
  const std::string why = nccl_unavailable_reason();
  WICK_CHECK_T(DeviceUnavailable, why.empty(),
               "init_process_group: the nccl backend cannot start: {}; use backend "
               "\"mpi\" with CPU tensors",
               why);
  thread_.start({.start_up = [this] { start_up(); },
                 .run = [this](Task& task) { run(task); },
                 .tear_down = [this] { tear_down(); }});
}

NcclProcessGroup::~NcclProcessGroup() { shutdown(); }

void NcclProcessGroup::join_world() {
  start_mpi(world_);
  int local = local_rank_from_environment();
  if (local < 0) {  // no launcher variable: rank among the processes that share this node's memory
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_.rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
  }
  // Every rank agrees before any NCCL call whether all of them have a device; a rank without
  // one would otherwise leave the others inside ncclCommInitRank.
  const int mine = cuda::device_count();
  int fewest = 0;
  MPI_Allreduce(&mine, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  WICK_CHECK_T(DeviceUnavailable, fewest > 0,
               "init_process_group: the nccl backend needs a CUDA device on every rank, but a rank has none (rank {} "
               "has {}); start the job again with backend \"mpi\" (MPI has started, so this process cannot "
               "switch)",
               world_.rank, mine);
  // The same for this rank's own steps (its device, and on rank 0 the unique id): a rank that
  // raised alone would leave the others waiting in the next collective, so every rank learns of
  // a failure and raises.
  cuda::NcclUniqueId id{};
  std::exception_ptr failed;
  try {
    device_ = nccl_device_for_local_rank(local, mine).index;
    cuda::set_device(device_);
    if (world_.rank == 0) id = cuda::nccl_get_unique_id();
  } catch (...) {
    failed = std::current_exception();
  }
  int ok = failed ? 0 : 1, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (failed) std::rethrow_exception(failed);
  WICK_CHECK_T(BackendError, all_ok == 1,
               "init_process_group: another rank failed to start the nccl backend (its own error says why); rank {} "
               "stops too",
               world_.rank);
  MPI_Bcast(id.data(), static_cast<int>(id.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
  in_nccl_init_ = true;
  comm_ = cuda::NcclRankCommunicator::create(id, world_.size, world_.rank, device_);
  stream_ = cuda::get_stream_from_pool(device_);
}

void NcclProcessGroup::start_up() {
  try {
    join_world();
  } catch (...) {
    // Every failure before ncclCommInitRank is raised on every rank (join_world). Only a failure
    // inside it, which leaves the other ranks waiting in a call that has no timeout, ends the
    // job: the rule for a collective that cannot finish (Note [Collectives and their contract]).
    if (in_nccl_init_ && world_.size > 1 && !comm_) {
      try {
        std::rethrow_exception(std::current_exception());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "wick.distributed: rank %d of %d: the nccl backend failed to start: %s\n", world_.rank,
                     world_.size, e.what());
      }
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 3);
      std::_Exit(3);
    }
    comm_.reset();
    finish_mpi(world_);
    throw;
  }
  watchdog_ = std::thread(&NcclProcessGroup::watchdog_main, this);
}

void NcclProcessGroup::tear_down() {
  try {
    stream_.synchronize();  // the watchdog still guards a collective that never finishes
  } catch (const Error& e) {
    std::fprintf(stderr, "wick.distributed: rank %d: the NCCL stream failed at shutdown: %s\n", world_.rank, e.what());
  }
  {
    std::lock_guard<std::mutex> lock(watch_mutex_);
    watch_stop_ = true;
  }
  watch_cv_.notify_all();
  watchdog_.join();
  comm_.reset();
  finish_mpi(world_);
}

void NcclProcessGroup::abort_job(const std::string& what, double waited_seconds, bool on_comm_thread) {
  abort_job_because(fmt::format("{} did not finish within {:.3f} s (waited {:.3f} s; a rank stalled, died, or called "
                                "a different collective)",
                                what, static_cast<double>(timeout_.count()) / 1000.0, waited_seconds),
                    on_comm_thread);
}

void NcclProcessGroup::abort_job_because(const std::string& why, bool on_comm_thread) {
  std::fprintf(stderr, "wick.distributed: rank %d of %d (cuda:%d): %s; aborting the NCCL communicator and the job\n",
               world_.rank, world_.size, device_, why.c_str());
  std::fflush(stderr);
  if (comm_) comm_->cancel_collectives();
  if (on_comm_thread) MPI_Abort(MPI_COMM_WORLD, 3);
  std::_Exit(3);  // MPI_Abort does not return; never continue past a timeout
}

void NcclProcessGroup::watchdog_main() {
  std::unique_lock<std::mutex> lock(watch_mutex_);
  while (!watch_stop_) {
    watch_cv_.wait_for(lock, kWatchEvery);
    const auto now = Clock::now();
    for (size_t i = 0; i < in_flight_.size();) {
      InFlight& f = in_flight_[i];
      bool done = false;
      try {
        done = f.work->is_completed();
      } catch (const std::exception& e) {  // the GPU reported an error for the collective's stream
        abort_job_because(fmt::format("{} failed on the GPU: {}", f.what, e.what()), false);
      }
      if (done) {
        in_flight_[i] = std::move(in_flight_.back());
        in_flight_.pop_back();
        continue;
      }
      if (now - f.issued > timeout_)
        abort_job(f.what, std::chrono::duration<double>(now - f.issued).count(), false);  // the last thing it does
      ++i;
    }
    // A peer that died or a broken network shows here at once, not only after the timeout.
    if (!in_flight_.empty()) {
      if (const std::string error = comm_->async_error(); !error.empty())
        abort_job_because(fmt::format("NCCL reported an error with {} collective(s) in flight (the oldest: {}): {}",
                                      in_flight_.size(), in_flight_.front().what, error),
                          false);
    }
  }
}

void NcclProcessGroup::run(Task& task) {
  const auto start = Clock::now();
  auto host_seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const std::string mismatch =
      exchange_fingerprints(task.fingerprint, world_.size, timeout_,
                            [this](const std::string& what, double waited) { abort_job(what, waited, true); });
  if (!mismatch.empty()) {
    task.work->failed(task.refusal ? task.refusal : std::make_exception_ptr(ValueError(mismatch)), host_seconds());
    return;
  }
  try {
    task.ready->block(stream_);
    auto begin = std::make_shared<cuda::Event>(true);
    auto end = std::make_shared<cuda::Event>(true);
    begin->record(stream_);
    task.issue(*comm_, stream_);
    end->record(stream_);
    task.work->issued(std::move(begin), std::move(end), host_seconds());
  } catch (...) {
    // The call failed on this rank only, after the fingerprints agreed: the peers issued this
    // collective and this rank did not, so its next collective would pair with their earlier one
    // (NCCL checks no shapes: corrupted results or a hang). Nothing can realign the streams, so
    // with peers the job ends; alone, the Work fails and the group goes on.
    if (world_.size == 1) {
      task.work->failed(std::current_exception(), host_seconds());
      return;
    }
    std::string why = "an exception that is not a std::exception";
    try {
      throw;
    } catch (const std::exception& e) {
      why = e.what();
    } catch (...) {
    }
    abort_job_because(
        fmt::format("{} could not be issued after every rank agreed on it: {}", describe(task.fingerprint), why), true);
  }
  std::lock_guard<std::mutex> lock(watch_mutex_);
  in_flight_.push_back({task.work, describe(task.fingerprint), Clock::now()});
}

std::shared_ptr<Work> NcclProcessGroup::enqueue(Task task) {
  auto work = std::make_shared<NcclWork>(device_);
  task.work = work;
  thread_.push(std::move(task));
  return work;
}

void NcclProcessGroup::check_operand(std::string_view op, const Tensor& t) const {
  check_collective_device(op, t, device(), "nccl");
}

std::shared_ptr<Work> NcclProcessGroup::all_reduce(const Tensor& tensor, ReduceOp op, const CollectiveTag& tag) {
  return enqueue(prepare_task<Task>(
      make_fingerprint(CollectiveKind::AllReduce, 0, tensor, op == ReduceOp::Avg ? 1 : 0, tag), [&](Task& task) {
        check_collective_device("all_reduce", tensor, device(), "nccl");
        WICK_CHECK_TYPE(op != ReduceOp::Avg || tensor.is_floating_point(),
                        "all_reduce: ReduceOp::Avg needs a floating-point tensor, got {}; use Sum", tensor.dtype());
        // bool: Sum is a logical or, NCCL's max over bytes (as the parallel layer's NCCL path).
        const cuda::NcclRankOp nop = op == ReduceOp::Avg       ? cuda::NcclRankOp::Avg
                                     : tensor.dtype() == kBool ? cuda::NcclRankOp::Max
                                                               : cuda::NcclRankOp::Sum;
        Tensor buf = staged(tensor);  // before the ready event, so the NCCL stream waits for the copy
        task.ready = record_ready(device_);
        task.issue = in_place(buf, tensor, [nop](cuda::NcclRankCommunicator& comm, const Tensor& b, cuda::Stream s) {
          comm.all_reduce(b, nop, s);
        });
      }));
}

std::shared_ptr<Work> NcclProcessGroup::broadcast(const Tensor& tensor, int root) {
  return enqueue(prepare_task<Task>(make_fingerprint(CollectiveKind::Broadcast, 0, tensor, root), [&](Task& task) {
    check_collective_device("broadcast", tensor, device(), "nccl");
    WICK_CHECK_INDEX(root >= 0 && root < world_.size, "broadcast: root {} is not a rank of this group (0..{})", root,
                     world_.size - 1);
    Tensor buf = staged(tensor);  // before the ready event, so the NCCL stream waits for the copy
    task.ready = record_ready(device_);
    task.issue = in_place(buf, tensor, [root](cuda::NcclRankCommunicator& comm, const Tensor& b, cuda::Stream s) {
      comm.broadcast(b, root, s);
    });
  }));
}

std::shared_ptr<Work> NcclProcessGroup::all_gather(const std::vector<Tensor>& outputs, const Tensor& input) {
  return enqueue(prepare_task<Task>(make_fingerprint(CollectiveKind::AllGather, 0, input, 0), [&](Task& task) {
    check_collective_device("all_gather", input, device(), "nccl");
    const Device here = device();
    check_gather_outputs(outputs, input, world_.size, fmt::format("on {}", here),
                         [here](Device d) { return d == here; });
    const int64_t n = input.numel();
    Tensor send = input.contiguous();
    Tensor recv = empty({world_.size * n}, TensorOptions(input.dtype()).device(device()));
    task.ready = record_ready(device_);
    task.issue = [send, recv, outs = outputs, n](cuda::NcclRankCommunicator& comm, cuda::Stream s) mutable {
      cuda::record_stream(send, s);
      cuda::record_stream(recv, s);
      comm.all_gather(send, recv, s);
      cuda::StreamGuard on(s);
      for (size_t r = 0; r < outs.size(); ++r) {
        cuda::record_stream(outs[r], s);
        outs[r].copy_(recv.narrow(0, static_cast<int64_t>(r) * n, n).view(outs[r].sizes()));
      }
    };
  }));
}

std::shared_ptr<Work> NcclProcessGroup::barrier() {
  // The fingerprint exchange already needs every rank; the one-element all-reduce after it
  // orders the barrier after this rank's earlier collectives on the NCCL stream, as torch's
  // NCCL barrier does.
  Task task;
  task.fingerprint = make_fingerprint(CollectiveKind::Barrier, 0, Tensor(), 0);
  Tensor token = zeros({1}, TensorOptions(kFloat32).device(device()));
  task.ready = record_ready(device_);
  task.issue = [token](cuda::NcclRankCommunicator& comm, cuda::Stream s) {
    cuda::record_stream(token, s);
    comm.all_reduce(token, cuda::NcclRankOp::Sum, s);
  };
  return enqueue(std::move(task));
}

}  // namespace wick::distributed::detail

#endif  // WICK_WITH_CUDA
