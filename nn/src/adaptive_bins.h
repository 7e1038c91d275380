#pragma once
// Internal: PyTorch's adaptive pooling windows, shared by adaptive_avg_pool2d
// (functional_pool.cpp) and adaptive_max_pool2d (functional_adaptive_max_pool.cpp).
//
// Cutting `in` positions into `out` windows, window i is [start, end) with
// start = floor(i * in / out) and end = ceil((i + 1) * in / out): every window holds at least one
// position (in, out >= 1), neighbours overlap where out does not divide in, and windows repeat
// positions where out > in. The products are formed in 128 bits, so no size in int64 overflows.
#include <cstdint>

namespace wick::nn::detail {

/// floor(i * in / out), for 0 <= i < out.
inline int64_t adaptive_start(int64_t i, int64_t in, int64_t out) {
  return static_cast<int64_t>((static_cast<__int128>(i) * in) / out);
}

/// ceil((i + 1) * in / out), for 0 <= i < out.
inline int64_t adaptive_end(int64_t i, int64_t in, int64_t out) {
  return static_cast<int64_t>((static_cast<__int128>(i + 1) * in + out - 1) / out);
}

}  // namespace wick::nn::detail
