// conv2d, its two gradient functions, unfold2d and fold2d (Note [conv2d as three closed
// functions] in conv_ops.h): natives on the backend's im2col/col2im/GEMM, each recorded with a
// backward written on the others.
#include "conv_ops.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "wick/autograd/functions.h"
#include "wick/autograd/record.h"
#include "wick/core/backend.h"
#include "wick/core/intra_op_parallel.h"
#include "wick/core/native.h"
#include "wick/core/stubs.h"

namespace wick::nn::detail {

using autograd::needs_grad;
using autograd::record_function;
using VL = autograd::variable_list;

Im2ColArgs window_args(const ConvGeom& g, DType dtype, int64_t channels) {
  Im2ColArgs a{};
  a.dtype = dtype;
  a.channels = channels;
  a.height = g.H;
  a.width = g.W;
  a.kernel_h = g.kh;
  a.kernel_w = g.kw;
  a.pad_h = g.ph;
  a.pad_w = g.pw;
  a.stride_h = g.sh;
  a.stride_w = g.sw;
  a.dilation_h = g.dh;
  a.dilation_w = g.dw;
  a.out_h = g.oh;
  a.out_w = g.ow;
  return a;
}

namespace {

// g's windows over an explicit height, width and padding (unfold2d pads by hand for ceil_mode).
Im2ColArgs im2col_args(const ConvGeom& g, DType dt, int64_t height, int64_t width, int64_t ph, int64_t pw) {
  Im2ColArgs a = window_args(g, dt, g.C);
  a.height = height;
  a.width = width;
  a.pad_h = ph;
  a.pad_w = pw;
  return a;
}

char* bytes(const Tensor& t) { return static_cast<char*>(t.data_ptr()); }

// Bytes of one image of the geometry `a`, and of its columns.
std::pair<size_t, size_t> image_and_columns_bytes(const Im2ColArgs& a) {
  const size_t es = element_size(a.dtype);
  return {static_cast<size_t>(a.channels * a.height * a.width) * es,
          static_cast<size_t>(a.channels * a.kernel_h * a.kernel_w * a.out_h * a.out_w) * es};
}

// Note [Batched im2col]: `images` contiguous images into their columns, in one launch where the
// backend has stubs::im2col_images, else one Backend::im2col per image (the CPU's loop).
void im2col_images(Device d, const Im2ColArgs& a, int64_t images, const void* image, void* columns) {
  if (images == 0) return;
  if (stubs::im2col_images.find(d.type) != nullptr) return stubs::im2col_images(d.type, a, images, image, columns);
  const auto [in_step, col_step] = image_and_columns_bytes(a);
  Backend& be = backend(d);
  for (int64_t n = 0; n < images; ++n)
    be.im2col(a, static_cast<const char*>(image) + n * in_step, static_cast<char*>(columns) + n * col_step);
}

// image[n] += col2im(columns[n]) for `images` images, batched as im2col_images.
void col2im_images(Device d, const Im2ColArgs& a, int64_t images, const void* columns, void* image) {
  if (images == 0) return;
  if (stubs::col2im_images.find(d.type) != nullptr) return stubs::col2im_images(d.type, a, images, columns, image);
  const auto [im_step, col_step] = image_and_columns_bytes(a);
  Backend& be = backend(d);
  for (int64_t n = 0; n < images; ++n)
    be.col2im(a, static_cast<const char*>(columns) + n * col_step, static_cast<char*>(image) + n * im_step);
}

// cols [N, C*kk, L] of a contiguous x [N, C, height, width] with the given padding.
Tensor im2col_batch(const Tensor& x, const ConvGeom& g, int64_t height, int64_t width, int64_t ph, int64_t pw) {
  const int64_t ckk = g.C * g.kk(), L = g.L();
  Tensor cols = native::empty({g.N, ckk, L}, x.dtype(), x.device());
  if (cols.numel() == 0) return cols;
  im2col_images(x.device(), im2col_args(g, x.dtype(), height, width, ph, pw), g.N, x.data_ptr(), cols.data_ptr());
  return cols;
}

// x [N, C, H, W] (zeroed here) += col2im(cols) per image.
Tensor col2im_batch(const Tensor& cols, const ConvGeom& g) {
  Tensor x = native::zeros({g.N, g.C, g.H, g.W}, cols.dtype(), cols.device());
  if (x.numel() == 0 || cols.numel() == 0) return x;
  col2im_images(cols.device(), window_args(g, cols.dtype(), g.C), g.N, cols.data_ptr(), x.data_ptr());
  return x;
}

Tensor im2col_conv(const Tensor& x, const ConvGeom& g) {
  if (g.pointwise()) return native::view(x, {g.N, g.C, g.H * g.W});
  return im2col_batch(x, g, g.H, g.W, g.ph, g.pw);
}

// ---- natives ----

// Note [conv2d in image chunks]
// The forward (im2col, bias, GEMM) and the input gradient (GEMM, col2im) run a chunk of images
// at a time, each step reading what the previous one just wrote. On the CPU a chunk's columns
// are at most 256 KB (two images of the demo's second conv, nine of its first), so they stay in
// L2 between the steps, where a whole batch's columns (~7 MB there) would go to memory and back;
// the input gradient then needs one chunk of scratch columns instead of a batch. Measured on the
// demo's train step: about 10% faster than whole-batch steps. Other devices take the whole batch
// in one chunk: there, one batched GEMM beats many small launches.
int64_t images_per_chunk(const ConvGeom& g, Device d, size_t element_size) {
  if (!d.is_cpu() || g.N <= 1) return std::max<int64_t>(g.N, 1);
  constexpr size_t kChunkBytes = 256 * 1024;  // well inside a core's L2
  const size_t per_image = std::max<size_t>(static_cast<size_t>(g.C * g.kk() * g.L()) * element_size, 1);
  return std::clamp<int64_t>(static_cast<int64_t>(kChunkBytes / per_image), 1, g.N);
}

// Calls f(first, last) over the images [0, n) in runs of whole chunks of `chunk` images (first a
// multiple of chunk). With more than one chunk (only on the CPU: images_per_chunk gives other
// devices the whole batch) the chunks go to the intra-op threads, each thread taking whole
// chunks: a chunk's im2col, GEMM and bias are each too small to split well, and the chunk's
// columns stay in the cache of the core that wrote them. The body then runs in a parallel region
// (Note [Parallel regions]), so its GEMMs are single OpenBLAS calls whichever thread runs them and
// whatever the budget: the bits depend only on the shape.
template <typename F>
void for_each_chunk(int64_t n, int64_t chunk, F&& f) {
  const int64_t chunks = (n + chunk - 1) / chunk;
  if (chunks <= 1) {
    f(int64_t{0}, n);
    return;
  }
  wick::parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) { f(c0 * chunk, std::min(n, c1 * chunk)); });
}

// y[n] = w [O, CKK] @ cols[n] [CKK, L] (+ b) for the images [n0, n0 + nb); cols points at image
// n0's columns. With groups, one GEMM per group: output rows of group j from its weight block
// [Og, Cg*kk] and its block of column rows.
void conv_forward_chunk(const void* cols, const Tensor& w, const Tensor& b, const Tensor& y, const ConvGeom& g,
                        int64_t n0, int64_t nb) {
  const int64_t ckk = g.C * g.kk(), gkk = g.Cg() * g.kk(), L = g.L();
  Tensor y_chunk = native::view(native::narrow(y, 0, n0, nb), {nb, g.O, L});
  double beta = 0.0;
  if (b.defined()) {
    native::copy_(y_chunk, native::view(b, {1, g.O, 1}));
    beta = 1.0;
  }
  if (ckk == 0) {
    if (!b.defined()) native::fill_(y_chunk, 0);
    return;
  }
  const size_t es = w.element_size();
  for (int64_t j = 0; j < g.G; ++j) {
    GemmArgs a{};
    a.dtype = w.dtype();
    a.batch = nb;
    a.m = g.Og();
    a.n = L;
    a.k = gkk;
    a.a = bytes(w) + static_cast<size_t>(j * g.Og() * gkk) * es;
    a.lda = gkk;
    a.stride_a = 0;
    a.trans_a = false;
    a.b = static_cast<const char*>(cols) + static_cast<size_t>(j * gkk * L) * es;
    a.ldb = L;
    a.stride_b = ckk * L;
    a.trans_b = false;
    a.c = bytes(y_chunk) + static_cast<size_t>(j * g.Og() * L) * es;
    a.ldc = L;
    a.stride_c = g.O * L;
    a.alpha = 1.0;
    a.beta = beta;
    backend(w.device()).gemm(a);
  }
}

// conv(x, w) + b for a contiguous x. When `keep_cols`, the columns of every image are returned
// in `cols` ([N, CKK, L], or x itself for a pointwise conv) for the weight gradient.
Tensor conv_forward_native(const Tensor& x, const Tensor& w, const Tensor& b, const ConvGeom& g, bool keep_cols,
                           Tensor& cols) {
  Tensor y = native::empty({g.N, g.O, g.oh, g.ow}, w.dtype(), w.device());
  if (y.numel() == 0) return y;
  const int64_t ckk = g.C * g.kk(), L = g.L();
  if (g.pointwise()) {
    cols = native::view(x, {g.N, g.C, g.H * g.W});
    conv_forward_chunk(cols.data_ptr(), w, b, y, g, 0, g.N);
    return y;
  }
  const int64_t chunk = images_per_chunk(g, x.device(), x.element_size());
  const Im2ColArgs a = window_args(g, x.dtype(), g.C);
  const size_t es = x.element_size();
  const size_t in_step = static_cast<size_t>(g.C * g.H * g.W) * es, col_step = static_cast<size_t>(ckk * L) * es;
  Tensor kept = keep_cols ? native::empty({g.N, ckk, L}, x.dtype(), x.device()) : Tensor();
  for_each_chunk(g.N, chunk, [&](int64_t first, int64_t last) {
    // Each thread's own columns where they are not kept.
    Tensor scratch = keep_cols ? Tensor() : native::empty({chunk, ckk, L}, x.dtype(), x.device());
    for (int64_t n0 = first; n0 < last; n0 += chunk) {
      const int64_t nb = std::min(chunk, g.N - n0);
      char* c0 = keep_cols ? bytes(kept) + static_cast<size_t>(n0) * col_step : bytes(scratch);
      if (col_step) im2col_images(x.device(), a, nb, bytes(x) + n0 * in_step, c0);
      conv_forward_chunk(c0, w, b, y, g, n0, nb);
    }
  });
  if (keep_cols) cols = kept;
  return y;
}

// gcols[n] = w^T [CKK, O] @ gy[n] [O, L] for nb images (per group: that group's rows of gcols
// from its weight block and its output channels).
void conv_input_cols(const Tensor& w, const void* gy, void* gcols, const ConvGeom& g, int64_t nb) {
  const int64_t ckk = g.C * g.kk(), gkk = g.Cg() * g.kk(), L = g.L();
  const size_t es = w.element_size();
  for (int64_t j = 0; j < g.G; ++j) {
    GemmArgs a{};
    a.dtype = w.dtype();
    a.batch = nb;
    a.m = gkk;
    a.n = L;
    a.k = g.Og();
    a.a = bytes(w) + static_cast<size_t>(j * g.Og() * gkk) * es;
    a.lda = gkk;
    a.stride_a = 0;
    a.trans_a = true;
    a.b = static_cast<const char*>(gy) + static_cast<size_t>(j * g.Og() * L) * es;
    a.ldb = L;
    a.stride_b = g.O * L;
    a.trans_b = false;
    a.c = static_cast<char*>(gcols) + static_cast<size_t>(j * gkk * L) * es;
    a.ldc = L;
    a.stride_c = ckk * L;
    backend(w.device()).gemm(a);
  }
}

// gx = col2im(w^T [CKK, O] @ gy[n] [O, L]), a chunk of images at a time through scratch columns.
Tensor conv_input_grad_native(const Tensor& gy, const Tensor& w, const ConvGeom& g) {
  const int64_t ckk = g.C * g.kk(), L = g.L();
  if (g.N * ckk * L == 0 || g.O == 0) return native::zeros({g.N, g.C, g.H, g.W}, w.dtype(), w.device());
  if (g.pointwise()) {  // the columns are the image: straight into gx
    Tensor gx = native::empty({g.N, g.C, g.H, g.W}, w.dtype(), w.device());
    conv_input_cols(w, gy.data_ptr(), gx.data_ptr(), g, g.N);
    return gx;
  }
  const int64_t chunk = images_per_chunk(g, w.device(), w.element_size());
  Tensor gx = native::zeros({g.N, g.C, g.H, g.W}, w.dtype(), w.device());
  const Im2ColArgs im = window_args(g, w.dtype(), g.C);
  const size_t es = w.element_size();
  const size_t im_step = static_cast<size_t>(g.C * g.H * g.W) * es;
  const size_t gy_step = static_cast<size_t>(g.O * L) * es;
  for_each_chunk(g.N, chunk, [&](int64_t first, int64_t last) {
    Tensor gcols = native::empty({chunk, ckk, L}, w.dtype(), w.device());  // this thread's scratch
    for (int64_t n0 = first; n0 < last; n0 += chunk) {
      const int64_t nb = std::min(chunk, g.N - n0);
      conv_input_cols(w, bytes(gy) + static_cast<size_t>(n0) * gy_step, gcols.data_ptr(), g, nb);
      col2im_images(w.device(), im, nb, gcols.data_ptr(), bytes(gx) + n0 * im_step);
    }
  });
  return gx;
}

// Note [Batched conv weight gradient]
// gw = sum_n gy[n] @ cols[n]^T. The CPU accumulates image after image (beta = 1), N x G GEMMs of
// batch 1 that each keep their sum in cache: into one partial sum per run of images (up to 8
// runs, cut by the shape alone), the runs on the intra-op threads, and the partials are then
// summed in order. Other devices would pay a launch per GEMM, so
// they write each image's product into partials [nb, O, Cg*kk] (G strided-batched GEMMs over a
// chunk of nb images) and sum the partials over the images (one reduction, whose order is fixed,
// Note [Reductions] in docs/cuda.md). A chunk's partials are at most kPartialBytes; chunk sums
// add into gw in chunk order. The choice is the device type's, so the CPU keeps its bits.
Tensor conv_weight_grad_batched(const Tensor& cols, const Tensor& gy, const ConvGeom& g) {
  const int64_t ckk = g.C * g.kk(), gkk = g.Cg() * g.kk(), L = g.L();
  const size_t es = gy.element_size();
  constexpr size_t kPartialBytes = size_t{64} << 20;
  const size_t per_image = std::max<size_t>(static_cast<size_t>(g.O * gkk) * es, 1);
  const int64_t chunk = std::clamp<int64_t>(static_cast<int64_t>(kPartialBytes / per_image), 1, g.N);
  Tensor gw;
  Tensor partials = native::empty({chunk, g.O, gkk}, gy.dtype(), gy.device());
  for (int64_t n0 = 0; n0 < g.N; n0 += chunk) {
    const int64_t nb = std::min(chunk, g.N - n0);
    for (int64_t j = 0; j < g.G; ++j) {
      GemmArgs a{};
      a.dtype = gy.dtype();
      a.batch = nb;
      a.m = g.Og();
      a.n = gkk;
      a.k = L;
      a.a = bytes(gy) + static_cast<size_t>((n0 * g.O + j * g.Og()) * L) * es;
      a.lda = L;
      a.stride_a = g.O * L;
      a.trans_a = false;
      a.b = bytes(cols) + static_cast<size_t>(n0 * ckk * L + j * gkk * L) * es;
      a.ldb = L;
      a.stride_b = ckk * L;
      a.trans_b = true;
      a.c = bytes(partials) + static_cast<size_t>(j * g.Og() * gkk) * es;
      a.ldc = gkk;
      a.stride_c = g.O * gkk;
      backend(gy.device()).gemm(a);
    }
    Tensor sum = native::reduce(ReduceOp::Sum, native::narrow(partials, 0, 0, nb), {0}, false);
    if (gw.defined())
      native::binary_(BinaryOp::Add, gw, sum);
    else
      gw = sum;
  }
  return native::view(gw, {g.O, g.Cg(), g.kh, g.kw});
}

// gw [O, CKK] = sum_n gy[n] [O, L] @ cols[n]^T [L, CKK] (per group: its weight block from its
// output channels and its rows of the columns).
Tensor conv_weight_grad_native(const Tensor& cols, const Tensor& gy, const ConvGeom& g) {
  const int64_t ckk = g.C * g.kk(), gkk = g.Cg() * g.kk(), L = g.L();
  if (!gy.device().is_cpu() && g.O * gkk > 0 && L > 0 && g.N > 0) return conv_weight_grad_batched(cols, gy, g);
  Tensor gw = native::zeros({g.O, g.Cg(), g.kh, g.kw}, gy.dtype(), gy.device());
  if (gw.numel() == 0 || L == 0 || g.N == 0) return gw;
  Backend& be = backend(gy.device());
  const size_t es = gy.element_size();
  // out [O, gkk] = sum over the images [first, last) of gy[n] @ cols[n]^T, image after image.
  const auto accumulate = [&](int64_t first, int64_t last, char* out) {
    for (int64_t n = first; n < last; ++n)
      for (int64_t j = 0; j < g.G; ++j) {
        GemmArgs a{};
        a.dtype = gy.dtype();
        a.batch = 1;
        a.m = g.Og();
        a.n = gkk;
        a.k = L;
        a.a = bytes(gy) + static_cast<size_t>((n * g.O + j * g.Og()) * L) * es;
        a.lda = L;
        a.trans_a = false;
        a.b = bytes(cols) + static_cast<size_t>(n * ckk * L + j * gkk * L) * es;
        a.ldb = L;
        a.trans_b = true;
        a.c = out + static_cast<size_t>(j * g.Og() * gkk) * es;
        a.ldc = gkk;
        a.alpha = 1.0;
        a.beta = n == first ? 0.0 : 1.0;
        be.gemm(a);
      }
  };
  // Several chunks of images: the images split into up to kWeightGradParts runs, one partial sum
  // each, accumulated on whichever thread takes the run, then the partials summed in order (Note
  // [Batched conv weight gradient]). The runs depend only on the shape, so the bits do too.
  constexpr int64_t kWeightGradParts = 8;
  const int64_t chunk = images_per_chunk(g, gy.device(), es);
  const int64_t parts = std::min((g.N + chunk - 1) / chunk, kWeightGradParts);
  if (parts <= 1) {
    accumulate(0, g.N, bytes(gw));
    return gw;
  }
  Tensor partials = native::empty({parts, g.O, gkk}, gy.dtype(), gy.device());
  wick::parallel_for(0, parts, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
      accumulate(g.N * p / parts, g.N * (p + 1) / parts, bytes(partials) + static_cast<size_t>(p * g.O * gkk) * es);
  });
  return native::view(native::reduce(ReduceOp::Sum, partials, {0}, false), {g.O, g.Cg(), g.kh, g.kw});
}

}  // namespace

// ---- differentiable functions ----

Tensor conv2d_op(const Tensor& x_in, const Tensor& w_in, const Tensor& b, const ConvGeom& g) {
  const Tensor x = native::contiguous(x_in), w = native::contiguous(w_in);
  const bool rec = needs_grad({&x_in, &w_in, &b});
  const bool need_w = rec && autograd::requires_grad(w_in);
  Tensor cols;
  Tensor y = conv_forward_native(x, w, b.defined() ? native::contiguous(b) : b, g, need_w, cols);
  if (rec) {
    const bool need_x = autograd::requires_grad(x_in);
    const bool need_b = b.defined() && autograd::requires_grad(b);
    record_function("Conv2dBackward", {x_in, w_in, b}, {y},
                    [g, need_x, need_w, need_b](const VL& grads, const VL& s) -> VL {
                      const Tensor& gy = grads[0];
                      Tensor gx = need_x ? conv2d_input_grad(gy, s[1], g) : Tensor();
                      Tensor gw = need_w ? conv2d_weight_grad(s[0], gy, g, s[2]) : Tensor();
                      Tensor gb = need_b ? sum(gy, {0, 2, 3}) : Tensor();
                      return {gx, gw, gb};
                    },
                    {x_in, w_in, need_w ? cols : Tensor()});
  }
  return y;
}

Tensor conv2d_input_grad(const Tensor& gy_in, const Tensor& w_in, const ConvGeom& g) {
  const Tensor gy = native::contiguous(gy_in), w = native::contiguous(w_in);
  Tensor gx = conv_input_grad_native(gy, w, g);
  if (needs_grad({&gy_in, &w_in})) {
    record_function("Conv2dInputGradBackward", {gy_in, w_in}, {gx},
                    [g](const VL& grads, const VL& s) -> VL {
                      const Tensor& gg = grads[0];
                      return {conv2d_op(gg, s[1], Tensor(), g), conv2d_weight_grad(gg, s[0], g)};
                    },
                    {gy_in, w_in});
  }
  return gx;
}

Tensor conv2d_weight_grad(const Tensor& x_in, const Tensor& gy_in, const ConvGeom& g, const Tensor& cols_hint) {
  const Tensor gy = native::contiguous(gy_in);
  Tensor cols = cols_hint.defined() ? cols_hint : im2col_conv(native::contiguous(x_in), g);
  Tensor gw = conv_weight_grad_native(cols, gy, g);
  if (needs_grad({&x_in, &gy_in})) {
    record_function("Conv2dWeightGradBackward", {x_in, gy_in}, {gw},
                    [g](const VL& grads, const VL& s) -> VL {
                      const Tensor& gg = grads[0];
                      return {conv2d_input_grad(s[1], gg, g), conv2d_op(s[0], gg, Tensor(), g)};
                    },
                    {x_in, gy_in});
  }
  return gw;
}

Tensor unfold2d(const Tensor& x_in, const ConvGeom& g, double pad_value) {
  const Tensor x = native::contiguous(x_in);
  // Rows from -ph up to the last window's last row (which ceil_mode may push past H + ph).
  const int64_t hp = std::max(g.H + 2 * g.ph, (g.oh - 1) * g.sh + g.dh * (g.kh - 1) + 1);
  const int64_t wp = std::max(g.W + 2 * g.pw, (g.ow - 1) * g.sw + g.dw * (g.kw - 1) + 1);
  const bool beyond = hp > g.H + 2 * g.ph || wp > g.W + 2 * g.pw;
  Tensor cols;
  if (pad_value == 0.0 || (g.ph == 0 && g.pw == 0 && !beyond)) {
    cols = im2col_batch(x, g, g.H, g.W, g.ph, g.pw);  // im2col reads zeros outside the image
  } else {
    Tensor xp = native::full({g.N, g.C, hp, wp}, pad_value, x.dtype(), x.device());
    native::copy_(native::narrow(native::narrow(xp, 2, g.ph, g.H), 3, g.pw, g.W), x);
    cols = im2col_batch(xp, g, hp, wp, 0, 0);
  }
  if (needs_grad({&x_in})) {
    record_function("Unfold2dBackward", {x_in}, {cols},
                    [g](const VL& grads, const VL&) -> VL { return {fold2d(grads[0], g)}; });
  }
  return cols;
}

Tensor fold2d(const Tensor& cols_in, const ConvGeom& g) {
  Tensor x = col2im_batch(native::contiguous(cols_in), g);
  if (needs_grad({&cols_in})) {
    record_function("Fold2dBackward", {cols_in}, {x},
                    [g](const VL& grads, const VL&) -> VL { return {unfold2d(grads[0], g, 0.0)}; });
  }
  return x;
}

}  // namespace wick::nn::detail
