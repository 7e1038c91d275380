#pragma once
// Intra-op threads for CPU kernels.
//
// Note [Intra-op threads]
// A CPU kernel whose work splits into independent pieces (an elementwise loop, one row per
// softmax or layer_norm, one output row of a reduction over trailing dims, one channel of
// im2col/col2im, one plane of max pooling, a slice of a fused optimizer step) runs the pieces on the calling thread
// plus budget - 1 helper threads, where budget is the current CPU device's intra-op thread budget (Note [CPU thread
// budgets], cpu_threads.h; a device with no budget runs on its caller alone, as before). The helpers form one
// persistent pool per process, grown on first need to the largest budget - 1 seen, and joined at exit. Work is split
// only past `grain` items per piece, so small ops never pay for a wake-up. Results never depend on the split: each
// piece writes its own outputs, and nothing is summed across pieces, so 1, 2 or N threads give the same bits
// (tests/nn/intra_op_threads_test.cpp). GEMMs are OpenBLAS's, and the budget sets its thread count too: OpenBLAS
// 0.3.21's sgemm gives different last bits at 1 and 2 threads (its partitioning changes the order of the k-sums), so a
// model with GEMMs is bit-identical across runs at one budget, not across budgets. A parallel_for called from a helper
// runs inline (no nested fan-out). The caller takes pieces too, and waits only for pieces already started, so two
// devices' kernels sharing the pool cannot deadlock it. docs/autograd.md ("Threads") has the picture.
#include <algorithm>
#include <cstdint>

namespace wick::cpu {

/// The body of a parallel_for: processes items [begin, end).
class RangeBody {
 public:
  virtual void operator()(int64_t begin, int64_t end) const = 0;

 protected:
  ~RangeBody() = default;
};

/// Calls body over [0, n) in contiguous pieces of at least `grain` items, on the calling thread
/// and the pool (Note [Intra-op threads]). Returns when every piece is done; rethrows the first
/// exception a piece threw.
void parallel_for_body(int64_t n, int64_t grain, const RangeBody& body);

/// The number of pieces parallel_for would use for n items at this grain (1 = inline).
int parallel_pieces(int64_t n, int64_t grain);

/// parallel_for over a callable f(begin, end); the common path (one piece) calls f directly.
template <typename F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (parallel_pieces(n, grain) <= 1) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
  struct Body final : RangeBody {
    explicit Body(F& fn) : fn(fn) {}
    void operator()(int64_t b, int64_t e) const override { fn(b, e); }
    F& fn;
  } body(f);
  parallel_for_body(n, grain, body);
}

/// Items per piece below which elementwise kernels stay on one thread (PyTorch's grain).
inline constexpr int64_t kElementwiseGrain = 32768;

/// The grain of a parallel_for whose items (rows, planes, channels) each cost about
/// `work_per_item` element operations: enough items for kElementwiseGrain of work, at least 1.
inline int64_t items_per_piece(int64_t work_per_item) {
  return std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(work_per_item, 1));
}

}  // namespace wick::cpu
