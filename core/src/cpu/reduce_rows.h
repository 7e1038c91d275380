#pragma once
// The CPU reduce kernel's two inner loops (CpuBackend::reduce, core/src/cpu/cpu_backend.cpp),
// built for SSE2, AVX2 and AVX-512 (Note [CPU multiversioning]).
//
// Note [CPU reduce order]
// Every output element of a CPU reduction combines its inputs in one fixed order, which depends
// on the shape and strides alone, never on the thread count:
//  - A contiguous run of inputs that all go into one output (a row sum, a conv bias's H x W
//    plane) folds into 16 interleaved lanes: element i of the run into lane i % 16, the running
//    value into lane 0 first; the lanes then combine pairwise (lane l with lane l + 8, then
//    l + 4, l + 2, l + 1). Each lane is an ordinary sequential fold, so GCC vectorizes it
//    without reassociating anything, and every clone returns the same bits.
//  - A run longer than kCascadeBlock (4096) elements is cut into blocks of 4096 from its start;
//    each block folds as above from the identity, and the blocks' values combine pairwise in
//    a tree (block 2k with 2k + 1, then pairs of pairs; a leftover joins at the level where it
//    fits, as PairwiseCombine does), whose value then combines into the running value. Each
//    lane of a block then adds at most 256 elements, so a float64 sum's error grows with
//    256 + log2(blocks), not with n / 16: ten million copies of 0.1 were off by 1e-11
//    relative, now by 4e-15. The blocks of a run that is a whole output row (a sum over
//    trailing dims) are folded by all the intra-op threads; the tree is the same.
//  - Inputs whose outputs are contiguous too (a sum over a leading dim: row r of [R, C] into the
//    C accumulators) combine row after row into the accumulators, element by element; there
//    the error grows with R (no blocks: they would need C accumulators per tree level).
//  - The work splits over the threads by output element (whole rows of outputs, or a range of a
//    kept dim), so each output is reduced by one thread in this order at every budget.
// Before the 14th session a contiguous run used 4 scalar lanes and a leading-dim sum a strided
// scalar loop on one thread: a conv bias's gradient over [128, 16, 28, 28] took 252 us against
// 142 us for a copy of the same tensor.
#include <algorithm>
#include <cstdint>

#include "wick/core/cpu_multiversion.h"

namespace wick::cpu {

inline constexpr int kReduceLanes = 16;

/// Folds the n contiguous values x[0..n) into `start` with Rule's combine, in the lane order of
/// Note [CPU reduce order]. A is the accumulator type.
template <typename Rule, typename A, typename T>
WICK_CPU_MULTIVERSION A fold_row(A start, const T* x, int64_t n) {
  A lane[kReduceLanes];
  lane[0] = start;
  for (int l = 1; l < kReduceLanes; ++l) lane[l] = Rule::identity();
  int64_t i = 0;
  for (; i + kReduceLanes <= n; i += kReduceLanes)
    for (int l = 0; l < kReduceLanes; ++l) lane[l] = Rule::combine(lane[l], static_cast<A>(x[i + l]));
  for (int l = 0; i + l < n; ++l) lane[l] = Rule::combine(lane[l], static_cast<A>(x[i + l]));
  for (int w = kReduceLanes / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) lane[l] = Rule::combine(lane[l], lane[l + w]);
  return lane[0];
}

/// Elements per block of a long run (Note [CPU reduce order]); a multiple of kReduceLanes.
inline constexpr int64_t kCascadeBlock = 4096;

/// The number of blocks of kCascadeBlock elements that cover n elements.
inline int64_t cascade_blocks(int64_t n) { return (n + kCascadeBlock - 1) / kCascadeBlock; }

/// Combines a sequence of values pairwise, as a tree over their positions (Note [CPU reduce
/// order]): values 2k and 2k + 1, then pairs of pairs, the earlier value always on the left.
/// push() takes the values in order; value() returns the tree's root (identity if none).
/// Holds one value per level, so a run of 2^64 blocks fits.
template <typename Rule, typename A>
class PairwiseCombine {
 public:
  void push(A v) {
    int level = 0;
    while (size_ > 0 && level_[size_ - 1] == level) {
      v = Rule::combine(value_[--size_], v);
      ++level;
    }
    value_[size_] = v;
    level_[size_++] = level;
  }
  A value() const {
    if (size_ == 0) return Rule::identity();
    A t = value_[size_ - 1];
    for (int i = size_ - 2; i >= 0; --i) t = Rule::combine(value_[i], t);
    return t;
  }

 private:
  A value_[65];
  int level_[65] = {};
  int size_ = 0;
};

/// Folds the n contiguous values x[0..n) into `start`: fold_row's lanes up to kCascadeBlock
/// elements, blocks combined pairwise beyond (Note [CPU reduce order]).
template <typename Rule, typename A, typename T>
A fold_run(A start, const T* x, int64_t n) {
  if (n <= kCascadeBlock) return fold_row<Rule>(start, x, n);
  PairwiseCombine<Rule, A> tree;
  for (int64_t i = 0; i < n; i += kCascadeBlock)
    tree.push(fold_row<Rule>(Rule::identity(), x + i, std::min(kCascadeBlock, n - i)));
  return Rule::combine(start, tree.value());
}

/// acc[i] = combine(acc[i], x[i]) for i in [0, n): one contiguous row of inputs into a contiguous
/// row of accumulators (Note [CPU reduce order]). The two ranges must not overlap.
template <typename Rule, typename A, typename T>
WICK_CPU_MULTIVERSION void accumulate_row(A* acc, const T* x, int64_t n) {
  A* __restrict__ a = acc;
  const T* __restrict__ v = x;
  for (int64_t i = 0; i < n; ++i) a[i] = Rule::combine(a[i], static_cast<A>(v[i]));
}

}  // namespace wick::cpu
