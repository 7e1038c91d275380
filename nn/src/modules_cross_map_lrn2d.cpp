// CrossMapLRN2d: a custom autograd function with PyTorch 1.13's legacy forward and backward.
//
// Note [CrossMapLRN2d]
// PyTorch 1.13's CrossMapLRN2d (torch/nn/_functions.py, which LibTorch ports) computes the
// window sums of input^2 with a running sum over the channels, and its backward with another,
// and the two loops' windows are not those of F::local_response_norm nor each other's adjoint.
// With P = floor((size - 1) / 2) + 1 and Q = floor(size - (size - 1) / 2) (real quotients; PyTorch
// takes int() of them), channel c of C normalizes by
//   scale[c] = k + alpha / size * sum of input[j]^2 over j in [max(0, c - P + 1), min(C - 1, c + P - 1)],
//              plus input[0]^2 when c >= P (the running sum never subtracts channel 0),
//   out[c]   = input[c] * scale[c]^-beta,
// and the backward PyTorch defines is
//   grad_in[c] = scale[c]^-beta * g[c] - (2 * alpha * beta / size) * input[c] * sum over j in
//                [max(0, c - Q), min(C - 1, c + size - 1 - Q)] of g[j] * out[j] / scale[j].
// wick keeps both as PyTorch 1.13 has them, so results and gradients match torch.nn.CrossMapLRN2d
// (a gradcheck of this layer fails by design; F::local_response_norm is the exact, symmetric
// one). Each window is a 0/1 [C, C] matrix applied over the channels with matmul, so the op
// runs on every device. The backward is not differentiable again (PyTorch's is not either). For
// size 1 PyTorch 1.13's backward raises (it narrows past its padded buffer): wick's forward
// matches, and its backward raises a ValueError saying so.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "repr.h"
#include "shape_text.h"
#include "wick/autograd/custom_function.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/nn/modules/cross_map_lrn2d.h"

namespace wick::nn {

namespace {
// A [C, C] 0/1 matrix whose row c selects channels [c + lo, c + hi] (clipped), plus channel 0 for
// the rows c >= first_with_zero (C means none).
Tensor window(int64_t c_count, int64_t lo, int64_t hi, int64_t first_with_zero, const Tensor& like) {
  std::vector<double> m(static_cast<size_t>(c_count * c_count), 0.0);
  for (int64_t c = 0; c < c_count; ++c) {
    for (int64_t j = std::max<int64_t>(0, c + lo); j <= std::min(c_count - 1, c + hi); ++j)
      m[static_cast<size_t>(c * c_count + j)] = 1.0;
    if (c >= first_with_zero) m[static_cast<size_t>(c * c_count)] = 1.0;
  }
  return tensor(m, {c_count, c_count}, TensorOptions(kFloat64)).to(like.device(), like.dtype());
}

// sum_j w[c, j] * t[n, j, h, w] for t [N, C, H, W].
Tensor over_channels(const Tensor& w, const Tensor& t) {
  return matmul(t.permute({0, 2, 3, 1}), w.transpose(0, 1)).permute({0, 3, 1, 2});
}

struct CrossMapLRN2dFunction : autograd::Function<CrossMapLRN2dFunction> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& input, int64_t size, double alpha, double beta,
                        double k) {
    const int64_t c = input.size(1);
    const int64_t pre = (size - 1) / 2 + 1;
    const Tensor scale = over_channels(window(c, -pre + 1, pre - 1, pre, input), input * input) * (alpha / size) + k;
    const Tensor out = pow(scale, -beta) * input;
    ctx->save_for_backward({input, out, scale});
    ctx->saved_data["size"] = size;
    ctx->saved_data["alpha"] = alpha;
    ctx->saved_data["beta"] = beta;
    return out;
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list g) {
    const auto saved = ctx->get_saved_variables();
    const Tensor &input = saved[0], &out = saved[1], &scale = saved[2];
    const int64_t size = ctx->saved_data["size"].toInt();
    WICK_CHECK(size >= 2,
               "CrossMapLRN2d: the backward of size 1 is not defined (PyTorch 1.13's fails on it); use "
               "F::local_response_norm(input, 1, alpha, beta, k), whose window is the channel itself");
    const double alpha = ctx->saved_data["alpha"].toDouble(), beta = ctx->saved_data["beta"].toDouble();
    const int64_t q = size - size / 2;  // floor(size - (size - 1) / 2)
    const int64_t c = input.size(1);
    NoGradGuard no_grad;
    const Tensor accum = over_channels(window(c, -q, size - 1 - q, c, input), g[0] * out / scale);
    const Tensor grad_in = pow(scale, -beta) * g[0] - input * accum * (2.0 * alpha * beta / size);
    return {grad_in, Tensor(), Tensor(), Tensor(), Tensor()};
  }
};
}  // namespace

CrossMapLRN2dImpl::CrossMapLRN2dImpl(const CrossMapLRN2dOptions& options) : options_(options) {
  WICK_CHECK(options.size() >= 1, "CrossMapLRN2d: size must be >= 1, got {}", options.size());
}

Tensor CrossMapLRN2dImpl::forward(const Tensor& input) {
  WICK_CHECK(input.defined() && input.dim() == 4,
             "CrossMapLRN2d: expects a 4-d [N, C, H, W] input, got {}; unsqueeze a batch dim for one image",
             detail::shape_str(input));
  WICK_CHECK_TYPE(input.is_floating_point(), "CrossMapLRN2d: input must be float32 or float64, got {}", input.dtype());
  return CrossMapLRN2dFunction::apply(input, options_.size(), options_.alpha(), options_.beta(), options_.k());
}

std::string CrossMapLRN2dImpl::extra_repr() const {
  // PyTorch prints k as given; its default is the int 1, so an integral k prints without ".0".
  const double k = options_.k();
  const std::string ks =
      std::trunc(k) == k && std::abs(k) < 1e15 ? fmt::format("{}", static_cast<int64_t>(k)) : detail::py_float(k);
  return fmt::format("{}, alpha={}, beta={}, k={}", options_.size(), detail::py_float(options_.alpha()),
                     detail::py_float(options_.beta()), ks);
}

}  // namespace wick::nn
