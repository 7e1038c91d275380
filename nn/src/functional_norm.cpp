// F::batch_norm, composed of differentiable ops, and F::layer_norm: one fused node for contiguous
// inputs (Note [Fused layer_norm]), the composite otherwise.
#include <fmt/format.h>

#include <limits>

#include "norm_parts.h"
#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/record.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/core/stubs.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
using detail::shape_str;

// N * prod(spatial dims) of input [N, C, *]: the values each channel's statistics are taken over.
// Exactly 1 is refused in training, as PyTorch does even without channels. With C = 0 the product
// can pass int64 while the input is empty; it then saturates (it is only compared with 1 before
// an empty input returns).
int64_t values_per_channel(const Tensor& input) {
  int64_t count = 1;
  for (int64_t d = 0; d < input.dim(); ++d) {
    if (d == 1) continue;
    if (mul_overflow(count, input.size(d), &count)) return std::numeric_limits<int64_t>::max();
  }
  return count;
}

// Note [Fused layer_norm] (wick/core/layer_norm_rows.h): one node for a contiguous input whose
// backend has the row kernels; the composite in layer_norm below otherwise.
bool fusable_layer_norm(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  auto same = [&](const Tensor& p) { return !p.defined() || (p.dtype() == input.dtype() && p.is_contiguous()); };
  return input.numel() > 0 && input.is_contiguous() && same(weight) && same(bias) &&
         stubs::layer_norm_rows.find(input.device().type) && stubs::layer_norm_backward_rows.find(input.device().type);
}

// d x, d w, d b of layer_norm over [rows, cols] views on differentiable ops: the create_graph
// backward, and the formula the fused kernel implements.
std::vector<Tensor> layer_norm_grads(const Tensor& g2, const Tensor& x2, const Tensor& w, double eps) {
  Tensor mu = mean(x2, {1}, true);
  Tensor rstd = rsqrt(add(var(x2, {1}, /*unbiased=*/false, true), scalar_tensor(eps, x2.options())));
  Tensor xhat = mul(sub(x2, mu), rstd);
  Tensor gw = w.defined() ? mul(g2, reshape(w, {-1})) : g2;
  Tensor dx = mul(rstd, sub(sub(gw, mean(gw, {1}, true)), mul(xhat, mean(mul(gw, xhat), {1}, true))));
  return {dx, sum(mul(g2, xhat), {0}, false), sum(g2, {0}, false)};
}

Tensor fused_layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                        double eps) {
  int64_t cols = 1;
  for (int64_t s : normalized_shape) cols *= s;
  const int64_t rows = input.numel() / cols;
  const DeviceType type = input.device().type;
  Tensor y = native::empty(input.sizes(), input.dtype(), input.device());
  Tensor mu = native::empty({rows, 1}, input.dtype(), input.device());
  Tensor rstd = native::empty({rows, 1}, input.dtype(), input.device());
  stubs::layer_norm_rows(type, input.dtype(), rows, cols, input.data_ptr(),
                         weight.defined() ? weight.data_ptr() : nullptr, bias.defined() ? bias.data_ptr() : nullptr,
                         eps, y.data_ptr(), mu.data_ptr(), rstd.data_ptr());
  std::vector<Tensor> inputs = {input};
  if (weight.defined()) inputs.push_back(weight);
  if (bias.defined()) inputs.push_back(bias);
  if (autograd::needs_grad(inputs)) {
    const std::vector<int64_t> shape(normalized_shape.begin(), normalized_shape.end());
    const bool has_w = weight.defined(), has_b = bias.defined();
    autograd::record_function(
        "LayerNormBackward", inputs, {y},
        [rows, cols, shape, has_w, has_b, eps](const autograd::variable_list& g, const autograd::variable_list& s) {
          const Tensor& x = s[0];
          const Tensor w = has_w ? s[1] : Tensor();
          const Tensor g2 = reshape(g[0], {rows, cols});
          const Tensor x2 = reshape(x, {rows, cols});
          std::vector<Tensor> d;
          if (GradMode::is_enabled()) {  // create_graph: differentiable in x, w and g
            d = layer_norm_grads(g2, x2, w, eps);
          } else {
            const Tensor gc = native::contiguous(g2);
            const Tensor& m = s[s.size() - 2];
            const Tensor& r = s[s.size() - 1];
            Tensor dx = native::empty({rows, cols}, x.dtype(), x.device());
            stubs::layer_norm_backward_rows(x.device().type, x.dtype(), rows, cols, gc.data_ptr(), x.data_ptr(),
                                            has_w ? w.data_ptr() : nullptr, m.data_ptr(), r.data_ptr(), dx.data_ptr());
            Tensor dw, db;
            if (has_w) {
              const Tensor xhat = native::binary(BinaryOp::Mul, native::binary(BinaryOp::Sub, x2, m), r);
              dw = native::sum(native::binary(BinaryOp::Mul, gc, xhat), {0}, false);
            }
            if (has_b) db = native::sum(gc, {0}, false);
            d = {dx, dw, db};
          }
          autograd::variable_list out = {reshape(d[0], x.sizes())};
          if (has_w) out.push_back(reshape(d[1], shape));
          if (has_b) out.push_back(reshape(d[2], shape));
          return out;
        },
        has_w ? std::vector<Tensor>{input, weight, mu, rstd} : std::vector<Tensor>{input, mu, rstd});
  }
  return y;
}
}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  WICK_CHECK(input.defined() && input.dim() >= 2, "batch_norm: expected input [N, C, *] with at least 2 dims, got {}",
             shape_str(input));
  WICK_CHECK_TYPE(input.is_floating_point(), "batch_norm: input must be float32 or float64, got {}", input.dtype());
  const int64_t C = input.size(1);
  detail::check_norm_param("batch_norm", "weight", weight, {C}, input);
  detail::check_norm_param("batch_norm", "bias", bias, {C}, input);
  detail::check_norm_param("batch_norm", "running_mean", running_mean, {C}, input);
  detail::check_norm_param("batch_norm", "running_var", running_var, {C}, input);
  const std::vector<int64_t> stat_shape = detail::channel_shape(input);  // [C] broadcast over input
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  const int64_t count = values_per_channel(input);

  Tensor mean_c, var_c;  // [C]
  if (training) {
    WICK_CHECK(count != 1, "batch_norm: expected more than 1 value per channel when training, got input {}",
               shape_str(input));
    if (input.numel() == 0) return detail::empty_norm_output(input, weight, bias);
    mean_c = mean(input, dims);
    var_c = var(input, dims, /*unbiased=*/false);
    const double unbias = static_cast<double>(count) / static_cast<double>(count - 1);
    if (running_mean.defined()) detail::update_running_stat(running_mean, mean_c, momentum);
    if (running_var.defined()) detail::update_running_stat(running_var, var_c, momentum, unbias);
  } else {
    WICK_CHECK(running_mean.defined() && running_var.defined(),
               "batch_norm: eval mode (training = false) needs running_mean and running_var");
    mean_c = running_mean;
    var_c = running_var;
  }
  // y = (x - mean) * rsqrt(var + eps) * weight + bias, folded into one scale and one shift.
  Tensor inv_std = rsqrt(add(var_c, scalar_tensor(eps, var_c.options())));
  Tensor scale = weight.defined() ? mul(inv_std, weight) : inv_std;
  Tensor y = mul(sub(input, view(mean_c, stat_shape)), view(scale, stat_shape));
  return bias.defined() ? add(y, view(bias, stat_shape)) : y;
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  WICK_CHECK(input.defined(), "layer_norm: input is undefined");
  WICK_CHECK_TYPE(input.is_floating_point(), "layer_norm: input must be float32 or float64, got {}", input.dtype());
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool ok = k >= 1 && input.dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i)
    ok = input.size(input.dim() - k + i) == normalized_shape[static_cast<size_t>(i)];
  WICK_CHECK(ok, "layer_norm: input {} does not end in normalized_shape [{}]", shape_str(input),
             fmt::join(normalized_shape, ", "));
  detail::check_norm_param("layer_norm", "weight", weight, normalized_shape, input);
  detail::check_norm_param("layer_norm", "bias", bias, normalized_shape, input);
  if (fusable_layer_norm(input, weight, bias)) return fused_layer_norm(input, normalized_shape, weight, bias, eps);
  std::vector<int64_t> dims;
  for (int64_t d = input.dim() - k; d < input.dim(); ++d) dims.push_back(d);
  Tensor mu = mean(input, dims, true);
  Tensor v = var(input, dims, /*unbiased=*/false, true);
  Tensor y = mul(sub(input, mu), rsqrt(add(v, scalar_tensor(eps, v.options()))));
  if (weight.defined()) y = mul(y, weight);
  return bias.defined() ? add(y, bias) : y;
}

}  // namespace wick::nn::functional
