// Opening cuBLAS on first use (Note [cuBLAS loaded on first use] in cublas_api.h).
#include "cublas_api.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <string>
#include <vector>

#include "wick/core/error.h"

#define WICK_CUBLAS_STR2(x) #x
#define WICK_CUBLAS_STR(x) WICK_CUBLAS_STR2(x)  // the macro's expansion: cublasCreate -> "cublasCreate_v2"

namespace wick::cuda::detail {

namespace {
std::atomic<bool> g_loaded{false};

struct Loaded {
  CublasApi api{};
  std::string error;  // empty when every entry point resolved
};

template <class Fn>
bool resolve(void* lib, const char* name, Fn& out, std::vector<std::string>& missing) {
  out = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!out) missing.emplace_back(name);
  return out != nullptr;
}

Loaded load() {
  Loaded result;
  const std::string soname = fmt::format("libcublas.so.{}", CUBLAS_VER_MAJOR);
  std::vector<std::string> tried{soname};
#ifdef WICK_CUBLAS_DIR
  tried.push_back(std::string(WICK_CUBLAS_DIR) + "/" + soname);
#endif
  void* lib = nullptr;
  std::string opened;
  std::string reasons;
  for (const std::string& path : tried) {
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      opened = path;
      break;
    }
    const char* why = dlerror();
    reasons += fmt::format("\n  {}: {}", path, why ? why : "not found");
  }
  if (!lib) {
    result.error = fmt::format(
        "cuBLAS could not be loaded, so matrix products cannot run on CUDA devices. Tried:{}\nInstall the CUDA "
        "toolkit's cuBLAS {} (libcublas.so.{}) or add its directory to LD_LIBRARY_PATH.",
        reasons, CUBLAS_VER_MAJOR, CUBLAS_VER_MAJOR);
    return result;
  }
  std::vector<std::string> missing;
  CublasApi& a = result.api;
  resolve(lib, WICK_CUBLAS_STR(cublasCreate), a.create, missing);
  resolve(lib, WICK_CUBLAS_STR(cublasSetStream), a.set_stream, missing);
  resolve(lib, WICK_CUBLAS_STR(cublasSetWorkspace), a.set_workspace, missing);
  resolve(lib, WICK_CUBLAS_STR(cublasSgemm), a.sgemm, missing);
  resolve(lib, WICK_CUBLAS_STR(cublasDgemm), a.dgemm, missing);
  resolve(lib, WICK_CUBLAS_STR(cublasSgemmStridedBatched), a.sgemm_strided_batched, missing);
  resolve(lib, WICK_CUBLAS_STR(cublasDgemmStridedBatched), a.dgemm_strided_batched, missing);
  resolve(lib, WICK_CUBLAS_STR(cublasGetStatusName), a.get_status_name, missing);
  resolve(lib, WICK_CUBLAS_STR(cublasGetStatusString), a.get_status_string, missing);
  if (!missing.empty()) {
    std::string names;
    for (const std::string& m : missing) names += (names.empty() ? "" : ", ") + m;
    result.error = fmt::format(
        "cuBLAS was loaded from {} but lacks {}: it is older than the cuBLAS {} headers wick was built with. "
        "Install a matching CUDA toolkit or rebuild wick against this one.",
        opened, names, CUBLAS_VER_MAJOR);
    // Kept open: unloading a library whose initialisers ran is not worth the risk.
    return result;
  }
  g_loaded.store(true, std::memory_order_release);
  return result;
}
}  // namespace

const CublasApi& cublas_api() {
  static const Loaded loaded = load();  // thread-safe once; the outcome never changes afterwards
  if (!loaded.error.empty()) throw DeviceUnavailable(loaded.error);
  return loaded.api;
}

bool cublas_loaded() { return g_loaded.load(std::memory_order_acquire); }

}  // namespace wick::cuda::detail
