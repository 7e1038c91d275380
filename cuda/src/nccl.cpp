// NCCL collectives on wick tensors (Note [NCCL] in docs/cuda.md).
#include "wick/cuda/nccl.h"

#include <nccl.h>

#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cuda_check.h"
#include "nccl_types.h"
#include "stream_internal.h"
#include "wick/core/error.h"
#include "wick/cuda/runtime.h"

namespace wick::cuda {

namespace {
struct CommCache {
  std::mutex mutex;
  std::map<std::vector<int>, std::vector<ncclComm_t>> comms;
};
CommCache& comm_cache() {
  static CommCache* c = new CommCache();  // never destroyed (NCCL may be torn down first)
  return *c;
}

// How many NcclGroupGuards the calling thread holds open (NCCL's group state is per thread).
thread_local int group_depth = 0;

// Note [Communicators outside groups]: inside ncclGroupStart/End, NCCL only queues a
// communicator's initialisation, so a collective queued in the same group would see a
// communicator with no ranks ("invalid root"), and a cache would keep handles that never became
// valid. Communicators are therefore always created by a thread that holds no group: the caller
// when it holds none, otherwise a short-lived helper thread. Only fully created ones are cached.
std::vector<ncclComm_t> create_communicators(const std::vector<int>& devices) {
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  auto init = [&] {
    const ncclResult_t r = ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data());
    if (r != ncclSuccess) {
      for (ncclComm_t& comm : comms)
        if (comm) (void)ncclCommDestroy(comm);
      WICK_NCCL_CHECK(r);
    }
  };
  if (group_depth == 0) {
    init();
    return comms;
  }
  std::exception_ptr error;
  std::thread helper([&] {
    try {
      init();
    } catch (...) {
      error = std::current_exception();
    }
  });
  helper.join();
  if (error) std::rethrow_exception(error);
  return comms;
}

// The communicators of an ordered device list, created once and cached.
const std::vector<ncclComm_t>& communicators(const std::vector<int>& devices) {
  CommCache& c = comm_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.comms.find(devices);
  if (it != c.comms.end()) return it->second;
  std::vector<ncclComm_t> comms = create_communicators(devices);
  return c.comms.emplace(devices, std::move(comms)).first->second;
}

ncclRedOp_t nccl_op(ReduceOp op, DType d, const char* name) {
  WICK_CHECK_TYPE(d != DType::Bool || op == ReduceOp::Max || op == ReduceOp::Min,
                  "{}: bool tensors support only max (logical or) and min (logical and); convert to int64 to sum them",
                  name);
  switch (op) {
    case ReduceOp::Sum:
      return ncclSum;
    case ReduceOp::Prod:
      return ncclProd;
    case ReduceOp::Max:
      return ncclMax;
    case ReduceOp::Min:
      return ncclMin;
  }
  return ncclSum;
}

// Why NCCL cannot take `ts` ("" when it can).
std::string why_not(const std::vector<Tensor>& ts) {
  if (ts.empty()) return "no tensors were given";
  if (device_count() == 0) return fmt::format("this machine has no CUDA device ({})", unavailable_reason());
  std::set<int> seen;
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    if (!t.defined()) return fmt::format("tensor {} is undefined", i);
    if (!t.is_cuda()) return fmt::format("tensor {} is on {}, not a CUDA device", i, t.device());
    if (t.device().index >= device_count())
      return fmt::format("tensor {} is on {}, which does not exist", i, t.device());
    if (!t.is_contiguous()) return fmt::format("tensor {} is not contiguous (call .contiguous() first)", i);
    if (t.dtype() != ts[0].dtype())
      return fmt::format("tensor {} is {} but tensor 0 is {}", i, t.dtype(), ts[0].dtype());
    if (t.numel() != ts[0].numel())
      return fmt::format("tensor {} has {} elements but tensor 0 has {}", i, t.numel(), ts[0].numel());
    if (!seen.insert(t.device().index).second) return fmt::format("two tensors are on {}", t.device());
  }
  return "";
}

void check(const char* op, const std::vector<Tensor>& ts) {
  const std::string why = why_not(ts);
  WICK_CHECK(why.empty(),
             "{}: NCCL needs one dense contiguous CUDA tensor per distinct device, all of one dtype "
             "and size, but {}",
             op, why);
}

std::vector<int> devices_of(const std::vector<Tensor>& ts) {
  std::vector<int> d;
  d.reserve(ts.size());
  for (const Tensor& t : ts) d.push_back(t.device().index);
  return d;
}

void check_output(const char* op, const Tensor& in, const Tensor& out, size_t i) {
  WICK_CHECK(out.defined() && out.is_cuda() && out.device() == in.device() && out.dtype() == in.dtype() &&
                 out.numel() == in.numel() && out.is_contiguous(),
             "{}: output {} must be a contiguous {} tensor of {} elements on {}, like input {}", op, i, in.dtype(),
             in.numel(), in.device(), i);
}
}  // namespace

bool nccl_is_available(const std::vector<Tensor>& tensors) { return why_not(tensors).empty(); }

int nccl_version() {
  int v = 0;
  WICK_NCCL_CHECK(ncclGetVersion(&v));
  return v;
}

NcclGroupGuard::NcclGroupGuard() {
  WICK_NCCL_CHECK(ncclGroupStart());
  open_ = true;
  ++group_depth;
}

void NcclGroupGuard::end() {
  if (!open_) return;
  open_ = false;
  --group_depth;
  WICK_NCCL_CHECK(ncclGroupEnd());
}

NcclGroupGuard::~NcclGroupGuard() {
  if (!open_) return;
  --group_depth;
  (void)ncclGroupEnd();
}

void nccl_broadcast(std::vector<Tensor>& tensors) {
  check("nccl_broadcast", tensors);
  const auto& comms = communicators(devices_of(tensors));
  const ncclDataType_t type = detail::nccl_type(tensors[0].dtype());
  const size_t count = static_cast<size_t>(tensors[0].numel());
  NcclGroupGuard group;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const int dev = tensors[i].device().index;
    CUDAGuard g(dev);
    void* buf = tensors[i].data_ptr();
    WICK_NCCL_CHECK(ncclBroadcast(buf, buf, count, type, 0, comms[i], detail::current_raw_stream(dev)));
  }
  group.end();
  for (size_t i = 1; i < tensors.size(); ++i) tensors[i].bump_version();
}

void nccl_reduce(const std::vector<Tensor>& inputs, Tensor& output, int root, ReduceOp op) {
  check("nccl_reduce", inputs);
  WICK_CHECK_INDEX(root >= 0 && static_cast<size_t>(root) < inputs.size(),
                   "nccl_reduce: root {} is out of range for {} inputs", root, inputs.size());
  check_output("nccl_reduce", inputs[static_cast<size_t>(root)], output, static_cast<size_t>(root));
  const auto& comms = communicators(devices_of(inputs));
  const ncclDataType_t type = detail::nccl_type(inputs[0].dtype());
  const ncclRedOp_t red = nccl_op(op, inputs[0].dtype(), "nccl_reduce");
  const size_t count = static_cast<size_t>(inputs[0].numel());
  NcclGroupGuard group;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int dev = inputs[i].device().index;
    CUDAGuard g(dev);
    void* recv = static_cast<int>(i) == root ? output.data_ptr() : nullptr;
    WICK_NCCL_CHECK(
        ncclReduce(inputs[i].data_ptr(), recv, count, type, red, root, comms[i], detail::current_raw_stream(dev)));
  }
  group.end();
  output.bump_version();
}

void nccl_all_reduce(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, ReduceOp op) {
  check("nccl_all_reduce", inputs);
  WICK_CHECK(outputs.size() == inputs.size(), "nccl_all_reduce: {} outputs for {} inputs", outputs.size(),
             inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) check_output("nccl_all_reduce", inputs[i], outputs[i], i);
  const auto& comms = communicators(devices_of(inputs));
  const ncclDataType_t type = detail::nccl_type(inputs[0].dtype());
  const ncclRedOp_t red = nccl_op(op, inputs[0].dtype(), "nccl_all_reduce");
  const size_t count = static_cast<size_t>(inputs[0].numel());
  NcclGroupGuard group;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int dev = inputs[i].device().index;
    CUDAGuard g(dev);
    WICK_NCCL_CHECK(ncclAllReduce(inputs[i].data_ptr(), outputs[i].data_ptr(), count, type, red, comms[i],
                                  detail::current_raw_stream(dev)));
  }
  group.end();
  for (auto& t : outputs) t.bump_version();
}

void nccl_all_reduce(std::vector<Tensor>& tensors, ReduceOp op) { nccl_all_reduce(tensors, tensors, op); }

void nccl_clear_communicators() {
  CommCache& c = comm_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto& [devices, comms] : c.comms)
    for (ncclComm_t comm : comms) (void)ncclCommDestroy(comm);
  c.comms.clear();
}

}  // namespace wick::cuda
