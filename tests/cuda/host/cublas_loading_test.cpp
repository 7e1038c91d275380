// Note [cuBLAS loaded on first use] (cuda/src/cublas_api.h): a program built with the CUDA
// backend does not load cuBLAS until a matrix product runs on a CUDA device. Runs on the CPU:
// the table is loaded and checked without a GPU (cuBLAS's status-name functions need none).
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "wick/config.h"
#if WICK_WITH_CUDA
#include "cublas_api.h"
#endif

namespace {
// Whether a file whose name contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}
}  // namespace

TEST_CASE("cuBLAS is opened on the first use, not at startup, and every entry point resolves") {
  // libcublasLt is what cuBLAS loads with it, and what costs the startup time.
  REQUIRE_FALSE(mapped("libcublas"));
  wick::Tensor a = wick::ones({4, 3});
  wick::Tensor b = wick::ones({3, 2});
  CHECK(wick::matmul(a, b).sum().item<double>() == 24.0);  // a CPU product leaves cuBLAS alone
  CHECK_FALSE(mapped("libcublas"));
#if WICK_WITH_CUDA
  using wick::cuda::detail::cublas_api;
  using wick::cuda::detail::cublas_loaded;
  CHECK_FALSE(cublas_loaded());
  const auto& api = cublas_api();
  CHECK(cublas_loaded());
  CHECK(mapped("libcublas.so"));
  CHECK(api.create != nullptr);
  CHECK(api.set_stream != nullptr);
  CHECK(api.set_workspace != nullptr);
  CHECK(api.sgemm != nullptr);
  CHECK(api.dgemm != nullptr);
  CHECK(api.sgemm_strided_batched != nullptr);
  CHECK(api.dgemm_strided_batched != nullptr);
  // The pointers are the functions their names say: these two run without a GPU.
  CHECK(std::string(api.get_status_name(CUBLAS_STATUS_NOT_INITIALIZED)) == "CUBLAS_STATUS_NOT_INITIALIZED");
  CHECK(std::string(api.get_status_name(CUBLAS_STATUS_SUCCESS)) == "CUBLAS_STATUS_SUCCESS");
  CHECK_FALSE(std::string(api.get_status_string(CUBLAS_STATUS_ALLOC_FAILED)).empty());
  CHECK(&cublas_api() == &api);  // loaded once
#endif
}
