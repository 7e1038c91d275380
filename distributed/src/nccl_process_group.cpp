// The NCCL backend of ProcessGroup (Note [The NCCL process group], nccl_process_group.h).
#include "wick/config.h"

#if WICK_WITH_CUDA

#include <fmt/format.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

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

constexpr auto kSpinFor = std::chrono::milliseconds(100);    // as the MPI backend
constexpr auto kWatchEvery = std::chrono::milliseconds(50);  // the watchdog's polling period

std::string shape_of(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

// An event recorded on the caller's current stream of `device`: the NCCL stream waits on it, so
// the collective sees every write the caller queued before calling.
std::shared_ptr<cuda::Event> record_ready(int device) {
  auto e = std::make_shared<cuda::Event>();
  e->record(cuda::get_current_stream(device));
  return e;
}

}  // namespace

NcclProcessGroup::NcclProcessGroup(std::chrono::milliseconds timeout) : timeout_(timeout) {
  WICK_CHECK(timeout.count() > 0, "init_process_group: the timeout must be positive, got {} ms", timeout.count());
  const std::string why = nccl_unavailable_reason();
  WICK_CHECK_T(DeviceUnavailable, why.empty(),
               "init_process_group: the nccl backend cannot start: {}; use backend "
               "\"mpi\" with CPU tensors",
               why);
  std::promise<void> started;
  auto ready = started.get_future();
  thread_ = std::thread(&NcclProcessGroup::thread_main, this, std::move(started));
  try {
    ready.get();
  } catch (...) {
    thread_.join();
    throw;
  }
}

NcclProcessGroup::~NcclProcessGroup() { shutdown(); }

void NcclProcessGroup::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NcclProcessGroup::start_up() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = 0;
  if (initialized) {
    MPI_Query_thread(&provided);
    WICK_CHECK_T(BackendError, provided >= MPI_THREAD_SERIALIZED,
                 "init_process_group: MPI was initialized by the program with thread level {}, but wick's "
                 "communication thread needs MPI_THREAD_SERIALIZED or more; let init_process_group initialize MPI",
                 provided);
  } else {
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    WICK_CHECK_T(BackendError, rc == MPI_SUCCESS, "init_process_group: MPI_Init_thread failed with code {}", rc);
    owns_mpi_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  int local = local_rank_from_environment();
  if (local < 0) {  // no launcher variable: rank among the processes that share this node's memory
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
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
               "has {}); use backend \"mpi\"",
               rank_, mine);
  device_ = nccl_device_for_local_rank(local, mine).index;
  cuda::set_device(device_);
  cuda::NcclUniqueId id{};
  int id_ok = 1;
  if (rank_ == 0) {
    try {
      id = cuda::nccl_get_unique_id();
    } catch (const Error&) {
      id_ok = 0;
    }
  }
  MPI_Bcast(&id_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  WICK_CHECK_T(BackendError, id_ok == 1,
               "init_process_group: rank 0 could not make an NCCL unique id (ncclGetUniqueId failed; see rank 0's "
               "NCCL_DEBUG=WARN output)");
  MPI_Bcast(id.data(), static_cast<int>(id.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
  comm_ = cuda::NcclRankCommunicator::create(id, size_, rank_, device_);
  stream_ = cuda::get_stream_from_pool(device_);
}

void NcclProcessGroup::thread_main(std::promise<void> started) {
  NoGradGuard no_grad;  // write-backs are plain data movement
  try {
    start_up();
  } catch (...) {
    // A rank that failed after MPI started: in a job of several ranks the others may be inside
    // ncclCommInitRank already, so end the whole job rather than leave them waiting.
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized && size_ > 1 && !comm_) {
      try {
        std::rethrow_exception(std::current_exception());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "wick.distributed: rank %d of %d: the nccl backend failed to start: %s\n", rank_, size_,
                     e.what());
      }
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 3);
      std::_Exit(3);
    }
    comm_.reset();
    if (owns_mpi_) MPI_Finalize();
    started.set_exception(std::current_exception());
    return;
  }
  watchdog_ = std::thread(&NcclProcessGroup::watchdog_main, this);
  started.set_value();
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) break;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    run(task);
  }
  try {
    stream_.synchronize();  // the watchdog still guards a collective that never finishes
  } catch (const Error& e) {
    std::fprintf(stderr, "wick.distributed: rank %d: the NCCL stream failed at shutdown: %s\n", rank_, e.what());
  }
  {
    std::lock_guard<std::mutex> lock(watch_mutex_);
    watch_stop_ = true;
  }
  watch_cv_.notify_all();
  watchdog_.join();
  comm_.reset();
  if (owns_mpi_) MPI_Finalize();
}

void NcclProcessGroup::abort_job(const std::string& what, double waited_seconds) {
  abort_job_because(
      fmt::format("{} did not finish within {:.3f} s (waited {:.3f} s; a rank stalled, died, or called "
                  "a different collective)",
                  what, static_cast<double>(timeout_.count()) / 1000.0, waited_seconds));
}

void NcclProcessGroup::abort_job_because(const std::string& why) {
  std::fprintf(stderr, "wick.distributed: rank %d of %d (cuda:%d): %s; aborting the NCCL communicator and the job\n",
               rank_, size_, device_, why.c_str());
  std::fflush(stderr);
  if (comm_) comm_->abort();
  MPI_Abort(MPI_COMM_WORLD, 3);
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
        abort_job_because(fmt::format("{} failed on the GPU: {}", f.what, e.what()));
      }
      if (done) {
        in_flight_[i] = std::move(in_flight_.back());
        in_flight_.pop_back();
        continue;
      }
      if (now - f.issued > timeout_)
        abort_job(f.what, std::chrono::duration<double>(now - f.issued).count());  // the last thing it does
      ++i;
    }
  }
}

void NcclProcessGroup::wait_or_abort(void* request, const std::string& what) {
  auto* req = static_cast<MPI_Request*>(request);
  const auto start = Clock::now();
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    int done = 0;
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const auto waited = Clock::now() - start;
    if (waited > timeout_) abort_job(what, std::chrono::duration<double>(waited).count());
    if (waited < kSpinFor) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }
}

void NcclProcessGroup::run(Task& task) {
  const auto start = Clock::now();
  auto host_seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::vector<Fingerprint> all(static_cast<size_t>(size_));
  MPI_Request request;
  MPI_Iallgather(&task.fingerprint, sizeof(Fingerprint) / sizeof(int64_t), MPI_INT64_T, all.data(),
                 sizeof(Fingerprint) / sizeof(int64_t), MPI_INT64_T, MPI_COMM_WORLD, &request);
  wait_or_abort(&request, describe(task.fingerprint) + " (the fingerprint exchange before it)");
  const std::string mismatch = compare_fingerprints(all);
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
    // NCCL refused the call on this rank only (the fingerprints agreed): the peers' kernels wait
    // for this rank, so the watchdog of each of them ends the job after the timeout.
    task.work->failed(std::current_exception(), host_seconds());
    return;
  }
  std::lock_guard<std::mutex> lock(watch_mutex_);
  in_flight_.push_back({task.work, describe(task.fingerprint), Clock::now()});
}

std::shared_ptr<Work> NcclProcessGroup::enqueue(Task task) {
  auto work = std::make_shared<NcclWork>(device_);
  task.work = work;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    WICK_CHECK_STATE(!stopping_,
                     "ProcessGroup: {} was called after destroy_process_group(); start a new job to communicate again",
                     describe(task.fingerprint));
    task.fingerprint.sequence = sequence_++;
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return work;
}

std::shared_ptr<Work> NcclProcessGroup::all_reduce(const Tensor& tensor, ReduceOp op) {
  Task task;
  task.fingerprint = make_fingerprint(CollectiveKind::AllReduce, 0, tensor, op == ReduceOp::Avg ? 1 : 0);
  try {
    check_collective_device("all_reduce", tensor, device(), "nccl");
    WICK_CHECK_TYPE(op != ReduceOp::Avg || tensor.is_floating_point(),
                    "all_reduce: ReduceOp::Avg needs a floating-point tensor, got {}; use Sum", tensor.dtype());
    // bool: Sum is a logical or, NCCL's max over bytes (as the parallel layer's NCCL path).
    const cuda::NcclRankOp nop = op == ReduceOp::Avg       ? cuda::NcclRankOp::Avg
                                 : tensor.dtype() == kBool ? cuda::NcclRankOp::Max
                                                           : cuda::NcclRankOp::Sum;
    Tensor buf = tensor.is_contiguous() ? tensor : tensor.contiguous();
    task.ready = record_ready(device_);
    task.issue = [buf, t = tensor, nop](cuda::NcclRankCommunicator& comm, cuda::Stream s) mutable {
      cuda::record_stream(buf, s);
      comm.all_reduce(buf, nop, s);
      if (!buf.is_same(t)) {
        cuda::StreamGuard on(s);
        cuda::record_stream(t, s);
        t.copy_(buf);
      }
    };
  } catch (const Error&) {
    task.refusal = std::current_exception();
    task.fingerprint.refused = 1;
  }
  return enqueue(std::move(task));
}

std::shared_ptr<Work> NcclProcessGroup::broadcast(const Tensor& tensor, int root) {
  Task task;
  task.fingerprint = make_fingerprint(CollectiveKind::Broadcast, 0, tensor, root);
  try {
    check_collective_device("broadcast", tensor, device(), "nccl");
    WICK_CHECK_INDEX(root >= 0 && root < size_, "broadcast: root {} is not a rank of this group (0..{})", root,
                     size_ - 1);
    Tensor buf = tensor.is_contiguous() ? tensor : tensor.contiguous();
    task.ready = record_ready(device_);
    task.issue = [buf, t = tensor, root](cuda::NcclRankCommunicator& comm, cuda::Stream s) mutable {
      cuda::record_stream(buf, s);
      comm.broadcast(buf, root, s);
      if (!buf.is_same(t)) {
        cuda::StreamGuard on(s);
        cuda::record_stream(t, s);
        t.copy_(buf);
      }
    };
  } catch (const Error&) {
    task.refusal = std::current_exception();
    task.fingerprint.refused = 1;
  }
  return enqueue(std::move(task));
}

std::shared_ptr<Work> NcclProcessGroup::all_gather(const std::vector<Tensor>& outputs, const Tensor& input) {
  Task task;
  task.fingerprint = make_fingerprint(CollectiveKind::AllGather, 0, input, 0);
  try {
    check_collective_device("all_gather", input, device(), "nccl");
    WICK_CHECK(outputs.size() == static_cast<size_t>(size_),
               "all_gather: expected {} output tensors (one per rank), got {}", size_, outputs.size());
    for (size_t r = 0; r < outputs.size(); ++r) {
      const Tensor& o = outputs[r];
      WICK_CHECK(o.defined() && o.sizes() == input.sizes() && o.dtype() == input.dtype() && o.device() == device(),
                 "all_gather: output {} must be a {} tensor of shape {} on {} like the input, got {}", r, input.dtype(),
                 shape_of(input), device(),
                 o.defined() ? fmt::format("{} {} on {}", o.dtype(), shape_of(o), o.device()) : "undefined");
    }
    const int64_t n = input.numel();
    Tensor send = input.contiguous();
    Tensor recv = empty({size_ * n}, TensorOptions(input.dtype()).device(device()));
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
  } catch (const Error&) {
    task.refusal = std::current_exception();
    task.fingerprint.refused = 1;
  }
  return enqueue(std::move(task));
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
