// CpuBackend::gemm: OpenBLAS's GEMM, cut into blocks that run on wick's intra-op threads.
//
// Note [GEMMs on wick's threads]
// A GEMM on a CPU device with a budget (Note [CPU thread budgets]) runs OpenBLAS single-threaded
// and cuts the work into at most `budget` blocks itself, run with parallel_for (Note [Intra-op
// threads]): the caller, wick's helpers and idle lenders (Note [Idle device threads lend a
// hand]) take blocks like any other kernel's pieces. Before, OpenBLAS's own pool ran GEMMs next
// to wick's pool, so a device with a budget of 2 had three busy threads on two cores (the
// caller, OpenBLAS's worker spinning in sched_yield between GEMMs, and wick's helper), and the
// demo CNN on one device with 2 threads ran slower than with 1 (docs/parallel.md, 11th session).
// - The blocks: a batched GEMM whose entries write disjoint parts of C is cut between entries,
//   so each entry is the same OpenBLAS call as without a split. Otherwise (one entry, or entries
//   that accumulate into one C) each block takes a range of C's rows or of its columns (16 at a
//   time), whichever C has more, and loops over the entries in order; the other operand is then
//   packed once per block, the smaller of the two. A block gets at least kMacsPerBlock
//   multiply-adds, so small GEMMs stay whole.
// - Bits: k is never cut, so a block computes each of its outputs as the whole GEMM would, in
//   OpenBLAS's order. The cut depends only on the shape and the budget, never on which thread
//   runs a block or on how many lenders are idle, so a budget gives the same bits on every run
//   (tests/core/gemm_blocks_test.cpp). Across budgets the bits of a GEMM can still differ where
//   OpenBLAS picks a different kernel for a block's smaller shape (its small-matrix kernels).
// - A device without a budget calls OpenBLAS once, with whatever thread count OPENBLAS_NUM_THREADS
//   or openblas_set_num_threads gave it.
#include <cblas.h>

#include <algorithm>

#include "cpu/cpu_backend.h"
#include "cpu/parallel_for.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/error.h"
#include "wick/core/intra_op_parallel.h"

namespace wick::cpu {

namespace {

// About 5-10 us of one core's GEMM: smaller blocks cost more to hand to another thread than they
// save. 2^20 left the demo CNN's per-image GEMMs (0.9-1.8 M multiply-adds) whole: its step on one
// device with 2 threads ran 1.02x one thread's, against 1.16x at 2^18 (docs/parallel.md).
constexpr int64_t kMacsPerBlock = int64_t{1} << 18;
constexpr int64_t kColumnsPerUnit = 16;  // a cache line of float32 C: blocks never share one

// One OpenBLAS call on entry `e`'s rows [r0, r1) and columns [c0, c1) of C.
void blas_call(const GemmArgs& g, int64_t e, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  const auto ta = g.trans_a ? CblasTrans : CblasNoTrans;
  const auto tb = g.trans_b ? CblasTrans : CblasNoTrans;
  // op(A) row r starts at A + r*lda (A stored m x k) or A + r (A stored k x m); op(B) column c at
  // B + c (B stored k x n) or B + c*ldb (B stored n x k).
  const int64_t a_off = e * g.stride_a + (g.trans_a ? r0 : r0 * g.lda);
  const int64_t b_off = e * g.stride_b + (g.trans_b ? c0 * g.ldb : c0);
  const int64_t c_off = e * g.stride_c + r0 * g.ldc + c0;
  const int m = static_cast<int>(r1 - r0), n = static_cast<int>(c1 - c0), k = static_cast<int>(g.k);
  if (g.dtype == DType::Float32) {
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, static_cast<float>(g.alpha), static_cast<const float*>(g.a) + a_off,
                static_cast<int>(g.lda), static_cast<const float*>(g.b) + b_off, static_cast<int>(g.ldb),
                static_cast<float>(g.beta), static_cast<float*>(g.c) + c_off, static_cast<int>(g.ldc));
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, g.alpha, static_cast<const double*>(g.a) + a_off,
                static_cast<int>(g.lda), static_cast<const double*>(g.b) + b_off, static_cast<int>(g.ldb), g.beta,
                static_cast<double*>(g.c) + c_off, static_cast<int>(g.ldc));
  }
}

// Whether entries of a batched GEMM write disjoint parts of C (row-major, ldc >= n).
bool entries_disjoint(const GemmArgs& g) { return g.batch == 1 || g.stride_c >= (g.m - 1) * g.ldc + g.n; }

}  // namespace

void CpuBackend::gemm(const GemmArgs& g) {
  if (g.m == 0 || g.n == 0) return;
  if (g.dtype != DType::Float32 && g.dtype != DType::Float64)
    WICK_FAIL_T(TypeError, "matmul: expected float32 or float64 operands, got {}", g.dtype);
  const int budget = blas_on_budget();  // Note [GEMMs on wick's threads]
  const int64_t macs = g.batch * g.m * g.n * g.k;
  // In a parallel region the threads already share work one level up (Note [Parallel regions]).
  const int64_t most = budget > 1 && !in_parallel_region() ? std::min<int64_t>(budget, macs / kMacsPerBlock) : 1;
  if (g.batch >= 2 && most >= 2 && entries_disjoint(g)) {
    // Whole entries per block.
    const int64_t blocks = std::min(most, g.batch);
    parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        for (int64_t e = g.batch * b / blocks; e < g.batch * (b + 1) / blocks; ++e) blas_call(g, e, 0, g.m, 0, g.n);
    });
    return;
  }
  const bool by_columns = g.n >= g.m;
  const int64_t units = by_columns ? (g.n + kColumnsPerUnit - 1) / kColumnsPerUnit : g.m;
  const int64_t blocks = entries_disjoint(g) || g.stride_c == 0 ? std::min(most, units) : 1;
  if (blocks <= 1) {
    for (int64_t e = 0; e < g.batch; ++e) blas_call(g, e, 0, g.m, 0, g.n);
    return;
  }
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t u0 = units * b / blocks, u1 = units * (b + 1) / blocks;
      for (int64_t e = 0; e < g.batch; ++e) {
        if (by_columns)
          blas_call(g, e, 0, g.m, u0 * kColumnsPerUnit, std::min(g.n, u1 * kColumnsPerUnit));
        else
          blas_call(g, e, u0, u1, 0, g.n);
      }
    }
  });
}

}  // namespace wick::cpu
