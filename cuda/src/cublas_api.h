#pragma once
// Note [cuBLAS loaded on first use]
// wick_cuda does not link cuBLAS: it opens libcublas.so.<major> with dlopen the first time a GEMM
// runs on a CUDA device, and calls it through the table below. Loading cuBLAS runs cuBLASLt's
// static initialisers, about 0.35 s of CPU per process on the development machine (most of a
// test process's start), and every program built with the CUDA backend paid it at startup, GPU
// or not. Now only programs that multiply matrices on a GPU do. The library is looked up by its
// soname (LD_LIBRARY_PATH, the loader cache, the executable's run path), then in the directory
// the build found it in (WICK_CUBLAS_DIR). docs/cuda.md, "Libraries".
#include <cublas_v2.h>

namespace wick::cuda::detail {

// The cuBLAS entry points wick calls. The names are the functions behind cublas_v2.h's macros
// (cublasCreate is cublasCreate_v2), so a pointer's type is the header's declaration.
struct CublasApi {
  decltype(&cublasCreate) create;
  decltype(&cublasSetStream) set_stream;
  decltype(&cublasSetWorkspace) set_workspace;
  decltype(&cublasSgemm) sgemm;
  decltype(&cublasDgemm) dgemm;
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched;
  decltype(&cublasDgemmStridedBatched) dgemm_strided_batched;
  decltype(&cublasGetStatusName) get_status_name;
  decltype(&cublasGetStatusString) get_status_string;
};

// The table, loading cuBLAS on the first call (thread-safe). Throws wick::DeviceUnavailable naming
// the files tried and the loader's message when cuBLAS cannot be opened or lacks an entry point;
// every later call throws the same error.
const CublasApi& cublas_api();

// Whether cuBLAS has been loaded into this process (by cublas_api()). For tests.
bool cublas_loaded();

}  // namespace wick::cuda::detail
