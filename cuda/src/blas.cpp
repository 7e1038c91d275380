// GEMM through cuBLAS: one handle per (thread, device), bound to the current stream per call,
// with one workspace per (handle, stream).
//
// wick's GemmArgs are row-major. cuBLAS is column-major, and a row-major matrix read as
// column-major is its transpose, so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T:
// swap the operands (B first), keep each one's transpose flag, and swap m and n.
#include <limits>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "caching_allocator.h"
#include "cublas_api.h"
#include "cuda_backend.h"
#include "cuda_check.h"
#include "stream_internal.h"
#include "wick/core/error.h"
#include "wick/cuda/runtime.h"

namespace wick::cuda {

using detail::cublas_api;  // Note [cuBLAS loaded on first use]

namespace {
// Handles released by finished threads, per device, for reuse (never destroyed: cuBLAS may be
// torn down before static destructors run).
struct HandlePool {
  std::mutex mutex;
  std::vector<std::vector<cublasHandle_t>> free;
};
HandlePool& handle_pool() {
  static HandlePool* p = new HandlePool();
  return *p;
}

struct ThreadHandles {
  std::vector<cublasHandle_t> handles;
  ~ThreadHandles() {
    HandlePool& p = handle_pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    for (size_t d = 0; d < handles.size(); ++d) {
      if (!handles[d]) continue;
      if (p.free.size() <= d) p.free.resize(d + 1);
      p.free[d].push_back(handles[d]);
    }
  }
};

cublasHandle_t handle_for(int device) {
  thread_local ThreadHandles mine;
  const size_t d = static_cast<size_t>(device);
  if (mine.handles.size() <= d) mine.handles.resize(d + 1, nullptr);
  if (mine.handles[d]) return mine.handles[d];
  {
    HandlePool& p = handle_pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    if (p.free.size() > d && !p.free[d].empty()) {
      mine.handles[d] = p.free[d].back();
      p.free[d].pop_back();
      return mine.handles[d];
    }
  }
  CUDAGuard g(device);
  cublasHandle_t h = nullptr;
  WICK_CUBLAS_CHECK(cublas_api().create(&h));
  mine.handles[d] = h;
  return h;
}

// Note [cuBLAS workspaces]: cublasSetStream resets a handle to cuBLAS's default workspace, which
// belongs to the handle, so one handle (one per thread and device) used on two streams would let
// kernels on both streams share scratch memory unordered. Each (handle, stream) pair gets its own
// workspace instead, allocated once from the caching allocator on that stream (so its block
// belongs to that stream) and kept for the life of the process, as PyTorch does. Size: 32 MiB
// on compute capability 9.0 and up (NVIDIA's advice for Hopper), 8 MiB below.
struct Workspaces {
  std::mutex mutex;
  std::map<std::pair<cublasHandle_t, cudaStream_t>, std::pair<void*, size_t>> by_handle_stream;
};
Workspaces& workspaces() {
  static Workspaces* w = new Workspaces();  // never destroyed (see handle_pool)
  return *w;
}

size_t workspace_bytes(int device) {
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    major = 0;
  }
  return major >= 9 ? size_t{32} << 20 : size_t{8} << 20;
}

// Binds `h` to `stream` and to that pair's workspace (the current stream of `device`).
void bind(cublasHandle_t h, int device, cudaStream_t stream) {
  WICK_CUBLAS_CHECK(cublas_api().set_stream(h, stream));
  Workspaces& w = workspaces();
  std::lock_guard<std::mutex> lock(w.mutex);
  auto key = std::make_pair(h, stream);
  auto it = w.by_handle_stream.find(key);
  if (it == w.by_handle_stream.end()) {
    const size_t bytes = workspace_bytes(device);
    void* p = the_caching_allocator().allocate(bytes, Device(DeviceType::CUDA, device));
    it = w.by_handle_stream.emplace(key, std::make_pair(p, bytes)).first;
  }
  WICK_CUBLAS_CHECK(cublas_api().set_workspace(h, it->second.first, it->second.second));
}

int to_int(int64_t v, const char* what) {
  WICK_CHECK_NOT_IMPLEMENTED(
      v >= 0 && v <= std::numeric_limits<int>::max(),
      "matmul on CUDA: {} = {} exceeds cuBLAS's 32-bit limit; split the product into smaller ones", what, v);
  return static_cast<int>(v);
}
}  // namespace

void cublas_gemm(const GemmArgs& g) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return;
  WICK_CHECK_TYPE(g.dtype == DType::Float32 || g.dtype == DType::Float64,
                  "matmul on CUDA: expected float32 or float64 operands, got {}", g.dtype);
  const int device = detail::current_device_fast();
  cublasHandle_t h = handle_for(device);
  bind(h, device, detail::current_raw_stream(device));
  const int m = to_int(g.n, "n"), n = to_int(g.m, "m"), k = to_int(g.k, "k");
  const int lda = to_int(g.ldb, "ldb"), ldb = to_int(g.lda, "lda"), ldc = to_int(g.ldc, "ldc");
  const int batch = to_int(g.batch, "batch");
  const cublasOperation_t op_a = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (g.dtype == DType::Float32) {
    const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
    const auto* A = static_cast<const float*>(g.b);
    const auto* B = static_cast<const float*>(g.a);
    auto* C = static_cast<float*>(g.c);
    if (batch == 1) {
      WICK_CUBLAS_CHECK(cublas_api().sgemm(h, op_a, op_b, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
    } else {
      WICK_CUBLAS_CHECK(cublas_api().sgemm_strided_batched(h, op_a, op_b, m, n, k, &alpha, A, lda, g.stride_b, B, ldb,
                                                           g.stride_a, &beta, C, ldc, g.stride_c, batch));
    }
  } else {
    const double alpha = g.alpha, beta = g.beta;
    const auto* A = static_cast<const double*>(g.b);
    const auto* B = static_cast<const double*>(g.a);
    auto* C = static_cast<double*>(g.c);
    if (batch == 1) {
      WICK_CUBLAS_CHECK(cublas_api().dgemm(h, op_a, op_b, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
    } else {
      WICK_CUBLAS_CHECK(cublas_api().dgemm_strided_batched(h, op_a, op_b, m, n, k, &alpha, A, lda, g.stride_b, B, ldb,
                                                           g.stride_a, &beta, C, ldc, g.stride_c, batch));
    }
  }
}

}  // namespace wick::cuda
