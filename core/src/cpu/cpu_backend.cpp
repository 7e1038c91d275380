// CPU backend: reductions, indexing, GEMM (OpenBLAS), im2col, byte copies.
#include "cpu/cpu_backend.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "cpu/loop.h"
#include "cpu/parallel_for.h"
#include "cpu/reduce_rows.h"
#include "cpu/window.h"
#include "wick/core/accumulate_type.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/error.h"
#include "wick/core/indexed_layout.h"

namespace wick::cpu {

void register_cpu_stubs();              // cpu_softmax.cpp
void register_cpu_elementwise_stubs();  // cpu_elementwise.cpp
void register_cpu_layer_norm_stubs();   // cpu_layer_norm.cpp
void register_cpu_optim_stubs();        // cpu_optim.cpp

// Never destroyed: tensors held in static objects (caches, user globals) are freed after every
// function-local static has been destroyed, and their storage still needs the allocator.
Backend& cpu_backend() {
  // The CPU's fused kernels go into their stubs when the backend is first set up (Note
  // [Dispatch stubs]).
  static CpuBackend* b = [] {
    register_cpu_stubs();
    register_cpu_elementwise_stubs();
    register_cpu_layer_norm_stubs();
    register_cpu_optim_stubs();
    return new CpuBackend;
  }();
  return *b;
}

void CpuBackend::copy_bytes_host(void* dst, const void* src, size_t bytes, Device, bool) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void CpuBackend::copy_bytes_peer(void* dst, Device, const void* src, Device, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

namespace {
KernelTensor with_strides(const KernelTensor& t, const DimVector& sizes, const DimVector& strides) {
  KernelTensor k = t;
  k.sizes = sizes;
  k.strides = strides;
  return k;
}
// A reduction's accumulators (or argmax's running best values): on the stack up to 4 KiB, else a
// block of the output's device from the allocator's cache (Note [CPU block cache]). A std::vector
// here went to malloc on every call: in a traced CNN step the [32, 144] accumulators of conv2d's
// weight-gradient partials took 100 us to allocate (fresh pages), against 6 us for the sum itself.
template <typename A>
class Accumulators {
 public:
  Accumulators(Allocator& allocator, Device device, int64_t n)
      : allocator_(allocator), device_(device), bytes_(static_cast<size_t>(n) * sizeof(A)) {
    data_ = n <= kInline ? inline_ : static_cast<A*>(allocator_.allocate(bytes_, device_));
  }
  ~Accumulators() {
    if (data_ != inline_) allocator_.deallocate(data_, bytes_, device_);
  }
  Accumulators(const Accumulators&) = delete;
  Accumulators& operator=(const Accumulators&) = delete;
  A* data() { return data_; }

 private:
  static constexpr int64_t kInline = 4096 / sizeof(A);
  Allocator& allocator_;
  const Device device_;
  const size_t bytes_;
  alignas(64) A inline_[kInline];
  A* data_;
};
}  // namespace

void CpuBackend::reduce(ReduceOp op, const KernelTensor& out, const KernelTensor& in) {
  // Iterate over `in`; out is viewed with stride 0 in reduced dims. Accumulate into a
  // contiguous buffer of the wider type, then cast into out.
  int64_t out_n = 1;
  for (auto s : out.sizes) out_n *= s;
  DimVector acc_strides(in.sizes.size());
  {
    int64_t st = 1;
    for (int d = static_cast<int>(in.sizes.size()) - 1; d >= 0; --d) {
      acc_strides[d] = (out.sizes[d] == 1 && in.sizes[d] != 1) ? 0 : st;
      st *= out.sizes[d];
    }
  }
  // A contiguous input reduced over trailing dims (a row sum, a mean over the last dims) is one
  // row per output: the rows split across the intra-op threads (Note [Intra-op threads]), each
  // reduced by one thread in the same order at every budget.
  int64_t in_n = 1;
  for (auto s : in.sizes) in_n *= s;
  bool trailing = in_n > 0 && is_contiguous_layout(in.sizes, in.strides);
  bool reducing = false;
  for (size_t d = 0; trailing && d < in.sizes.size(); ++d) {
    if (out.sizes[d] == 1 && in.sizes[d] != 1)
      reducing = true;
    else if (reducing && in.sizes[d] != 1)
      trailing = false;  // a kept dim inside the reduced ones
  }
  dispatch(in.dtype, "reduce", [&]<typename T>() {
    using A = math::acc_type<T>;
    KernelTensor acc_k = with_strides(in, in.sizes, acc_strides);
    auto L = layout_of<2>({&acc_k, &in});
    Accumulators<A> acc(allocator(), out.device, out_n);
    const T* pi = reinterpret_cast<const T*>(in.data);
    // Accumulates with Rule's identity and combine (Note [Reduction rules], reduce_functors.h) in
    // the order of Note [CPU reduce order] (reduce_rows.h).
    auto run = [&]<typename Rule>() {
      const A init = Rule::identity();
      constexpr auto combine = Rule::combine;
      A* pa = acc.data();
      std::fill(pa, pa + out_n, init);
      if (trailing) {
        const int64_t cols = in_n / out_n;
        if (cols <= kCascadeBlock) {
          parallel_for(out_n, items_per_piece(cols), [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) pa[r] = fold_row<Rule>(init, pi + r * cols, cols);
          });
          return;
        }
        // Long rows: every row's blocks fold on all the threads, then each row's tree combines
        // them in order, as fold_run would on one thread (Note [CPU reduce order]).
        const int64_t nb = cascade_blocks(cols);
        Accumulators<A> blocks(allocator(), out.device, out_n * nb);
        A* pb = blocks.data();
        parallel_for(out_n * nb, items_per_piece(kCascadeBlock), [&](int64_t b0, int64_t b1) {
          for (int64_t b = b0; b < b1; ++b) {
            const int64_t r = b / nb, first = (b % nb) * kCascadeBlock;
            pb[b] = fold_row<Rule>(init, pi + r * cols + first, std::min(kCascadeBlock, cols - first));
          }
        });
        parallel_for(out_n, items_per_piece(nb), [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            PairwiseCombine<Rule, A> tree;
            for (int64_t k = 0; k < nb; ++k) tree.push(pb[r * nb + k]);
            pa[r] = combine(init, tree.value());
          }
        });
        return;
      }
      // Folds the layout's elements, or those of a range of one of its dims, into the
      // accumulators; `base` is the range's first offset into the accumulators and the input.
      const auto fold_part = [&](const StridedLayout<2>& part, const int64_t(&base)[2]) {
        for_each_row(part, [&](const int64_t* off, int64_t n, const int64_t* st) {
          A* a = pa + base[0] + off[0];
          const T* x = pi + base[1] + off[1];
          if (st[0] == 0) {
            if (st[1] == 1) {
              *a = fold_run<Rule>(*a, x, n);  // the whole row reduces into one value
            } else {
              A r = *a;
              for (int64_t i = 0; i < n; ++i) r = combine(r, static_cast<A>(x[i * st[1]]));
              *a = r;
            }
          } else if (st[0] == 1 && st[1] == 1) {
            accumulate_row<Rule>(a, x, n);
          } else {
            for (int64_t i = 0; i < n; ++i) a[i * st[0]] = combine(a[i * st[0]], static_cast<A>(x[i * st[1]]));
          }
        });
      };
      // The threads split the outermost kept dim (one that indexes the outputs), so each output
      // is reduced by one thread, in the same order at every budget.
      int split = -1;
      for (int d = 0; d < L.ndim && split < 0; ++d)
        if (L.strides[0][d] != 0 && L.sizes[d] > 1) split = d;
      if (split < 0) {
        fold_part(L, {0, 0});
        return;
      }
      const int64_t len = L.sizes[split];
      parallel_for(len, items_per_piece(L.numel / len), [&](int64_t b, int64_t e) {
        StridedLayout<2> part = L;
        part.sizes[split] = e - b;
        part.numel = L.numel / len * (e - b);
        fold_part(part, {b * L.strides[0][split], b * L.strides[1][split]});
      });
    };
    switch (op) {
      case ReduceOp::Sum:
        run.template operator()<math::ReduceRule<A, ReduceOp::Sum>>();
        break;
      case ReduceOp::Prod:
        run.template operator()<math::ReduceRule<A, ReduceOp::Prod>>();
        break;
      case ReduceOp::Max:
        run.template operator()<math::ReduceRule<A, ReduceOp::Max>>();
        break;
      case ReduceOp::Min:
        run.template operator()<math::ReduceRule<A, ReduceOp::Min>>();
        break;
    }
    // Write into out (any strides) from the contiguous accumulator.
    const A* pa = acc.data();
    KernelTensor src;
    src.data = reinterpret_cast<char*>(acc.data());
    src.sizes = out.sizes;
    DimVector cs(out.sizes.size());
    int64_t st = 1;
    for (int d = static_cast<int>(out.sizes.size()) - 1; d >= 0; --d) {
      cs[d] = st;
      st *= out.sizes[d];
    }
    src.strides = cs;
    auto L2 = layout_of<2>({&out, &src});
    T* po = reinterpret_cast<T*>(out.data);
    for_each_row(L2, [&](const int64_t* off, int64_t n, const int64_t* st2) {
      for (int64_t i = 0; i < n; ++i) po[off[0] + i * st2[0]] = static_cast<T>(pa[off[1] + i * st2[1]]);
    });
  });
}

void CpuBackend::arg_reduce(ArgReduceOp op, const KernelTensor& out, const KernelTensor& in, int64_t dim) {
  const int64_t len = in.sizes[dim], st_in = in.strides[dim];
  int64_t inner = 1, outer = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(in.sizes.size()); ++d) {
    if (d < dim) outer *= in.sizes[d];
    if (d > dim) inner *= in.sizes[d];
  }
  const bool dense = is_contiguous_layout(in.sizes, in.strides) && is_contiguous_layout(out.sizes, out.strides);
  if (dense && inner > 1) {
    // [outer, len, inner]: sweep the reduced dim with a running best per inner element, so
    // every pass reads contiguous memory (max-pool windows, argmax over channels).
    dispatch(in.dtype, "argmax", [&]<typename T>() {
      int64_t* po = reinterpret_cast<int64_t*>(out.data);
      const T* pi = reinterpret_cast<const T*>(in.data);
      Accumulators<T> running(allocator(), out.device, inner);
      T* best = running.data();
      for (int64_t o = 0; o < outer; ++o) {
        const T* x = pi + o * len * inner;
        int64_t* idx = po + o * inner;
        std::copy(x, x + inner, best);
        std::fill(idx, idx + inner, int64_t{0});
        for (int64_t j = 1; j < len; ++j) {
          const T* row = x + j * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const T v = row[i], bv = best[i];
            // Note [Reduction rules]: a NaN wins at its first occurrence and then stays.
            const bool better = op == ArgReduceOp::ArgMax ? math::arg_take_later<T, true>(bv, v)
                                                          : math::arg_take_later<T, false>(bv, v);
            best[i] = better ? v : bv;
            idx[i] = better ? j : idx[i];
          }
        }
      }
    });
    return;
  }
  // General layouts: walk out's positions; for each, scan `in` along dim.
  KernelTensor in0 = in;
  in0.sizes = out.sizes;
  auto L = layout_of<2>({&out, &in0});
  dispatch(in.dtype, "argmax", [&]<typename T>() {
    int64_t* po = reinterpret_cast<int64_t*>(out.data);
    const T* pi = reinterpret_cast<const T*>(in.data);
    for_each_row(L, [&](const int64_t* off, int64_t n, const int64_t* st) {
      for (int64_t i = 0; i < n; ++i) {
        const T* x = pi + off[1] + i * st[1];
        int64_t best = 0;
        T bv = x[0];
        for (int64_t j = 1; j < len; ++j) {
          T v = x[j * st_in];
          if (bv != bv) break;  // NaN wins, first occurrence (Note [Reduction rules])
          const bool better =
              op == ArgReduceOp::ArgMax ? math::arg_take_later<T, true>(bv, v) : math::arg_take_later<T, false>(bv, v);
          if (better) {
            bv = v;
            best = j;
          }
        }
        po[off[0] + i * st[0]] = best;
      }
    });
  });
}

namespace {
// The two loops of Note [Indexed kernels] (wick/core/indexed_layout.h builds the layouts).
// read:  out[o0] = data[o1 + index[o2] * stride_dim]
void read_indexed(const IndexedLayout& I, DType dtype, const char* op, char* out, const char* data, const char* index) {
  dispatch(dtype, op, [&]<typename T>() {
    T* po = reinterpret_cast<T*>(out);
    const T* pd = reinterpret_cast<const T*>(data);
    const int64_t* px = reinterpret_cast<const int64_t*>(index);
    const int64_t sd = I.stride_dim;
    for_each_row(I.layout, [&](const int64_t* off, int64_t n, const int64_t* st) {
      for (int64_t i = 0; i < n; ++i) po[off[0] + i * st[0]] = pd[off[1] + i * st[1] + px[off[2] + i * st[2]] * sd];
    });
  });
}
// write: data[o1 + index[o2] * stride_dim] += src[o0], in layout order.
void add_indexed(const IndexedLayout& I, DType dtype, const char* op, const char* src, char* data, const char* index) {
  dispatch(dtype, op, [&]<typename T>() {
    const T* ps = reinterpret_cast<const T*>(src);
    T* pd = reinterpret_cast<T*>(data);
    const int64_t* px = reinterpret_cast<const int64_t*>(index);
    const int64_t sd = I.stride_dim;
    for_each_row(I.layout, [&](const int64_t* off, int64_t n, const int64_t* st) {
      for (int64_t i = 0; i < n; ++i) pd[off[1] + i * st[1] + px[off[2] + i * st[2]] * sd] += ps[off[0] + i * st[0]];
    });
  });
}

// Note [Slice copies for index_select]
// A batch drawn from a data set (`images.index_select(0, perm)`) or an embedding lookup reads
// whole contiguous slices from random places in a large tensor, each touched once. The general
// walk (read_indexed) copied them element by element on one thread: the demo's batch of 64
// Fashion-MNIST images (3 KiB each, from a 188 MB tensor) took 540 us, a latency-bound 2.7 us per
// image, 13% of a training step. When both tensors are contiguous and a slice is at least 256
// bytes, each slice is one memcpy, the next two slices' cache lines are prefetched while one is
// copied (so their misses overlap), and the slices split over the intra-op threads. The bytes
// are the same either way.
// True when it ran, false when the layout needs the general walk.
bool index_select_slices(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) {
  if (!is_contiguous_layout(out.sizes, out.strides) || !is_contiguous_layout(in.sizes, in.strides)) return false;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(in.sizes.size()); ++d) {
    if (d < dim) outer *= in.sizes[d];
    if (d > dim) inner *= in.sizes[d];
  }
  const size_t es = element_size(in.dtype);
  const size_t slice = static_cast<size_t>(inner) * es;
  if (slice < 256) return false;  // short slices: the element loop is as fast
  const int64_t picks = out.sizes[dim], from = in.sizes[dim];
  const int64_t* idx = reinterpret_cast<const int64_t*>(index.data);
  const int64_t idx_stride = index.strides.empty() ? 0 : index.strides[0];
  const char* src = in.data;
  char* dst = out.data;
  const auto source = [&](int64_t k) {  // slice k of out, in (outer, pick) order
    const int64_t o = k / picks, j = k % picks;
    return src + (static_cast<size_t>(o * from + idx[j * idx_stride]) * slice);
  };
  constexpr int64_t kAhead = 2;  // slices prefetched ahead of the copy
  // The first 4 KiB of a slice: past that the hardware prefetcher follows the copy.
  const size_t prefetched = std::min<size_t>(slice, 4096);
  parallel_for(outer * picks, items_per_piece(inner), [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < std::min(k1, k0 + kAhead); ++k)
      for (size_t b = 0; b < prefetched; b += 64) __builtin_prefetch(source(k) + b);
    for (int64_t k = k0; k < k1; ++k) {
      if (k + kAhead < k1) {
        const char* next = source(k + kAhead);
        for (size_t b = 0; b < prefetched; b += 64) __builtin_prefetch(next + b);
      }
      std::memcpy(dst + static_cast<size_t>(k) * slice, source(k), slice);
    }
  });
  return true;
}
}  // namespace

void CpuBackend::index_select(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) {
  if (index_select_slices(out, in, dim, index)) return;
  read_indexed(index_select_layout(out, in, dim, index), out.dtype, "index_select", out.data, in.data, index.data);
}

void CpuBackend::index_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) {
  add_indexed(index_add_layout(out, dim, index, src), out.dtype, "index_add", src.data, out.data, index.data);
}

void CpuBackend::gather(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) {
  read_indexed(gather_layout(out, in, dim, index), out.dtype, "gather", out.data, in.data, index.data);
}

void CpuBackend::scatter_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) {
  add_indexed(scatter_add_layout(out, dim, index, src), out.dtype, "scatter_add", src.data, out.data, index.data);
}

// im2col/col2im walk one row of columns at a time: the padding part of a row is zeroed (or
// skipped), and the valid part is a plain loop with no bounds checks. Rows are short (a 14x14
// output: 14 values), so these are inline loops, not memcpy/memset calls, and each channel's
// loop takes the geometry by value (WindowGeometry in window.h). With stride 1 and rows as wide
// as the input's, both move whole shifted planes instead (Note [Shifted-plane im2col], Note
// [Shifted-plane col2im]).
namespace {
// Note [Shifted-plane im2col]
// With stride 1 and output rows as wide as input rows (a "same" convolution: 3x3 with padding 1),
// each tap's block of columns is the input plane shifted by one offset: output position p reads
// input position p + off_h * W + off_w. So the block is one memcpy from the first valid position
// to the last, after which the taps that fell into padding are zeroed: the rows above or below
// the plane, and in each row the lo and OW - hi columns whose reads wrapped into a neighbouring
// row. The values are those of the row-by-row loop. conv2 of the demo's CNN (16 channels, 14 x
// 14) took 14 us per image row by row (144 rows of 14 values, each with its bounds) and 11.6 us
// so, in a traced step; the CNN's forward at batch 64 went from 2.65 to 2.32 ms.
// Tap (ki, kj) of a stride-1 window whose output rows are as wide as the input's (the two
// shifted-plane Notes): output position p and input position p + shift go together; the valid
// outputs are the columns [lo, hi) of the rows [rlo, rhi), so [first, last) is the run from the
// first valid position to the last (empty() when there is none).
struct ShiftedTap {
  int64_t shift, lo, hi, rlo, rhi, first, last;
  bool empty() const { return rlo == rhi || lo == hi; }
};
inline ShiftedTap shifted_tap(const WindowGeometry& g, int64_t ki, int64_t kj) {
  ShiftedTap t{};
  const int64_t off_h = ki * g.DH - g.PH, off_w = kj * g.DW - g.PW;
  t.shift = off_h * g.W + off_w;
  valid_outputs(g.W, g.OW, 1, off_w, t.lo, t.hi);
  t.rlo = std::clamp<int64_t>(-off_h, 0, g.OH);
  t.rhi = std::clamp<int64_t>(g.H - off_h, t.rlo, g.OH);
  t.first = t.rlo * g.OW + t.lo;
  t.last = (t.rhi - 1) * g.OW + t.hi;
  return t;
}

template <typename T>
void im2col_channel_shifted(const WindowGeometry g, const T* __restrict im, T* __restrict col) {
  const int64_t L = g.OH * g.OW;
  for (int64_t ki = 0; ki < g.KH; ++ki)
    for (int64_t kj = 0; kj < g.KW; ++kj) {
      T* __restrict block = col + (ki * g.KW + kj) * L;
      const ShiftedTap t = shifted_tap(g, ki, kj);
      if (t.empty()) {
        std::fill(block, block + L, T(0));
        continue;
      }
      std::memcpy(block + t.first, im + t.first + t.shift, static_cast<size_t>(t.last - t.first) * sizeof(T));
      std::fill(block, block + t.rlo * g.OW, T(0));
      std::fill(block + t.rhi * g.OW, block + L, T(0));
      for (int64_t oh = t.rlo; oh < t.rhi; ++oh) {
        T* __restrict row = block + oh * g.OW;
        for (int64_t ow = 0; ow < t.lo; ++ow) row[ow] = T(0);
        for (int64_t ow = t.hi; ow < g.OW; ++ow) row[ow] = T(0);
      }
    }
}

template <typename T>
void im2col_channel(const WindowGeometry g, const T* __restrict im, T* __restrict col) {
  if (g.SH == 1 && g.SW == 1 && g.OW == g.W) return im2col_channel_shifted<T>(g, im, col);
  const int64_t L = g.OH * g.OW;
  for (int64_t ki = 0; ki < g.KH; ++ki)
    for (int64_t kj = 0; kj < g.KW; ++kj) {
      T* __restrict rows = col + (ki * g.KW + kj) * L;
      const int64_t off_w = kj * g.DW - g.PW;
      int64_t lo, hi;
      valid_outputs(g.W, g.OW, g.SW, off_w, lo, hi);
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        T* __restrict row = rows + oh * g.OW;
        const int64_t ih = oh * g.SH - g.PH + ki * g.DH;
        if (ih < 0 || ih >= g.H) {
          for (int64_t ow = 0; ow < g.OW; ++ow) row[ow] = T(0);
          continue;
        }
        const T* __restrict src = im + ih * g.W;
        for (int64_t ow = 0; ow < lo; ++ow) row[ow] = T(0);
        if (g.SW == 1) {
          for (int64_t ow = lo; ow < hi; ++ow) row[ow] = src[ow + off_w];
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) row[ow] = src[ow * g.SW + off_w];
        }
        for (int64_t ow = hi; ow < g.OW; ++ow) row[ow] = T(0);
      }
    }
}

// Note [Shifted-plane col2im]
// The reverse of Note [Shifted-plane im2col]: with stride 1 and output rows as wide as input
// rows, tap (ki, kj) adds its block into the plane shifted by off_h * W + off_w, so the whole
// block from its first valid position to its last is one vectorized loop. The columns outside
// [lo, hi) of each row wrap into a neighbouring row's border, at places this tap never adds to
// otherwise; their values are saved before the loop and put back after it, so every value's bits
// are those of the row-by-row loop (same taps, same order). A group of at most 64 rows is done at
// a time, so the saved values fit in a small buffer on the stack; with more than 8 wrapped
// columns per row (wide dilations) the row loop runs instead.
template <typename T>
WICK_CPU_MULTIVERSION bool col2im_channel_shifted(const WindowGeometry g, const T* __restrict col, T* __restrict im) {
  constexpr int64_t kRows = 64, kWrapped = 8;
  const int64_t L = g.OH * g.OW;
  for (int64_t kj = 0; kj < g.KW; ++kj) {  // the wrapped columns depend on the tap's column alone
    const ShiftedTap t = shifted_tap(g, 0, kj);
    if (t.lo < t.hi && g.OW - (t.hi - t.lo) > kWrapped) return false;  // checked before any tap has added
  }
  for (int64_t ki = 0; ki < g.KH; ++ki)
    for (int64_t kj = 0; kj < g.KW; ++kj) {
      const T* __restrict block = col + (ki * g.KW + kj) * L;
      const ShiftedTap t = shifted_tap(g, ki, kj);
      if (t.empty()) continue;
      for (int64_t r0 = t.rlo; r0 < t.rhi; r0 += kRows) {
        const int64_t r1 = std::min(r0 + kRows, t.rhi);
        const int64_t p0 = std::max(t.first, r0 * g.OW), p1 = std::min(t.last, r1 * g.OW);
        T saved[kRows * kWrapped];
        int64_t where[kRows * kWrapped];
        int64_t n = 0;
        for (int64_t oh = r0; oh < r1; ++oh) {
          for (int64_t ow = 0; ow < t.lo; ++ow)
            if (const int64_t p = oh * g.OW + ow; p >= p0 && p < p1) where[n++] = p + t.shift;
          for (int64_t ow = t.hi; ow < g.OW; ++ow)
            if (const int64_t p = oh * g.OW + ow; p >= p0 && p < p1) where[n++] = p + t.shift;
        }
        for (int64_t i = 0; i < n; ++i) saved[i] = im[where[i]];
        T* __restrict dst = im + (p0 + t.shift);
        const T* __restrict src = block + p0;
        for (int64_t i = 0; i < p1 - p0; ++i) dst[i] += src[i];
        for (int64_t i = 0; i < n; ++i) im[where[i]] = saved[i];
      }
    }
  return true;
}

template <typename T>
void col2im_channel(const WindowGeometry g, const T* __restrict col, T* __restrict im) {
  if (g.SH == 1 && g.SW == 1 && g.OW == g.W && col2im_channel_shifted<T>(g, col, im)) return;
  const int64_t L = g.OH * g.OW;
  for (int64_t ki = 0; ki < g.KH; ++ki)
    for (int64_t kj = 0; kj < g.KW; ++kj) {
      const T* __restrict rows = col + (ki * g.KW + kj) * L;
      const int64_t off_w = kj * g.DW - g.PW;
      int64_t lo, hi;
      valid_outputs(g.W, g.OW, g.SW, off_w, lo, hi);
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        const int64_t ih = oh * g.SH - g.PH + ki * g.DH;
        if (ih < 0 || ih >= g.H) continue;
        const T* __restrict row = rows + oh * g.OW;
        T* __restrict dst = im + ih * g.W;
        if (g.SW == 1) {
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow + off_w] += row[ow];
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow * g.SW + off_w] += row[ow];
        }
      }
    }
}
}  // namespace

void CpuBackend::im2col(const Im2ColArgs& g, const void* image, void* columns) {
  dispatch_floating(g.dtype, "im2col", [&]<typename T>() {
    const T* im = static_cast<const T*>(image);
    T* col = static_cast<T*>(columns);
    const WindowGeometry geometry(g);
    const int64_t plane = g.height * g.width, per_channel = g.kernel_h * g.kernel_w * g.out_h * g.out_w;
    // Each channel writes its own rows of columns: channels split across the intra-op threads.
    parallel_for(g.channels, items_per_piece(per_channel), [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) im2col_channel<T>(geometry, im + c * plane, col + c * per_channel);
    });
  });
}

void CpuBackend::col2im(const Im2ColArgs& g, const void* columns, void* image) {
  dispatch_floating(g.dtype, "col2im", [&]<typename T>() {
    T* im = static_cast<T*>(image);
    const T* col = static_cast<const T*>(columns);
    const WindowGeometry geometry(g);
    const int64_t plane = g.height * g.width, per_channel = g.kernel_h * g.kernel_w * g.out_h * g.out_w;
    // Each channel adds into its own plane of the image: channels split across the threads, and
    // each plane still receives its taps in the same order.
    parallel_for(g.channels, items_per_piece(per_channel), [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) col2im_channel<T>(geometry, col + c * per_channel, im + c * plane);
    });
  });
}

}  // namespace wick::cpu
