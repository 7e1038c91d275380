// Differentiable reductions, softmax and log_softmax.
#include <algorithm>

#include "op_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {
// The gradient of a reduction, brought back to the input's rank (size 1 in reduced dims).
Tensor unsqueeze_reduced(const Tensor& g, const DimVector& in_shape, const std::vector<int64_t>& dims, bool keepdim) {
  if (keepdim || in_shape.empty()) return g;
  DimVector ks(in_shape);
  if (dims.empty()) {
    for (auto& s : ks) s = 1;
  } else {
    for (int64_t d : dims) ks[native::wrap_dim(d, static_cast<int64_t>(in_shape.size()), "sum")] = 1;
  }
  return reshape(g, ks);
}
int64_t reduced_count(const DimVector& shape, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  if (dims.empty()) {
    for (auto s : shape) n *= s;
  } else if (!shape.empty()) {  // a 0-dim input reduced over dim 0 or -1 counts its one element
    for (int64_t d : dims) n *= shape[native::wrap_dim(d, static_cast<int64_t>(shape.size()), "mean")];
  }
  return n;
}
}  // namespace

Tensor sum(const Tensor& a, IntArrayRef dims, bool keepdim) {
  Tensor out = native::sum(a, dims, keepdim);
  if (needs_grad({&a})) {
    DimVector shape(a.sizes());
    std::vector<int64_t> d = dims.vec();
    record_function("SumBackward", {a}, {out}, [=](const VL& g, const VL&) -> VL {
      return {expand(unsqueeze_reduced(g[0], shape, d, keepdim), shape)};
    });
  }
  return out;
}
Tensor sum(const Tensor& a) { return sum(a, {}, false); }

Tensor mean(const Tensor& a, IntArrayRef dims, bool keepdim) {
  Tensor out = native::mean(a, dims, keepdim);
  if (needs_grad({&a})) {
    DimVector shape(a.sizes());
    std::vector<int64_t> d = dims.vec();
    const double n = static_cast<double>(reduced_count(shape, d));
    record_function("MeanBackward", {a}, {out}, [=](const VL& g, const VL&) -> VL {
      Tensor gs = div(g[0], scalar_tensor(n, g[0].options()));
      return {expand(unsqueeze_reduced(gs, shape, d, keepdim), shape)};
    });
  }
  return out;
}
Tensor mean(const Tensor& a) { return mean(a, {}, false); }

namespace {
// amax/amin: the gradient is shared evenly among the positions that attain the extremum.
Tensor extreme_reduce(ReduceOp op, const Tensor& a, IntArrayRef dims, bool keepdim, const char* name) {
  Tensor out = native::reduce(op, a, dims, keepdim);
  if (needs_grad({&a})) {
    DimVector shape(a.sizes());
    std::vector<int64_t> d = dims.vec();
    record_function(name, {a}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      Tensor o = unsqueeze_reduced(s[1], shape, d, keepdim);
                      Tensor mask = native::to(eq(s[0], o), s[0].device(), s[0].dtype());
                      Tensor count = native::sum(mask, d, true);
                      Tensor gk = unsqueeze_reduced(g[0], shape, d, keepdim);
                      return {div(mul(gk, mask), count)};
                    },
                    {a}, {out});
  }
  return out;
}
}  // namespace

Tensor amax(const Tensor& a, IntArrayRef dims, bool keepdim) {
  return extreme_reduce(ReduceOp::Max, a, dims, keepdim, "AmaxBackward");
}
Tensor amin(const Tensor& a, IntArrayRef dims, bool keepdim) {
  return extreme_reduce(ReduceOp::Min, a, dims, keepdim, "AminBackward");
}

namespace {
std::tuple<Tensor, Tensor> max_min(const Tensor& a, int64_t dim, bool keepdim, bool is_max) {
  Tensor idx = is_max ? native::argmax(a, dim, true) : native::argmin(a, dim, true);
  Tensor values;
  if (a.dim() == 0) {
    values = native::clone(a);
  } else {
    values = native::gather(a, native::wrap_dim(dim, a.dim(), "max"), idx);
  }
  if (!keepdim && a.dim() > 0) {
    const int64_t d = native::wrap_dim(dim, a.dim(), "max");
    values = native::squeeze(values, d);
    idx = native::squeeze(idx, d);
  }
  if (needs_grad({&a})) {
    DimVector shape(a.sizes());
    record_function(is_max ? "MaxBackward" : "MinBackward", {a}, {values},
                    [=](const VL& g, const VL& s) -> VL {
                      if (shape.empty()) return {g[0]};
                      const int64_t d = native::wrap_dim(dim, static_cast<int64_t>(shape.size()), "max");
                      Tensor gi = keepdim ? g[0] : unsqueeze(g[0], d);
                      Tensor ii = keepdim ? s[0] : native::unsqueeze(s[0], d);
                      return {scatter_add(zeros(shape, g[0].options()), d, ii, gi)};
                    },
                    {idx});
  }
  return {values, idx};
}
}  // namespace

std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim) { return max_min(a, dim, keepdim, true); }
std::tuple<Tensor, Tensor> min(const Tensor& a, int64_t dim, bool keepdim) { return max_min(a, dim, keepdim, false); }
Tensor argmax(const Tensor& a, int64_t dim, bool keepdim) { return native::argmax(a, dim, keepdim); }
Tensor argmin(const Tensor& a, int64_t dim, bool keepdim) { return native::argmin(a, dim, keepdim); }

Tensor var(const Tensor& a, IntArrayRef dims, bool unbiased, bool keepdim) {
  return var(a, dims, std::optional<int64_t>(unbiased ? 1 : 0), keepdim);
}
Tensor var(const Tensor& a) { return var(a, {}, true, false); }

Tensor var(const Tensor& a, IntArrayRef dims, std::optional<int64_t> correction, bool keepdim) {
  const int64_t corr = correction.value_or(1);
  Tensor out = native::var_correction(a, dims, corr, keepdim);
  if (needs_grad({&a})) {
    DimVector shape(a.sizes());
    std::vector<int64_t> d = dims.vec();
    const double n = std::max(0.0, static_cast<double>(reduced_count(shape, d)) - static_cast<double>(corr));
    record_function("VarBackward", {a}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      const Tensor& x = s[0];
                      Tensor centered = sub(x, mean(x, d, true));
                      Tensor gk = unsqueeze_reduced(g[0], shape, d, keepdim);
                      return {mul(gk, mul(centered, scalar_tensor(2.0 / n, x.options())))};
                    },
                    {a});
  }
  return out;
}

Tensor logsumexp(const Tensor& a, IntArrayRef dims, bool keepdim) {
  Tensor out = native::logsumexp(a, dims, keepdim);
  if (needs_grad({&a})) {
    DimVector shape(a.sizes());
    std::vector<int64_t> d = dims.vec();
    record_function("LogsumexpBackward", {a}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      Tensor o = unsqueeze_reduced(s[1], shape, d, keepdim);
                      return {mul(unsqueeze_reduced(g[0], shape, d, keepdim), exp(sub(s[0], o)))};
                    },
                    {a}, {out});
  }
  return out;
}

Tensor softmax(const Tensor& a, int64_t dim) {
  Tensor out = native::softmax(a, dim);
  if (needs_grad({&a})) {
    record_function("SoftmaxBackward", {a}, {out},
                    [dim](const VL& g, const VL& s) -> VL {
                      const Tensor& y = s[0];
                      // Without create_graph the fused kernel; with it the differentiable formula.
                      if (!GradMode::is_enabled()) return {native::softmax_backward(g[0], y, dim)};
                      return {mul(y, sub(g[0], sum(mul(g[0], y), {dim}, true)))};
                    },
                    {}, {out});
  }
  return out;
}

Tensor log_softmax(const Tensor& a, int64_t dim) {
  Tensor out = native::log_softmax(a, dim);
  if (needs_grad({&a})) {
    record_function("LogSoftmaxBackward", {a}, {out},
                    [dim](const VL& g, const VL& s) -> VL {
                      // Without create_graph the fused kernel; with it the differentiable formula.
                      if (!GradMode::is_enabled()) return {native::log_softmax_backward(g[0], s[0], dim)};
                      return {sub(g[0], mul(exp(s[0]), sum(g[0], {dim}, true)))};
                    },
                    {}, {out});
  }
  return out;
}

}  // namespace wick
