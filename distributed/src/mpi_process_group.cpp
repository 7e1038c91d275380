#include "mpi_process_group.h"

#include <fmt/format.h>
#include <mpi.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "collective_args.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"
#include "wick/core/trace.h"

namespace wick::distributed::detail {

class MpiWork final : public Work {
 public:
  explicit MpiWork(std::shared_ptr<std::atomic<int>> waiters) : waiters_(std::move(waiters)) {}
  void wait() override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!done_) {
      waiters_->fetch_add(1, std::memory_order_relaxed);
      cv_.wait(lock, [&] { return done_; });
      waiters_->fetch_sub(1, std::memory_order_relaxed);
    }
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
  const std::shared_ptr<std::atomic<int>> waiters_;  // the group's count of threads in wait()
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
  double seconds_ = 0;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();  // set by the comm thread only
};

namespace {

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

// The checks every collective makes on its own tensor, before it is queued.
void check_tensor(std::string_view op, const Tensor& t) {
  WICK_CHECK(t.defined(), "{}: the tensor is undefined; pass a tensor of the same shape and dtype on every rank", op);
  // A ValueError, as the nccl backend's wrong-device check: the device exists, the call is wrong.
  WICK_CHECK(t.is_cpu(),
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

MpiProcessGroup::MpiProcessGroup(std::chrono::milliseconds timeout)
    : ThreadedProcessGroup(timeout), watchdog_(timeout, [this](const Fingerprint& collective, double) {
        print_timeout(describe(collective));
        std::_Exit(3);  // never continue past a timeout; mpirun ends the other ranks
      }) {
  thread_.start({.start_up = [this] { start_mpi(world_); },
                 .run = [this](Task& task) { run(task); },
                 .tear_down = [this] { finish_mpi(world_); }});
}

MpiProcessGroup::~MpiProcessGroup() { shutdown(); }

void MpiProcessGroup::print_timeout(const std::string& what) const {
  std::fprintf(stderr,
               "wick.distributed: rank %d of %d: %s did not finish within %.3f s (a rank stalled, died, or called a "
               "different collective); aborting the job\n",
               world_.rank, world_.size, what.c_str(), static_cast<double>(timeout_.count()) / 1000.0);
  std::fflush(stderr);
}

void MpiProcessGroup::abort_job(const std::string& what) const {
  print_timeout(what);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::_Exit(3);  // MPI_Abort does not return; never continue past a timeout
}

void MpiProcessGroup::run(Task& task) {
  task.work->start();
  const OnTimeout on_timeout = [this](const std::string& what, double) { abort_job(what); };
  std::string mismatch;
  bool all_callers_waiting = false;
  {
    profiler::RecordScope trace_event("comm", "fingerprint exchange");
    task.fingerprint.caller_waiting = waiters_->load(std::memory_order_relaxed) > 0 ? 1 : 0;
    mismatch = exchange_fingerprints(task.fingerprint, world_.size, timeout_, on_timeout, &all_callers_waiting);
  }
  if (!mismatch.empty()) {
    task.work->complete(task.refusal ? task.refusal : std::make_exception_ptr(ValueError(mismatch)));
    return;
  }
  try {
    auto trace_event = profiler::RecordScope::named("comm", [&] { return describe(task.fingerprint); });
    // Every rank is here with matching arguments, and every rank's caller waits, so every core
    // is free: every rank takes the blocking call (Note [Blocking data transfers]).
    if (task.run_blocking && all_callers_waiting) {
      watchdog_.run(task.fingerprint, task.run_blocking);
    } else {
      MPI_Request request;
      task.start(&request);
      wait_mpi_request(&request, describe(task.fingerprint), timeout_, on_timeout);
    }
    if (task.finish) task.finish();
    task.work->complete(nullptr);
  } catch (...) {
    task.work->complete(std::current_exception());
  }
}

void MpiProcessGroup::check_operand(std::string_view op, const Tensor& t) const {
  check_tensor(op, t);
  (void)mpi_type(t.dtype());
}

std::shared_ptr<Work> MpiProcessGroup::enqueue(Task task) {
  auto work = std::make_shared<MpiWork>(waiters_);
  task.work = work;
  thread_.push(std::move(task));
  return work;
}

std::shared_ptr<Work> MpiProcessGroup::all_reduce(const Tensor& tensor, ReduceOp op, const CollectiveTag& tag) {
  return enqueue(prepare_task<Task>(
      make_fingerprint(CollectiveKind::AllReduce, 0, tensor, op == ReduceOp::Avg ? 1 : 0, tag), [&](Task& task) {
        check_tensor("all_reduce", tensor);
        WICK_CHECK_TYPE(op != ReduceOp::Avg || tensor.is_floating_point(),
                        "all_reduce: ReduceOp::Avg needs a floating-point tensor, got {}; use Sum", tensor.dtype());
        const MPI_Datatype type = mpi_type(tensor.dtype());
        const MPI_Op mop = tensor.dtype() == kBool ? MPI_LOR : MPI_SUM;  // bool: logical or, as NCCL
        Tensor buf = staged(tensor);
        const int count = static_cast<int>(tensor.numel());
        task.start = [buf, type, mop, count](void* req) {
          MPI_Iallreduce(MPI_IN_PLACE, buf.data_ptr(), count, type, mop, MPI_COMM_WORLD,
                         static_cast<MPI_Request*>(req));
        };
        task.run_blocking = [buf, type, mop, count] {
          MPI_Allreduce(MPI_IN_PLACE, buf.data_ptr(), count, type, mop, MPI_COMM_WORLD);
        };
        task.finish = [buf, t = tensor, op, size = world_.size]() mutable {
          if (op == ReduceOp::Avg) {
            if (buf.dtype() == kFloat32)
              divide<float>(buf, size);
            else
              divide<double>(buf, size);
          }
          write_back(buf, t);
        };
      }));
}

std::shared_ptr<Work> MpiProcessGroup::broadcast(const Tensor& tensor, int root) {
  return enqueue(prepare_task<Task>(make_fingerprint(CollectiveKind::Broadcast, 0, tensor, root), [&](Task& task) {
    check_tensor("broadcast", tensor);
    WICK_CHECK_INDEX(root >= 0 && root < world_.size, "broadcast: root {} is not a rank of this group (0..{})", root,
                     world_.size - 1);
    const MPI_Datatype type = mpi_type(tensor.dtype());
    Tensor buf = staged(tensor);
    const int count = static_cast<int>(tensor.numel());
    task.start = [buf, type, count, root](void* req) {
      MPI_Ibcast(buf.data_ptr(), count, type, root, MPI_COMM_WORLD, static_cast<MPI_Request*>(req));
    };
    task.finish = [buf, t = tensor]() mutable { write_back(buf, t); };
  }));
}

std::shared_ptr<Work> MpiProcessGroup::all_gather(const std::vector<Tensor>& outputs, const Tensor& input) {
  return enqueue(prepare_task<Task>(make_fingerprint(CollectiveKind::AllGather, 0, input, 0), [&](Task& task) {
    check_tensor("all_gather", input);
    check_gather_outputs(outputs, input, world_.size, "on the CPU", [](Device d) { return d.is_cpu(); });
    const MPI_Datatype type = mpi_type(input.dtype());
    const int64_t n = input.numel();
    WICK_CHECK(n * world_.size <= INT_MAX, "all_gather: {} x {} elements exceeds MPI's count limit", world_.size, n);
    Tensor send = input.contiguous();
    Tensor recv = empty({world_.size * n}, input.dtype());
    task.start = [send, recv, type, n](void* req) {
      MPI_Iallgather(send.data_ptr(), static_cast<int>(n), type, recv.data_ptr(), static_cast<int>(n), type,
                     MPI_COMM_WORLD, static_cast<MPI_Request*>(req));
    };
    task.finish = [recv, outs = outputs, n]() mutable {
      for (size_t r = 0; r < outs.size(); ++r)
        outs[r].copy_(recv.narrow(0, static_cast<int64_t>(r) * n, n).view(outs[r].sizes()));
    };
  }));
}

std::shared_ptr<Work> MpiProcessGroup::barrier() {
  Task task;
  task.fingerprint = make_fingerprint(CollectiveKind::Barrier, 0, Tensor(), 0);
  task.start = [](void* req) { MPI_Ibarrier(MPI_COMM_WORLD, static_cast<MPI_Request*>(req)); };
  return enqueue(std::move(task));
}

}  // namespace wick::distributed::detail
