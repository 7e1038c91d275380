#pragma once
// The thread count of the step benchmarks: WICK_BENCH_THREADS (default 1), given to OpenBLAS (for
// the bounds' direct calls) and to cpu:0's budget, over which wick cuts its GEMMs into blocks and
// splits its own kernels (Note [CPU thread budgets]). Set OMP_NUM_THREADS and
// OPENBLAS_NUM_THREADS to the same value for a fair comparison with PyTorch. Including it also
// puts OpenBLAS's kernels in the program's context (Note [OpenBLAS's kernels]).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdlib>

#include "wick/core/cpu_threads.h"
#include "wick/core/openblas.h"

namespace wick_bench {

/// WICK_BENCH_THREADS, or 1.
inline int threads() {
  const char* t = std::getenv("WICK_BENCH_THREADS");
  return t ? std::atoi(t) : 1;
}

/// Gives threads() to OpenBLAS and to cpu:0's intra-op budget.
inline void use_threads() {
  openblas_set_num_threads(threads());
  wick::set_intra_op_threads(wick::kCPU, threads());
}

/// OpenBLAS's kernels in the context Google Benchmark prints and writes to its JSON, added while
/// the program starts, before BENCHMARK_MAIN prints the context.
inline const bool kOpenblasKernelsInContext = [] {
  const wick::OpenblasInfo info = wick::openblas_info();
  benchmark::AddCustomContext("openblas_kernels", info.kernels);
  benchmark::AddCustomContext("openblas_coretype_env", info.coretype_env.empty() ? "(unset)" : info.coretype_env);
  return true;
}();

}  // namespace wick_bench
