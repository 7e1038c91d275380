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
// (tests/nn/intra_op_threads_test.cpp). GEMMs are cut into blocks of C around a single-threaded OpenBLAS and run
// here too (Note [GEMMs on wick's threads], cpu_gemm.cpp); the cut depends on the budget, and OpenBLAS may pick
// another kernel for a smaller block, so a model with GEMMs is bit-identical across runs at one budget, not
// necessarily across budgets. A parallel_for called from a helper
// runs inline (no nested fan-out). The caller takes pieces too, and waits only for pieces already started, so two
// devices' kernels sharing the pool cannot deadlock it. docs/autograd.md ("Threads") has the picture.
//
// Note [Idle device threads lend a hand]
// Budgets share the cores out for the time when every device works (DataParallel's forward and
// backward). Between those phases one device often works alone on the caller's thread (the
// optimizer step, the loss) while the other devices' workers wait with empty queues. So a
// parallel_for called on a thread that is not a device worker, for a device with a budget, also
// hands pieces to the idle workers (TaskQueue::idle) of the other CPU devices that have a budget.
// - The cores stay shared out: a worker lends itself only while its own queue is empty, so the
//   threads at work never outnumber the budgets, which share_cpu_cores makes add up to at most
//   the cores (explicit budgets are the caller's to size). A device without a budget neither
//   borrows nor lends, so "1 device, 1 thread" stays one thread. Budgets persist (a
//   DataParallel's share_cpu_cores stays after it is gone): a process that later works on one of
//   its devices alone borrows the others' idle threads, which is what they are there for within
//   one process. Processes that share a machine must size their budgets together, as
//   always (the demo divides the cores among its local ranks; bench_ddp resets the budgets
//   before each configuration).
// - A device worker's own kernels do not borrow: the caller's thread may be working for the
//   worker's neighbour at that moment, and its worker would look idle.
// - The lent task has the lowest priority, so a worker runs its own device's queued work first.
//   With lenders, pieces are as small as the grain allows (each at least `grain` items), and the
//   caller claims any piece nobody has started: a lender that wakes late costs nothing, and one
//   that gets work of its own meanwhile is held up by at most one piece.
// - A lent piece runs with the caller's device current, like a helper (no nested fan-out).
// - Results do not change: pieces never sum across each other (above), so who runs a piece, and
//   how many pieces there are, never changes a bit (tests/nn/intra_op_threads_test.cpp; who runs
//   which piece: tests/core/lent_threads_test.cpp).
// In a DataParallel step over cpu:0 and cpu:1 this halves Adam's step, which otherwise runs on
// one core while the other waits (docs/parallel.md, "10th session").
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

/// The number of pieces parallel_for would use for n items at this grain now (1 = inline); with
/// idle lenders (Note [Idle device threads lend a hand]) a later call may choose differently.
/// For tests: parallel_for plans in parallel_for_body itself.
int parallel_pieces(int64_t n, int64_t grain);

/// parallel_for over a callable f(begin, end); a range under two grains (the common case) calls
/// f directly, anything larger is planned once in parallel_for_body.
template <typename F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n < 2 * std::max<int64_t>(grain, 1)) {
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
