#pragma once
// wick/core/openblas.h: which OpenBLAS kernels multiply matrices on CPU devices.
//
// Note [OpenBLAS's kernels]
// OpenBLAS picks one kernel set per process while it loads: the one OPENBLAS_CORETYPE names, or
// else one for the CPU model it detects. The set decides how fast every GEMM runs, so every
// benchmark figure, and the last bits of float32 results. On the development machines' AMD EPYC
// (family 26), float32 GEMMs of the MLP's shapes ran at 89-99 GFLOP/s with the Haswell (AVX2)
// kernels and 133-161 GFLOP/s with the Cooperlake (AVX-512) ones OpenBLAS 0.3.21 detects there;
// the demo CNN and the MLP trained 1.5x and 1.8x as fast (docs/training.md, "OpenBLAS's
// kernels"). Those machines set OPENBLAS_CORETYPE=Haswell (and OPENBLAS_L2_SIZE) in their
// environment, because older OpenBLAS builds compute wrong results or crash on such processors.
// wick leaves the choice to OpenBLAS and to the environment, never overrides it, and reports it:
// bench_data_parallel and bench_ddp print openblas_info(), the Google Benchmark programs put it
// in their context (console and JSON).
#include <string>

namespace wick {

/// The OpenBLAS kernels in use in this process.
struct OpenblasInfo {
  std::string kernels;       ///< openblas_get_corename(), e.g. "Haswell", "Cooperlake"
  std::string coretype_env;  ///< OPENBLAS_CORETYPE's value; empty when unset (OpenBLAS detected the CPU)
  std::string config;        ///< openblas_get_config(): OpenBLAS's version and build options
};

/// What OpenBLAS reports about itself. Note [OpenBLAS's kernels].
OpenblasInfo openblas_info();

/// One line for a benchmark's header: "OpenBLAS kernels: Haswell (OPENBLAS_CORETYPE=Haswell)" or
/// "OpenBLAS kernels: Cooperlake (detected by OpenBLAS)".
std::string openblas_summary();

}  // namespace wick
