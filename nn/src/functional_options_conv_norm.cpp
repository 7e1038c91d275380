// The F:: overloads taking LibTorch's functional options (wick/nn/functional_options_conv_norm.h):
// each unpacks its options into the positional function of the same name, field by field, and
// adds no math of its own (the calls are qualified, so that ADL cannot pick wick::softmax & co.); softmax and
// log_softmax cast the input to the options' dtype first.
#include "wick/nn/functional_options_conv_norm.h"

#include <fmt/format.h>

#include <variant>

#include "wick/core/error.h"

namespace wick::nn::functional {

namespace {
// A convolution through its positional function: sizes, or a named padding.
template <size_t D, class Conv>
Tensor conv_with(const Tensor& input, const Tensor& weight, const ConvFuncOptions<D>& o, Conv conv) {
  if (const PaddingMode* mode = std::get_if<PaddingMode>(&o.padding())) {
    return conv(input, weight, o.bias(), o.stride(), *mode, o.dilation(), o.groups());
  }
  return conv(input, weight, o.bias(), o.stride(), std::get<conv_size_t<D>>(o.padding()), o.dilation(), o.groups());
}

// The input in `dtype` when one is given (a differentiable cast, as torch.softmax's dtype);
// TypeError naming `op` for a dtype that is not floating.
Tensor cast_for(const char* op, const Tensor& input, const std::optional<DType>& dtype) {
  if (!dtype) return input;
  WICK_CHECK_TYPE(is_floating(*dtype),
                  "{}: the options' dtype must be float32 or float64 (the input is cast to it), got {}", op,
                  dtype_name(*dtype));
  return input.defined() ? input.to(*dtype) : input;  // an undefined input: the op's own error
}
}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& options) {
  return conv_with<1>(input, weight, options, [](const Tensor& x, const Tensor& w, const Tensor& b, auto... rest) {
    return functional::conv1d(x, w, b, rest...);
  });
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options) {
  return conv_with<2>(input, weight, options, [](const Tensor& x, const Tensor& w, const Tensor& b, auto... rest) {
    return functional::conv2d(x, w, b, rest...);
  });
}

Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& options) {
  return conv_with<3>(input, weight, options, [](const Tensor& x, const Tensor& w, const Tensor& b, auto... rest) {
    return functional::conv3d(x, w, b, rest...);
  });
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const ConvTranspose1dFuncOptions& options) {
  return functional::conv_transpose1d(input, weight, options.bias(), options.stride(), options.padding(),
                                      options.output_padding(), options.groups(), options.dilation());
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const ConvTranspose2dFuncOptions& options) {
  return functional::conv_transpose2d(input, weight, options.bias(), options.stride(), options.padding(),
                                      options.output_padding(), options.groups(), options.dilation());
}

Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const ConvTranspose3dFuncOptions& options) {
  return functional::conv_transpose3d(input, weight, options.bias(), options.stride(), options.padding(),
                                      options.output_padding(), options.groups(), options.dilation());
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options) {
  WICK_CHECK(options.momentum().has_value(),
             "F::batch_norm: BatchNormFuncOptions().momentum() is unset (std::nullopt); give the factor that "
             "blends the batch statistics into the running ones (0.1 by default; the cumulative average of "
             "BatchNormOptions().momentum(std::nullopt) is the BatchNorm layer's, which counts its batches)");
  return functional::batch_norm(input, running_mean, running_var, options.weight(), options.bias(), options.training(),
                                *options.momentum(), options.eps());
}

Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options) {
  return functional::instance_norm(input, options.running_mean(), options.running_var(), options.weight(),
                                   options.bias(), options.use_input_stats(), options.momentum(), options.eps());
}

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options) {
  return functional::layer_norm(input, options.normalized_shape(), options.weight(), options.bias(), options.eps());
}

Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options) {
  return functional::group_norm(input, options.num_groups(), options.weight(), options.bias(), options.eps());
}

Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options) {
  return functional::local_response_norm(input, options.size(), options.alpha(), options.beta(), options.k());
}

Tensor gelu(const Tensor& input, const GELUFuncOptions& options) {
  return functional::gelu(input, options.approximate());
}

Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options) {
  return functional::softmax(cast_for("F::softmax", input, options.dtype()), options.dim());
}

Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options) {
  return functional::log_softmax(cast_for("F::log_softmax", input, options.dtype()), options.dim());
}

}  // namespace wick::nn::functional
