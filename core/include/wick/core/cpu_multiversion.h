#pragma once
// WICK_CPU_MULTIVERSION: compiles a hot CPU loop twice, for the x86-64 baseline (SSE2) and for
// AVX2, and picks one when the program loads (GCC's target_clones, an IFUNC resolver).
//
// Note [CPU multiversioning]
// wick is built for the x86-64 baseline, so GCC vectorises its loops with 16-byte SSE2 registers;
// LibTorch picks AVX2 kernels at run time, and on a 64x64 float32 add the loop itself was most
// of wick's time. The AVX2 clone does the same IEEE operations element by element (AVX2 does not
// imply FMA, and no reduction is reassociated), so both clones return identical results on
// every machine; only their speed differs. Used on the contiguous elementwise loops
// (core/src/cpu/cpu_elementwise.cpp) and the fused optimizer loops (core/src/cpu/cpu_optim.cpp).
// Off (one baseline version) for other compilers and architectures, and under the sanitizers,
// whose run-time setup and IFUNC resolvers do not mix.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define WICK_CPU_MULTIVERSION __attribute__((target_clones("avx2", "default")))
#else
#define WICK_CPU_MULTIVERSION
#endif
