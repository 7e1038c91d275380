#pragma once
// Intra-op parallelism for code above the kernels (LibTorch's at::parallel_for).
//
// Note [Parallel regions]
// A kernel splits its own loop over the current CPU device's intra-op threads (Note [Intra-op
// threads], core/src/cpu/parallel_for.h). Some work splits better one level up: a convolution
// over a batch runs a chunk of images at a time (im2col, GEMM, bias), each chunk's ops too small
// to split well, while whole chunks split perfectly. wick::parallel_for hands such a loop to the
// same threads (the caller, the helper pool, idle lenders; Note [Claimed parts]). Inside its body
// the calling thread is in a parallel region, whichever thread it is:
// - every nested split runs inline on that thread (no nested fan-out), and
// - a GEMM runs as one OpenBLAS call, not cut into blocks (Note [GEMMs on wick's threads]).
// The body runs in a region even when the loop is too small to split, so what it computes
// depends only on the items it is given: a caller that cuts its items by shape gets the same bits
// at every budget, with or without lenders, on any thread (tests/nn/conv_chunks_test.cpp).
#include <cstdint>
#include <functional>

namespace wick {

/// Calls f(b, e) on disjoint ranges covering [begin, end), each at least `grain` items (but the
/// last), on the current CPU device's intra-op threads, and returns when all are done; the first
/// exception f throws is rethrown here. f runs in a parallel region (Note [Parallel regions]).
void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f);

/// True inside the body of wick::parallel_for, and on the intra-op helper threads.
bool in_parallel_region();

}  // namespace wick
