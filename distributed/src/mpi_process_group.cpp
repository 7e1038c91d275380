#include "mpi_process_group.h"

#include <fmt/format.h>
#include <mpi.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"

namespace wick::distributed::detail {

class MpiWork final : public Work {
 public:
  void wait() override {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return done_; });
    if (error_) std::rethrow_exception(error_);
  }
  bool is_completed() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_;
  }
  double seconds() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return seconds_;
  }
  void start() { started_ = std::chrono::steady_clock::now(); }
  void complete(std::exception_ptr error) {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      seconds_ = secs;
      done_ = true;
      error_ = std::move(error);
    }
    cv_.notify_all();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
  double seconds_ = 0;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();  // set by the comm thread only
};

namespace {

// How long a collective is polled back to back (yielding the core between polls) before the
// polls are spaced out (Note [The communication thread]).
constexpr auto kSpinFor = std::chrono::milliseconds(100);

// After a collective wrote into `buf`: the result reaches the caller's tensor `t` (a copy when
// `buf` was a contiguous staging copy, else a version bump, as any in-place write).
void write_back(const Tensor& buf, Tensor& t) {
  if (!buf.is_same(t))
    t.copy_(buf);
  else
    t.bump_version();
}

MPI_Datatype mpi_type(DType d) {
  switch (d) {
    case kFloat32:
      return MPI_FLOAT;
    case kFloat64:
      return MPI_DOUBLE;
    case kInt64:
      return MPI_INT64_T;
    case kBool:
      return MPI_C_BOOL;
  }
  WICK_FAIL_T(TypeError, "ProcessGroup (mpi): no MPI type for dtype {}", d);
}

std::string shape_of(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

// The checks every collective makes on its own tensor, before it is queued.
void check_tensor(const char* op, const Tensor& t) {
  WICK_CHECK(t.defined(), "{}: the tensor is undefined; pass a tensor of the same shape and dtype on every rank", op);
  WICK_CHECK_T(DeviceUnavailable, t.is_cpu(),
               "{}: the mpi backend moves CPU tensors, but the tensor ({} {}) is on {}; use the nccl backend for CUDA "
               "tensors or move it with .to(kCPU)",
               op, t.dtype(), shape_of(t), t.device());
  WICK_CHECK(t.numel() <= INT_MAX, "{}: {} elements is more than MPI's count limit ({}); split the tensor", op,
             t.numel(), INT_MAX);
}

template <class T>
void divide(const Tensor& t, int by) {
  T* p = t.data_ptr<T>();
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) p[i] /= static_cast<T>(by);
}

}  // namespace

MpiProcessGroup::MpiProcessGroup(std::chrono::milliseconds timeout) : timeout_(timeout) {
  WICK_CHECK(timeout.count() > 0, "init_process_group: the timeout must be positive, got {} ms", timeout.count());
  std::promise<void> started;
  auto ready = started.get_future();
  thread_ = std::thread(&MpiProcessGroup::thread_main, this, std::move(started));
  try {
    ready.get();
  } catch (...) {
    thread_.join();
    throw;
  }
}

MpiProcessGroup::~MpiProcessGroup() { shutdown(); }

void MpiProcessGroup::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void MpiProcessGroup::thread_main(std::promise<void> started) {
  NoGradGuard no_grad;  // unstaging copies are plain data movement
  try {
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
  } catch (...) {
    started.set_exception(std::current_exception());
    return;
  }
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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
  }
  if (owns_mpi_) MPI_Finalize();
}

void MpiProcessGroup::wait_or_abort(void* request, const std::string& what) {
  auto* req = static_cast<MPI_Request*>(request);
  const auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    int done = 0;
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited > timeout_) {
      std::fprintf(
          stderr,
          "wick.distributed: rank %d of %d: %s did not finish within %.3f s (a rank stalled, died, or called a "
          "different collective); aborting the job\n",
          rank_, size_, what.c_str(), static_cast<double>(timeout_.count()) / 1000.0);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 3);
      std::_Exit(3);  // MPI_Abort does not return; never continue past a timeout
    }
    if (waited < kSpinFor) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }
}

void MpiProcessGroup::run(Task& task) {
  task.work->start();
  std::vector<Fingerprint> all(static_cast<size_t>(size_));
  MPI_Request request;
  MPI_Iallgather(&task.fingerprint, sizeof(Fingerprint) / sizeof(int64_t), MPI_INT64_T, all.data(),
                 sizeof(Fingerprint) / sizeof(int64_t), MPI_INT64_T, MPI_COMM_WORLD, &request);
  wait_or_abort(&request, describe(task.fingerprint) + " (the fingerprint exchange before it)");
  const std::string mismatch = compare_fingerprints(all);
  if (!mismatch.empty()) {
    task.work->complete(task.refusal ? task.refusal : std::make_exception_ptr(ValueError(mismatch)));
    return;
  }
  try {
    task.start(&request);
    wait_or_abort(&request, describe(task.fingerprint));
    if (task.finish) task.finish();
    task.work->complete(nullptr);
  } catch (...) {
    task.work->complete(std::current_exception());
  }
}

std::shared_ptr<Work> MpiProcessGroup::enqueue(Task task) {
  auto work = std::make_shared<MpiWork>();
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

std::shared_ptr<Work> MpiProcessGroup::all_reduce(const Tensor& tensor, ReduceOp op) {
  Task task;
  task.fingerprint = make_fingerprint(CollectiveKind::AllReduce, 0, tensor, op == ReduceOp::Avg ? 1 : 0);
  try {
    check_tensor("all_reduce", tensor);
    WICK_CHECK_TYPE(op != ReduceOp::Avg || tensor.is_floating_point(),
                    "all_reduce: ReduceOp::Avg needs a floating-point tensor, got {}; use Sum", tensor.dtype());
    const MPI_Datatype type = mpi_type(tensor.dtype());
    const MPI_Op mop = tensor.dtype() == kBool ? MPI_LOR : MPI_SUM;  // bool: logical or, as NCCL
    Tensor buf = tensor.is_contiguous() ? tensor : tensor.contiguous();
    const int count = static_cast<int>(tensor.numel());
    task.start = [buf, type, mop, count](void* req) {
      MPI_Iallreduce(MPI_IN_PLACE, buf.data_ptr(), count, type, mop, MPI_COMM_WORLD, static_cast<MPI_Request*>(req));
    };
    task.finish = [buf, t = tensor, op, size = size_]() mutable {
      if (op == ReduceOp::Avg) {
        if (buf.dtype() == kFloat32)
          divide<float>(buf, size);
        else
          divide<double>(buf, size);
      }
      write_back(buf, t);
    };
  } catch (const Error&) {
    task.refusal = std::current_exception();
    task.fingerprint.refused = 1;
  }
  return enqueue(std::move(task));
}

std::shared_ptr<Work> MpiProcessGroup::broadcast(const Tensor& tensor, int root) {
  Task task;
  task.fingerprint = make_fingerprint(CollectiveKind::Broadcast, 0, tensor, root);
  try {
    check_tensor("broadcast", tensor);
    WICK_CHECK_INDEX(root >= 0 && root < size_, "broadcast: root {} is not a rank of this group (0..{})", root,
                     size_ - 1);
    const MPI_Datatype type = mpi_type(tensor.dtype());
    Tensor buf = tensor.is_contiguous() ? tensor : tensor.contiguous();
    const int count = static_cast<int>(tensor.numel());
    task.start = [buf, type, count, root](void* req) {
      MPI_Ibcast(buf.data_ptr(), count, type, root, MPI_COMM_WORLD, static_cast<MPI_Request*>(req));
    };
    task.finish = [buf, t = tensor]() mutable { write_back(buf, t); };
  } catch (const Error&) {
    task.refusal = std::current_exception();
    task.fingerprint.refused = 1;
  }
  return enqueue(std::move(task));
}

std::shared_ptr<Work> MpiProcessGroup::all_gather(const std::vector<Tensor>& outputs, const Tensor& input) {
  Task task;
  task.fingerprint = make_fingerprint(CollectiveKind::AllGather, 0, input, 0);
  try {
    check_tensor("all_gather", input);
    WICK_CHECK(outputs.size() == static_cast<size_t>(size_),
               "all_gather: expected {} output tensors (one per rank), got {}", size_, outputs.size());
    for (size_t r = 0; r < outputs.size(); ++r) {
      const Tensor& o = outputs[r];
      WICK_CHECK(o.defined() && o.sizes() == input.sizes() && o.dtype() == input.dtype() && o.is_cpu(),
                 "all_gather: output {} must be a CPU {} tensor of shape {} like the input, got {}", r, input.dtype(),
                 shape_of(input),
                 o.defined() ? fmt::format("{} {} on {}", o.dtype(), shape_of(o), o.device()) : "undefined");
    }
    const MPI_Datatype type = mpi_type(input.dtype());
    const int64_t n = input.numel();
    WICK_CHECK(n * size_ <= INT_MAX, "all_gather: {} x {} elements exceeds MPI's count limit", size_, n);
    Tensor send = input.contiguous();
    Tensor recv = empty({size_ * n}, input.dtype());
    task.start = [send, recv, type, n](void* req) {
      MPI_Iallgather(send.data_ptr(), static_cast<int>(n), type, recv.data_ptr(), static_cast<int>(n), type,
                     MPI_COMM_WORLD, static_cast<MPI_Request*>(req));
    };
    task.finish = [recv, outs = outputs, n]() mutable {
      for (size_t r = 0; r < outs.size(); ++r)
        outs[r].copy_(recv.narrow(0, static_cast<int64_t>(r) * n, n).view(outs[r].sizes()));
    };
  } catch (const Error&) {
    task.refusal = std::current_exception();
    task.fingerprint.refused = 1;
  }
  return enqueue(std::move(task));
}

std::shared_ptr<Work> MpiProcessGroup::barrier() {
  Task task;
  task.fingerprint = make_fingerprint(CollectiveKind::Barrier, 0, Tensor(), 0);
  task.start = [](void* req) { MPI_Ibarrier(MPI_COMM_WORLD, static_cast<MPI_Request*>(req)); };
  return enqueue(std::move(task));
}

}  // namespace wick::distributed::detail
