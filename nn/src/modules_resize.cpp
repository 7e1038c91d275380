// Upsample, PixelShuffle, PixelUnshuffle and the padding layers: the layers around F::interpolate,
// F::pixel_shuffle, F::pixel_unshuffle and F::pad.
#include <fmt/format.h>

#include "repr.h"
#include "shape_text.h"
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

UnflattenImpl::UnflattenImpl(const UnflattenOptions& options) : options_(options) {
  const auto& s = options.sizes();
  WICK_CHECK(!s.empty(), "Unflatten: unflattened_size must not be empty");
  int64_t inferred = 0;
  for (int64_t v : s) {
    WICK_CHECK(v >= -1, "Unflatten: sizes must be >= 0 or -1 (inferred), got ({})", fmt::join(s, ", "));
    inferred += v == -1;
  }
  WICK_CHECK(inferred <= 1, "Unflatten: at most one size may be -1, got ({})", fmt::join(s, ", "));
}

Tensor UnflattenImpl::forward(const Tensor& input) {
  WICK_CHECK(input.defined(), "Unflatten: input is undefined");
  const int64_t r = input.dim();
  int64_t dim = options_.dim();
  WICK_CHECK(dim >= -r && dim < r, "Unflatten: dim {} is out of range for the {}-d input {}", dim, r,
             detail::shape_str(input));
  if (dim < 0) dim += r;
  const auto& s = options_.sizes();
  int64_t known = 1;
  bool infer = false;
  for (int64_t v : s) v == -1 ? (void)(infer = true) : (void)(known *= v);
  const int64_t n = input.size(dim);
  WICK_CHECK(infer ? (known > 0 && n % known == 0) : known == n,
             "Unflatten: sizes ({}) do not multiply to the size {} of dim {} of input {}", fmt::join(s, ", "), n, dim,
             detail::shape_str(input));
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().begin() + dim);
  shape.insert(shape.end(), s.begin(), s.end());
  shape.insert(shape.end(), input.sizes().begin() + dim + 1, input.sizes().end());
  return reshape(input, shape);
}

std::string UnflattenImpl::extra_repr() const {
  const auto& s = options_.sizes();
  return fmt::format("dim={}, unflattened_size=({}{})", options_.dim(), fmt::join(s, ", "), s.size() == 1 ? "," : "");
}

PadLayer::PadLayer(const char* name, int dims, std::vector<int64_t> padding, PadMode mode, double value)
    : name_(name),
      padding_(std::move(padding)),
      mode_(mode),
      value_(value),
      with_value_(std::string(name).starts_with("ConstantPad")) {
  WICK_CHECK(padding_.size() == static_cast<size_t>(2 * dims),
             "{}: padding takes one int or {} ints (before and after for each of the last {} dims), got {}", name,
             2 * dims, dims, padding_.size());
}

Tensor PadLayer::pad(const Tensor& input) const {
  try {
    return mode_ == kConstant ? F::pad(input, padding_, value_) : F::pad(input, padding_, mode_);
  } catch (const Error& e) {  // same class, the layer named: "ReflectionPad3d((1, 1, 1, 1, 1, 1)): pad: ..."
    rethrow_with_context(e, fmt::format("{}({}): ", name_, repr()));
  }
}

std::string PadLayer::repr() const {
  const std::string pads = fmt::format("({})", fmt::join(padding_, ", "));
  if (with_value_) return fmt::format("padding={}, value={}", pads, detail::py_float(value_));
  return pads;
}

}  // namespace wick::nn
