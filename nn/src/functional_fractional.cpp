// F::fractional_max_pool2d / 3d.
//
// Note [Fractional max pooling]
// PyTorch 1.13's windows (at::native fractional_max_pool2d / 3d): each plane (n, c) has one
// sample u in [0, 1] per spatial dim (2-d: entry 0 for the width, 1 for the height; 3-d: depth,
// height, width), and along a dim of input size I, output size O and kernel K the window of
// output i starts at
//   int((i + u) * a) - int(u * a),  a = (I - K) / (O - 1),  for i < O - 1,   and I - K for i = O - 1,
// computed in the input's dtype (float32 input: float arithmetic), so windows overlap or skip
// positions pseudo-randomly. The maximum is the first one in row-major window order, a NaN
// replaces it (so the last NaN wins), as PyTorch's kernel. wick finds the indices on the host from
// a copy of the input (a reference implementation: one pass over the windows), then gathers the
// output on the input's device with the differentiable gather, so the gradient accumulates at the
// maxima (PyTorch's backward) on every device. Samples are drawn, when not given, from wick's
// generator in the input's dtype; given samples are converted to it and must lie in [0, 1]
// (PyTorch does not check; a sample outside would index past the input).
#include "wick/nn/functional_fractional.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::nn::functional {

namespace {
using detail::shape_str;

template <class S>
std::vector<int64_t> intervals(S u, int64_t in, int64_t out, int64_t k) {
  std::vector<int64_t> seq(static_cast<size_t>(out));
  if (out > 1) {
    const S a = static_cast<S>(in - k) / static_cast<S>(out - 1);
    for (int64_t i = 0; i < out - 1; ++i)
      seq[static_cast<size_t>(i)] = static_cast<int64_t>((static_cast<S>(i) + u) * a) - static_cast<int64_t>(u * a);
  }
  if (out > 0) seq[static_cast<size_t>(out - 1)] = in - k;
  return seq;
}

// One call's geometry; dims are in spatial order (h, w or d, h, w).
struct Geometry {
  const char* op;
  std::vector<int64_t> kernel;
  std::optional<std::vector<int64_t>> out;
  std::optional<std::vector<double>> ratio;
  Tensor samples;
  std::vector<size_t> sample_entry;  // which sample entry places each spatial dim
};

std::string list(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

std::tuple<Tensor, Tensor> pool(const Geometry& g, const Tensor& input) {
  const size_t nd = g.kernel.size();
  const int64_t rank = static_cast<int64_t>(nd);
  WICK_CHECK(input.defined(), "{}: input is undefined", g.op);
  WICK_CHECK(input.dim() == rank + 1 || input.dim() == rank + 2,
             "{}: expects a {}-d (unbatched) or {}-d input, got shape {}", g.op, rank + 1, rank + 2, shape_str(input));
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {}", g.op, input.dtype());
  for (int64_t d = input.dim() - rank - 1; d < input.dim(); ++d)
    WICK_CHECK(input.size(d) > 0, "{}: input {} has an empty non-batch dim {}", g.op, shape_str(input), d);
  WICK_CHECK(g.out.has_value() != g.ratio.has_value(), "{}: give exactly one of output_size and output_ratio (got {})",
             g.op, g.out ? "both" : "neither");
  const bool batched = input.dim() == rank + 2;
  const Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t n = x.size(0), c = x.size(1);
  std::vector<int64_t> in(nd), out(nd);
  for (size_t d = 0; d < nd; ++d) {
    in[d] = x.size(static_cast<int64_t>(d) + 2);
    WICK_CHECK(g.kernel[d] > 0, "{}: kernel_size {} must be positive", g.op, list(g.kernel));
    if (g.ratio) {
      const double r = (*g.ratio)[d];
      WICK_CHECK(r > 0.0 && r < 1.0, "{}: output_ratio must be in (0, 1), got {}", g.op, r);
      out[d] = static_cast<int64_t>(static_cast<double>(in[d]) * r);
    } else {
      out[d] = (*g.out)[d];
    }
    WICK_CHECK(out[d] >= 1, "{}: output size {} must be positive (input {})", g.op, list(out), shape_str(input));
    WICK_CHECK(out[d] + g.kernel[d] - 1 <= in[d],
               "{}: kernel {} is too large for output size {} on input {}: each output size + kernel - 1 must be "
               "at most the input size",
               g.op, list(g.kernel), list(out), shape_str(input));
  }
  // The samples, [N, C, nd], in the input's dtype.
  Tensor samples;
  if (g.samples.defined()) {
    WICK_CHECK_TYPE(g.samples.is_floating_point(), "{}: _random_samples must be float32 or float64, got {}", g.op,
                    g.samples.dtype());
    WICK_CHECK(g.samples.dim() == 3 && g.samples.size(0) == n && g.samples.size(1) == c && g.samples.size(2) == rank,
               "{}: _random_samples must have shape [{}, {}, {}] for input {}, got {}", g.op, n, c, rank,
               shape_str(input), shape_str(g.samples));
    samples = g.samples.detach().to(x.dtype());
  } else {
    samples = native::rand({n, c, rank}, x.dtype(), x.device());
  }
  const std::vector<double> u = samples.to_vector<double>();
  for (double v : u) WICK_CHECK(v >= 0.0 && v <= 1.0, "{}: _random_samples must lie in [0, 1], got {}", g.op, v);
  int64_t plane = 1, outs = 1, total = 0;
  for (size_t d = 0; d < nd; ++d) {
    WICK_CHECK(!mul_overflow(plane, in[d], &plane) && !mul_overflow(outs, out[d], &outs), "{}: sizes overflow int64",
               g.op);
  }
  WICK_CHECK(!mul_overflow(n * c, outs, &total), "{}: output size overflows int64", g.op);
  const std::vector<double> xv = x.detach().contiguous().to_vector<double>();
  std::vector<int64_t> idx(static_cast<size_t>(total));
  std::vector<int64_t> stride(nd, 1);
  for (size_t d = nd - 1; d > 0; --d) stride[d - 1] = stride[d] * in[d];
  for (int64_t p = 0; p < n * c; ++p) {
    std::vector<std::vector<int64_t>> start(nd);
    for (size_t d = 0; d < nd; ++d) {
      const double s = u[static_cast<size_t>(p * rank) + g.sample_entry[d]];
      start[d] = x.dtype() == kFloat32 ? intervals<float>(static_cast<float>(s), in[d], out[d], g.kernel[d])
                                       : intervals<double>(s, in[d], out[d], g.kernel[d]);
    }
    const double* src = xv.data() + p * plane;
    std::vector<int64_t> o(nd, 0);  // the output position, row-major
    for (int64_t j = 0; j < outs; ++j) {
      int64_t first = 0;
      for (size_t d = 0; d < nd; ++d) first += start[d][static_cast<size_t>(o[d])] * stride[d];
      int64_t best = first;
      double best_v = -INFINITY;
      std::vector<int64_t> w(nd, 0);  // the offset inside the window, row-major
      for (bool more = true; more;) {
        int64_t at = first;
        for (size_t d = 0; d < nd; ++d) at += w[d] * stride[d];
        const double v = src[at];
        if (v > best_v || std::isnan(v)) {
          best_v = v;
          best = at;
        }
        more = false;
        for (size_t d = nd; d-- > 0;) {
          if (++w[d] < g.kernel[d]) {
            more = true;
            break;
          }
          w[d] = 0;
        }
      }
      idx[static_cast<size_t>(p * outs + j)] = best;
      for (size_t d = nd; d-- > 0;) {
        if (++o[d] < out[d]) break;
        o[d] = 0;
      }
    }
  }
  const Tensor index = tensor(idx, {n, c, outs}, TensorOptions(kInt64)).to(x.device());
  DimVector shape{n, c};
  for (int64_t s : out) shape.push_back(s);
  Tensor y = x.flatten(2).gather(2, index).reshape(shape);
  Tensor i = index.reshape(shape);
  if (!batched) {
    y = y.squeeze(0);
    i = i.squeeze(0);
  }
  return {y, i};
}
}  // namespace

std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool2dFuncOptions& o) {
  Geometry g{"fractional_max_pool2d",
             {o.kernel_size().h, o.kernel_size().w},
             std::nullopt,
             std::nullopt,
             o._random_samples(),
             {1, 0}};
  if (o.output_size()) g.out = std::vector<int64_t>{o.output_size()->h, o.output_size()->w};
  if (o.output_ratio()) g.ratio = std::vector<double>{o.output_ratio()->h, o.output_ratio()->w};
  return pool(g, input);
}

Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& options) {
  return std::get<0>(fractional_max_pool2d_with_indices(input, options));
}

std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool3dFuncOptions& o) {
  const Int3 k = o.kernel_size();
  Geometry g{"fractional_max_pool3d", {k.d, k.h, k.w}, std::nullopt, std::nullopt, o._random_samples(), {0, 1, 2}};
  if (o.output_size()) g.out = std::vector<int64_t>{o.output_size()->d, o.output_size()->h, o.output_size()->w};
  if (o.output_ratio()) g.ratio = std::vector<double>{o.output_ratio()->d, o.output_ratio()->h, o.output_ratio()->w};
  return pool(g, input);
}

Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& options) {
  return std::get<0>(fractional_max_pool3d_with_indices(input, options));
}

}  // namespace wick::nn::functional
