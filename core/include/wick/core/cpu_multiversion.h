#pragma once
// WICK_CPU_MULTIVERSION: compiles a hot CPU loop three times, for the x86-64 baseline (SSE2), for
// AVX2 and for AVX-512, and picks one when the program loads (GCC's target_clones, an IFUNC
// resolver).
//
// Note [CPU multiversioning]
// wick is built for the x86-64 baseline, so GCC vectorises its loops with 16-byte SSE2 registers;
// LibTorch picks AVX2 kernels at run time, and on a 64x64 float32 add the loop itself was most
// of wick's time. The AVX2 and AVX-512 clones do the same IEEE operations element by element, and
// no reduction is reassociated. AVX-512 brings FMA, so every file that uses this macro is built
// with -ffp-contract=off (core/CMakeLists.txt, parallel/CMakeLists.txt,
// benchmarks/CMakeLists.txt): a multiply and an add stay two roundings. So every clone returns
// identical results on every machine; only their speed differs (tests/nn/fused_steps_test.cpp
// compares the fused optimizer loops with the tensor-op path bit for bit, which a contracted
// clone fails). The AVX-512 clone keeps GCC's default 256-bit vectors; its gain is in division
// and square root: the fused Adam loop over 670k float32 elements took 134 us against 250 us
// with AVX2 on the 12th session's AMD Zen 5. Used on the contiguous elementwise loops
// (core/src/cpu/cpu_elementwise.cpp), the fused optimizer loops (core/src/cpu/cpu_optim.cpp),
// the reductions' inner loops (core/src/cpu/reduce_rows.h), 2x2 max pooling
// (core/src/cpu/cpu_pool.cpp) and the local communicator's sums (parallel/src/communicator.cpp).
// Off (one baseline version) for other compilers and architectures, and under the sanitizers,
// whose run-time setup and IFUNC resolvers do not mix.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define WICK_CPU_MULTIVERSION __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define WICK_CPU_MULTIVERSION
#endif
