// The F:: overloads that take LibTorch's functional options for pooling, padding, pixel shuffle
// and fold / unfold (wick/nn/functional_options_pool.h): each reads the options' fields and calls
// the positional function of the same name, which holds the math and the other checks.
#include "wick/nn/functional_options_pool.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <tuple>

#include "wick/core/error.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {

std::string size_text(int64_t v) { return fmt::format("{}", v); }
std::string size_text(Int2 v) { return fmt::format("({}, {})", v.h, v.w); }
std::string size_text(Int3 v) { return fmt::format("({}, {}, {})", v.d, v.h, v.w); }
bool has_zero(int64_t v) { return v == 0; }
bool has_zero(Int2 v) { return v.h == 0 || v.w == 0; }
bool has_zero(Int3 v) { return v.d == 0 || v.h == 0 || v.w == 0; }

// The options default the stride to kernel_size, so a 0 was written by hand: refused, as LibTorch's
// functions refuse it, where the positional functions would read it as "stride = kernel_size".
template <class Size>
void check_stride(const char* op, Size stride) {
  WICK_CHECK(!has_zero(stride),
             "{}: stride should not be zero, got {}; the options' stride defaults to kernel_size, leave it unset "
             "for that",
             op, size_text(stride));
}

}  // namespace

// ---- pooling ----

Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& o) {
  check_stride("avg_pool1d", o.stride());
  return avg_pool1d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                    o.divisor_override());
}

Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  check_stride("avg_pool2d", o.stride());
  return avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                    o.divisor_override());
}

Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& o) {
  check_stride("avg_pool3d", o.stride());
  return avg_pool3d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                    o.divisor_override());
}

Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& o) {
  check_stride("max_pool1d", o.stride());
  return max_pool1d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& o) {
  check_stride("max_pool1d_with_indices", o.stride());
  return max_pool1d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) {
  check_stride("max_pool2d", o.stride());
  return max_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& o) {
  check_stride("max_pool2d_with_indices", o.stride());
  return max_pool2d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& o) {
  check_stride("max_pool3d", o.stride());
  return max_pool3d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const MaxPool3dFuncOptions& o) {
  check_stride("max_pool3d_with_indices", o.stride());
  return max_pool3d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& o) {
  return adaptive_max_pool1d(input, o.output_size());
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool1dFuncOptions& o) {
  return adaptive_max_pool1d_with_indices(input, o.output_size());
}

Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& o) {
  return adaptive_max_pool2d(input, o.output_size());
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& o) {
  return adaptive_max_pool2d_with_indices(input, o.output_size());
}

Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& o) {
  return adaptive_max_pool3d(input, o.output_size());
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& o) {
  return adaptive_max_pool3d_with_indices(input, o.output_size());
}

Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& o) {
  return adaptive_avg_pool1d(input, o.output_size());
}

Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& o) {
  return adaptive_avg_pool2d(input, o.output_size());
}

Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& o) {
  return adaptive_avg_pool3d(input, o.output_size());
}

Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& o) {
  check_stride("max_unpool1d", o.stride());
  return max_unpool1d(input, indices, o.kernel_size(), o.stride(), o.padding(), o.output_size());
}

Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& o) {
  check_stride("max_unpool2d", o.stride());
  return max_unpool2d(input, indices, o.kernel_size(), o.stride(), o.padding(), o.output_size());
}

Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& o) {
  check_stride("max_unpool3d", o.stride());
  return max_unpool3d(input, indices, o.kernel_size(), o.stride(), o.padding(), o.output_size());
}

Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& o) {
  check_stride("lp_pool1d", o.stride());
  return lp_pool1d(input, o.norm_type(), o.kernel_size(), o.stride(), o.ceil_mode());
}

Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& o) {
  check_stride("lp_pool2d", o.stride());
  return lp_pool2d(input, o.norm_type(), o.kernel_size(), o.stride(), o.ceil_mode());
}

// ---- padding, pixel shuffle, fold ----

// LibTorch passes a value of 0 on as "no value" (so reflect, replicate and circular take the
// default), and any other value as given, which those modes refuse.
Tensor pad(const Tensor& input, const PadFuncOptions& o) {
  const std::optional<double> value = o.value() != 0.0 ? std::optional<double>(o.value()) : std::nullopt;
  return pad(input, o.pad(), o.mode(), value);
}

Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& o) {
  return pixel_shuffle(input, o.upscale_factor());
}

Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& o) {
  return pixel_unshuffle(input, o.downscale_factor());
}

Tensor fold(const Tensor& input, const FoldFuncOptions& o) {
  return fold(input, o.output_size(), o.kernel_size(), o.dilation(), o.padding(), o.stride());
}

Tensor unfold(const Tensor& input, const UnfoldFuncOptions& o) {
  return unfold(input, o.kernel_size(), o.dilation(), o.padding(), o.stride());
}

}  // namespace wick::nn::functional
