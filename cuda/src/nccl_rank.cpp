// NCCL for one rank of a multi-process job (Note [NCCL ranks] in docs/distributed.md).
#include "wick/cuda/nccl_rank.h"

#include <nccl.h>

#include <cstring>

#include "cuda_check.h"
#include "nccl_types.h"
#include "wick/core/error.h"
#include "wick/cuda/runtime.h"

namespace wick::cuda {

static_assert(sizeof(NcclUniqueId) == sizeof(ncclUniqueId), "NcclUniqueId must hold ncclUniqueId's bytes");

namespace {

cudaStream_t raw(Stream s) { return static_cast<cudaStream_t>(s.handle()); }

// The checks the distributed layer made already; repeated here so that a direct caller cannot
// hand NCCL a pointer it would misread.
void check_tensor(const char* op, const Tensor& t, int device) {
  WICK_CHECK(t.defined() && t.is_cuda() && t.device().index == device && t.is_contiguous(),
             "{}: NCCL needs a contiguous tensor on cuda:{}, got {}", op, device,
             t.defined() ? fmt::format("{} {} tensor on {}{}", t.dtype(), t.numel(), t.device(),
                                       t.is_contiguous() ? "" : " (not contiguous)")
                         : std::string("an undefined tensor"));
}

}  // namespace

NcclUniqueId nccl_get_unique_id() {
  ncclUniqueId id;
  WICK_NCCL_CHECK(ncclGetUniqueId(&id));
  NcclUniqueId out;
  std::memcpy(out.data(), &id, sizeof(id));
  return out;
}

bool nccl_has_native_avg() {
#if NCCL_VERSION_CODE >= 21000
  return true;
#else
  return false;
#endif
}

std::unique_ptr<NcclRankCommunicator> NcclRankCommunicator::create(const NcclUniqueId& id, int world_size, int rank,
                                                                   int device) {
  check_device_index(device);
  WICK_CHECK(world_size >= 1 && rank >= 0 && rank < world_size,
             "NcclRankCommunicator::create: rank {} is not in [0, {})", rank, world_size);
  ncclUniqueId nid;
  std::memcpy(&nid, id.data(), sizeof(nid));
  CUDAGuard guard(device);
  ncclComm_t comm = nullptr;
  WICK_NCCL_CHECK(ncclCommInitRank(&comm, world_size, nid, rank));
  return std::unique_ptr<NcclRankCommunicator>(new NcclRankCommunicator(comm, world_size, rank, device));
}

NcclRankCommunicator::~NcclRankCommunicator() {
  if (!aborted_.load()) (void)ncclCommDestroy(static_cast<ncclComm_t>(comm_));
}

void NcclRankCommunicator::cancel_collectives() noexcept {
  if (aborted_.exchange(true)) return;
  (void)ncclCommAbort(static_cast<ncclComm_t>(comm_));
}

std::string NcclRankCommunicator::async_error() const noexcept {
  if (aborted_.load()) return {};
  try {
    auto comm = static_cast<ncclComm_t>(comm_);
    ncclResult_t state = ncclSuccess;
    const ncclResult_t rc = ncclCommGetAsyncError(comm, &state);
    if (rc != ncclSuccess) return std::string("ncclCommGetAsyncError failed: ") + ncclGetErrorString(rc);
    if (state == ncclSuccess) return {};
#if NCCL_VERSION_CODE >= 21400  // nonblocking communicators: ncclInProgress, ncclGetLastError
    if (state == ncclInProgress) return {};
    std::string what = ncclGetErrorString(state);
    if (const char* last = ncclGetLastError(comm); last && *last) what += std::string(" (") + last + ")";
    return what;
#else
    return ncclGetErrorString(state);
#endif
  } catch (...) {  // std::string's allocation
    return "an asynchronous NCCL error";
  }
}

void NcclRankCommunicator::all_reduce(const Tensor& t, NcclRankOp op, Stream s) {
  check_tensor("all_reduce", t, device_);
  WICK_CHECK_TYPE(op != NcclRankOp::Avg || t.is_floating_point(),
                  "all_reduce: NCCL's average needs a floating-point tensor, got {}", t.dtype());
  WICK_CHECK_TYPE(t.dtype() != DType::Bool || op == NcclRankOp::Max,
                  "all_reduce: NCCL reduces bool tensors only with max (logical or)");
  ncclRedOp_t red = ncclSum;
  bool divide = false;
  if (op == NcclRankOp::Max) red = ncclMax;
  if (op == NcclRankOp::Avg) {
#if NCCL_VERSION_CODE >= 21000
    red = ncclAvg;
#else
    divide = true;
#endif
  }
  CUDAGuard guard(device_);
  WICK_NCCL_CHECK(ncclAllReduce(t.data_ptr(), t.data_ptr(), static_cast<size_t>(t.numel()),
                                detail::nccl_type(t.dtype()), red, static_cast<ncclComm_t>(comm_), raw(s)));
  if (divide) {
    StreamGuard on(s);
    Tensor(t).div_(static_cast<double>(world_size_));
  } else {
    Tensor(t).bump_version();
  }
}

void NcclRankCommunicator::broadcast(const Tensor& t, int root, Stream s) {
  check_tensor("broadcast", t, device_);
  WICK_CHECK_INDEX(root >= 0 && root < world_size_, "broadcast: root {} is not a rank in [0, {})", root, world_size_);
  CUDAGuard guard(device_);
  WICK_NCCL_CHECK(ncclBroadcast(t.data_ptr(), t.data_ptr(), static_cast<size_t>(t.numel()),
                                detail::nccl_type(t.dtype()), root, static_cast<ncclComm_t>(comm_), raw(s)));
  Tensor(t).bump_version();
}

void NcclRankCommunicator::all_gather(const Tensor& input, const Tensor& output, Stream s) {
  check_tensor("all_gather", input, device_);
  check_tensor("all_gather", output, device_);
  WICK_CHECK(output.dtype() == input.dtype() && output.numel() == input.numel() * world_size_,
             "all_gather: the output must be a {} tensor of {} x {} elements, got {} {}", input.dtype(), world_size_,
             input.numel(), output.dtype(), output.numel());
  CUDAGuard guard(device_);
  WICK_NCCL_CHECK(ncclAllGather(input.data_ptr(), output.data_ptr(), static_cast<size_t>(input.numel()),
                                detail::nccl_type(input.dtype()), static_cast<ncclComm_t>(comm_), raw(s)));
  Tensor(output).bump_version();
}

}  // namespace wick::cuda
