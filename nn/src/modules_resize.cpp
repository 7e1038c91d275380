// Upsample, PixelShuffle, PixelUnshuffle and the padding layers: the layers around F::interpolate,
// F::pixel_shuffle, F::pixel_unshuffle and F::pad.
#include <fmt/format.h>

#include "repr.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/resize.h"

namespace wick::nn {

namespace {
// Python's repr of a tuple of ints or floats ("(3, 4)"), or of the one value when there is one.
template <typename T, typename Fmt>
std::string py_values(const std::vector<T>& v, Fmt fmt1) {
  std::vector<std::string> s;
  for (const T& x : v) s.push_back(fmt1(x));
  return v.size() == 1 ? s[0] : fmt::format("({})", fmt::join(s, ", "));
}
}  // namespace

UpsampleImpl::UpsampleImpl(const UpsampleOptions& options) : options_(options) {}

Tensor UpsampleImpl::forward(const Tensor& input) {
  const auto& o = options_;
  return F::interpolate(input, F::InterpolateFuncOptions()
                                   .size(o.size())
                                   .scale_factor(o.scale_factor())
                                   .mode(o.mode())
                                   .align_corners(o.align_corners()));
}

// PyTorch prints the mode without quotes and the scale factor as floats.
std::string UpsampleImpl::extra_repr() const {
  const auto& o = options_;
  const std::string info =
      o.scale_factor() ? "scale_factor=" + py_values(*o.scale_factor(), [](double x) { return detail::py_float(x); })
      : o.size()       ? "size=" + py_values(*o.size(), [](int64_t x) { return std::to_string(x); })
                       : std::string("size=None");
  return fmt::format("{}, mode={}", info, F::interpolate_mode_name(o.mode()));
}

Tensor PixelShuffleImpl::forward(const Tensor& input) { return F::pixel_shuffle(input, options_.upscale_factor()); }
std::string PixelShuffleImpl::extra_repr() const { return fmt::format("upscale_factor={}", options_.upscale_factor()); }
Tensor PixelUnshuffleImpl::forward(const Tensor& input) {
  return F::pixel_unshuffle(input, options_.downscale_factor());
}
std::string PixelUnshuffleImpl::extra_repr() const {
  return fmt::format("downscale_factor={}", options_.downscale_factor());
}

PadLayer::PadLayer(const char* name, int dims, std::vector<int64_t> padding, PadMode mode, double value)
    : padding_(std::move(padding)),
      mode_(mode),
      value_(value),
      with_value_(std::string(name).starts_with("ConstantPad")) {
  WICK_CHECK(padding_.size() == static_cast<size_t>(2 * dims),
             "{}: padding takes one int or {} ints (before and after for each of the last {} dims), got {}", name,
             2 * dims, dims, padding_.size());
}

Tensor PadLayer::pad(const Tensor& input) const {
  return mode_ == kConstant ? F::pad(input, padding_, value_) : F::pad(input, padding_, mode_);
}

std::string PadLayer::repr() const {
  const std::string pads = fmt::format("({})", fmt::join(padding_, ", "));
  if (with_value_) return fmt::format("padding={}, value={}", pads, detail::py_float(value_));
  return pads;
}

}  // namespace wick::nn
