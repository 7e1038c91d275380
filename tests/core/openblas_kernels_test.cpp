// Note [OpenBLAS's kernels] (wick/core/openblas.h): what openblas_info() reports is what
// OpenBLAS runs. Where the environment names a kernel set (the development machines set
// OPENBLAS_CORETYPE), OpenBLAS must run that one; a GEMM checks the library answers at all.
#include <catch2/catch.hpp>
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include "wick/core/openblas.h"
#include "wick/wick.h"

namespace {
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

TEST_CASE("openblas_info reports the kernels OpenBLAS runs, and the environment's choice") {
  const wick::OpenblasInfo info = wick::openblas_info();
  CHECK_FALSE(info.kernels.empty());
  CHECK(info.config.find("OpenBLAS") != std::string::npos);
  const char* env = std::getenv("OPENBLAS_CORETYPE");
  if (env != nullptr && *env != '\0') {
    CHECK(info.coretype_env == env);
    CHECK(lower(info.kernels) == lower(env));  // a name OpenBLAS knows is the set it runs
    CHECK(wick::openblas_summary() == "OpenBLAS kernels: " + info.kernels + " (OPENBLAS_CORETYPE=" + env + ")");
  } else {
    CHECK(info.coretype_env.empty());
    CHECK(wick::openblas_summary() == "OpenBLAS kernels: " + info.kernels + " (detected by OpenBLAS)");
  }
  // [[1, 2], [3, 4]] x [[1, 1], [0, 1]] = [[1, 3], [3, 7]], through those kernels.
  const wick::Tensor a = wick::tensor({1, 2, 3, 4}, {2, 2});
  const wick::Tensor b = wick::tensor({1, 1, 0, 1}, {2, 2});
  const wick::Tensor c = wick::matmul(a, b);
  REQUIRE(c.dtype() == wick::kFloat32);
  CHECK(c.flatten().to_vector<float>() == std::vector<float>{1.f, 3.f, 3.f, 7.f});
}
