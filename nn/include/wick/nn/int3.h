#pragma once
// Int3, the 3-d geometry triple, in a header of its own: functional.h includes the 3-d and
// transposed-convolution headers at its end and they include it back, so a type both of them
// use must not depend on which of the three a file includes first.
#include <cstdint>

namespace wick::nn {

/// A triple of ints for 3-d geometry (depth, height, width), as LibTorch's ExpandingArray<3>:
/// `3` means {3, 3, 3}.
struct Int3 {
  int64_t d = 0, h = 0, w = 0;
  Int3() = default;
  Int3(int64_t v) : d(v), h(v), w(v) {}  // NOLINT
  Int3(int64_t d_, int64_t h_, int64_t w_) : d(d_), h(h_), w(w_) {}
  friend bool operator==(Int3 a, Int3 b) { return a.d == b.d && a.h == b.h && a.w == b.w; }
};

}  // namespace wick::nn
