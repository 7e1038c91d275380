#pragma once
// The thread count of the step benchmarks: WICK_BENCH_THREADS (default 1), given to OpenBLAS (for
// the bounds' direct calls) and to cpu:0's budget, over which wick cuts its GEMMs into blocks and
// splits its own kernels (Note [CPU thread budgets]). Set OMP_NUM_THREADS and
// OPENBLAS_NUM_THREADS to the same value for a fair comparison with PyTorch.
#include <cblas.h>

#include <cstdlib>

#include "wick/core/cpu_threads.h"

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

}  // namespace wick_bench
