// The CUDA kernels' host-side launch decisions (cuda/src/launch_plan.h), run on the CPU: the
// 32-bit index choice (Note [32-bit index math]) and the reduction's kernel per shape (Note
// [Reductions]). The kernels they pick are compared with the CPU in tests/cuda (GPU only).
#include "launch_plan.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>

using namespace wick;
using namespace wick::cuda::plan;

namespace {
constexpr int64_t kI32 = std::numeric_limits<int32_t>::max();

template <int N>
StridedLayout<N> layout(std::initializer_list<int64_t> sizes, const std::initializer_list<int64_t> (&strides)[N]) {
  StridedLayout<N> L;
  L.ndim = static_cast<int>(sizes.size());
  L.numel = 1;
  int d = 0;
  for (int64_t s : sizes) {
    L.sizes[d++] = s;
    L.numel *= s;
  }
  for (int k = 0; k < N; ++k) {
    d = 0;
    for (int64_t st : strides[k]) L.strides[k][d++] = st;
  }
  return L;
}
}  // namespace

TEST_CASE("32-bit index math is chosen exactly when every index and offset fits in int32", "[cuda-host]") {
  // numel at the limit and one past it (dense 1-d operands).
  CHECK(fits_32bit_index(layout<2>({kI32}, {{1}, {1}})));
  CHECK_FALSE(fits_32bit_index(layout<2>({kI32 + 1}, {{1}, {1}})));
  // Few elements, but one operand's last offset is past int32: (2 - 1) * 2^31.
  CHECK_FALSE(fits_32bit_index(layout<2>({2, 3}, {{3, 1}, {int64_t{1} << 31, 1}})));
  // The largest offset exactly INT32_MAX fits: (2 - 1) * (INT32_MAX - 2) + (3 - 1) * 1.
  CHECK(fits_32bit_index(layout<2>({2, 3}, {{3, 1}, {kI32 - 2, 1}})));
  CHECK_FALSE(fits_32bit_index(layout<2>({2, 3}, {{3, 1}, {kI32 - 1, 1}})));
  // Offsets summed over dims: 3 dims of span 2^30 each overflow together, not alone.
  CHECK_FALSE(fits_32bit_index(layout<1>({2, 2, 2}, {{int64_t{1} << 30, int64_t{1} << 30, int64_t{1} << 30}})));
  CHECK(fits_32bit_index(layout<1>({2, 2}, {{int64_t{1} << 30, (int64_t{1} << 30) - 1}})));
  // Broadcast (stride 0) operands and size-1 dims add nothing.
  CHECK(fits_32bit_index(layout<3>({1 << 20, 1 << 10}, {{1 << 10, 1}, {0, 1}, {1, 0}})));
  CHECK(fits_32bit_index(layout<1>({1, 5}, {{int64_t{1} << 40, 1}})));
  // Negative strides: the smallest offset must stay above -INT32_MAX.
  CHECK(fits_32bit_index(layout<1>({1000}, {{-1000}})));
  CHECK_FALSE(fits_32bit_index(layout<1>({3}, {{-(int64_t{1} << 30) - 1}})));
  // A scalar (0-d) layout.
  CHECK(fits_32bit_index(StridedLayout<2>{}));
}

TEST_CASE("forcing the index width never picks a 32-bit kernel that cannot address the layout", "[cuda-host]") {
  const auto small = layout<2>({100, 7}, {{7, 1}, {1, 100}});
  const auto big = layout<2>({2, 3}, {{3, 1}, {int64_t{1} << 31, 1}});
  CHECK(use_32bit_index(small));
  CHECK_FALSE(use_32bit_index(big));
  forced_index_width() = IndexWidth::Force64;
  CHECK_FALSE(use_32bit_index(small));
  forced_index_width() = IndexWidth::Force32;
  CHECK(use_32bit_index(small));
  CHECK_FALSE(use_32bit_index(big));
  forced_index_width() = IndexWidth::Auto;
}

TEST_CASE("the reduction kernel is chosen by the shape and which side is contiguous", "[cuda-host]") {
  const int sms = 132;  // H100/H200: wide = 132 * 2 * 256 = 67584 outputs
  // Short rows: a thread per output, whatever the layout.
  CHECK(choose_reduce(1000, 32, true, false, sms).path == ReducePath::Thread);
  CHECK(choose_reduce(1000, 32, false, true, sms).path == ReducePath::Thread);
  // Inner reductions: a warp per output when there are many outputs, else a block per output.
  CHECK(choose_reduce(100000, 1000, true, false, sms).path == ReducePath::Warp);
  const auto few_rows = choose_reduce(64, 100000, true, false, sms);
  CHECK(few_rows.path == ReducePath::Block);
  CHECK(few_rows.splits == 9);  // ceil(528 / 64) = 9 wanted, ceil(100000 / 4096) = 25 allowed
  CHECK(few_rows.chunk * few_rows.splits >= 100000);
  CHECK((few_rows.chunk - 1) * few_rows.splits < 100000);
  // A full reduction of 2^21 elements: one output, split into 512 slices of 4096.
  const auto full = choose_reduce(1, int64_t{1} << 21, true, false, sms);
  CHECK(full.path == ReducePath::Block);
  CHECK(full.splits == 512);
  CHECK(full.chunk == 4096);
  // Outer reductions (sum over dim 0 of [rows, cols]): the columns kernel, coalesced over cols.
  const auto outer = choose_reduce(64, 100000, false, true, sms);
  CHECK(outer.path == ReducePath::Columns);
  CHECK(outer.splits == 196);  // 2 column blocks want 264 slices; 512 rows each allow 196
  CHECK(outer.chunk == 511);   // ceil(100000 / 196)
  const auto long_rows = choose_reduce(4096, 4096, false, true, sms);
  CHECK(long_rows.path == ReducePath::Columns);
  CHECK(long_rows.splits == 5);  // 128 column blocks: ceil(528 / 128) = 5, ceil(4096 / 512) = 8 allowed
  const auto short_cols = choose_reduce(513, 257, false, true, sms);
  CHECK(short_cols.path == ReducePath::Columns);
  CHECK(short_cols.splits == 1);  // 257 rows: one slice (at least 512 per slice)
  CHECK(short_cols.chunk == 257);
  // Many outputs contiguous across: a thread per output already reads coalesced.
  CHECK(choose_reduce(70000, 1000, false, true, sms).path == ReducePath::Thread);
  // Neither side contiguous (a permuted input): thread when wide, block otherwise.
  CHECK(choose_reduce(70000, 1000, false, false, sms).path == ReducePath::Thread);
  CHECK(choose_reduce(100, 1000, false, false, sms).path == ReducePath::Block);
  // The split never exceeds grid.y's limit (a device of 100000 SMs would want 400000 slices).
  CHECK(choose_reduce(1, int64_t{1} << 40, true, false, 100000).splits == 65535);
}
