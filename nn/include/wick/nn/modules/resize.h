#pragma once
// Upsample, PixelShuffle, PixelUnshuffle, Unflatten and the padding layers (ZeroPad2d, ConstantPad1d/2d/3d,
// ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d), torch.nn's, on F::interpolate, F::pixel_shuffle,
// F::pixel_unshuffle and F::pad. None has parameters or buffers.
#include <optional>
#include <string>
#include <vector>

#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/pixel_shuffle_options.h"  // PixelShuffleOptions, PixelUnshuffleOptions

namespace wick::nn {

using functional::InterpolateMode;

/// Upsample's options, as LibTorch: `UpsampleOptions().scale_factor(std::vector<double>{2})`.
struct UpsampleOptions {
  WICK_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  WICK_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  WICK_ARG(InterpolateMode, mode) = functional::kNearest;
  WICK_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

/// F::interpolate with fixed options; prints as PyTorch's "Upsample(scale_factor=2.0,
/// mode=nearest)" or "Upsample(size=(3, 4), mode=bilinear)". The options are checked at each
/// forward, as PyTorch.
class UpsampleImpl : public Cloneable<UpsampleImpl> {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options = {});
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const UpsampleOptions& options() const { return options_; }

 private:
  UpsampleOptions options_;
};
WICK_MODULE(Upsample);

/// F::pixel_shuffle; prints as "PixelShuffle(upscale_factor=2)".
class PixelShuffleImpl : public Cloneable<PixelShuffleImpl> {
 public:
  explicit PixelShuffleImpl(const PixelShuffleOptions& options) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const PixelShuffleOptions& options() const { return options_; }

 private:
  PixelShuffleOptions options_;
};
WICK_MODULE(PixelShuffle);

/// F::pixel_unshuffle; prints as "PixelUnshuffle(downscale_factor=2)".
class PixelUnshuffleImpl : public Cloneable<PixelUnshuffleImpl> {
 public:
  explicit PixelUnshuffleImpl(const PixelUnshuffleOptions& options) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const PixelUnshuffleOptions& options() const { return options_; }

 private:
  PixelUnshuffleOptions options_;
};
WICK_MODULE(PixelUnshuffle);

/// Unflatten's options, as LibTorch: `UnflattenOptions(1, {2, 3})` (one size may be -1).
struct UnflattenOptions {
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  WICK_ARG(int64_t, dim);
  WICK_ARG(std::vector<int64_t>, sizes);
};

/// Splits dim `dim` into `sizes` (a reshape), Flatten's inverse; prints as PyTorch's
/// "Unflatten(dim=1, unflattened_size=(2, 3))". ValueError for a dim out of range or sizes whose
/// product is not the dim's size (at forward), and for no sizes or two -1 (when built).
class UnflattenImpl : public Cloneable<UnflattenImpl> {
 public:
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes) : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  explicit UnflattenImpl(const UnflattenOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const UnflattenOptions& options() const { return options_; }

 private:
  UnflattenOptions options_;
};
WICK_MODULE(Unflatten);

/// A D-d padding layer's pads, as LibTorch's ReflectionPad2dOptions etc.: one int for every side
/// or 2 D ints (left, right, top, bottom, front, back); the layer's constructor checks the count
/// (ValueError).
template <int D>
struct PadOptions {
  /* implicit */ PadOptions(int64_t padding) : padding_(2 * D, padding) {}                   // NOLINT
  /* implicit */ PadOptions(std::vector<int64_t> padding) : padding_(std::move(padding)) {}  // NOLINT
  WICK_ARG(std::vector<int64_t>, padding);
};
/// LibTorch's template names of the same options: ReflectionPadOptions<2> is ReflectionPad2dOptions.
template <int D>
using ReflectionPadOptions = PadOptions<D>;
template <int D>
using ReplicationPadOptions = PadOptions<D>;
/// ConstantPadNd's options: the pads and the fill value, as LibTorch's ConstantPad2dOptions.
template <int D>
struct ConstantPadOptions {
  ConstantPadOptions(int64_t padding, double value) : padding_(2 * D, padding), value_(value) {}
  ConstantPadOptions(std::vector<int64_t> padding, double value) : padding_(std::move(padding)), value_(value) {}
  WICK_ARG(std::vector<int64_t>, padding);
  WICK_ARG(double, value);
};

/// The shared body of the padding layers: F::pad(input, padding, mode, value).
class PadLayer {
 public:
  PadLayer(const char* name, int dims, std::vector<int64_t> padding, PadMode mode, double value);
  /// F::pad's result; its errors keep their class and start with the layer's print string.
  Tensor pad(const Tensor& input) const;
  /// "(1, 2, 3, 4)" (ZeroPad2d, ReflectionPad, ReplicationPad) or "padding=(1, 1), value=3.5"
  /// (ConstantPad; PyTorch prints the value as given, wick as a float).
  std::string repr() const;
  const std::vector<int64_t>& padding() const { return padding_; }

 private:
  const char* name_;  // "ReflectionPad3d", for errors
  std::vector<int64_t> padding_;
  PadMode mode_;
  double value_;
  bool with_value_;  // ConstantPad prints its value, ZeroPad2d does not
};

// LibTorch's constructors from the pads alone (ReflectionPad2dImpl({1, 1, 2, 0})) or, for
// ConstantPad, from the pads and the value (ConstantPad2d(1, 3.5), ConstantPad1dImpl({3, 1}, 3.5)).
#define WICK_PAD_CTORS(Name) \
  explicit Name##Impl(std::vector<int64_t> padding) : Name##Impl(Name##Options(std::move(padding))) {}
#define WICK_PAD_VALUE_CTORS(Name)                                                         \
  Name##Impl(int64_t padding, double value) : Name##Impl(Name##Options(padding, value)) {} \
  Name##Impl(std::vector<int64_t> padding, double value) : Name##Impl(Name##Options(std::move(padding), value)) {}

#define WICK_PAD_LAYER(Name, D, OPT, MODE, VALUE, CTORS)                                                       \
  using Name##Options = OPT;                                                                                   \
  /** F::pad in mode MODE over the last D dims; prints as PyTorch's. */                                        \
  class Name##Impl : public Cloneable<Name##Impl>, public PadLayer {                                           \
   public:                                                                                                     \
    explicit Name##Impl(const Name##Options& o) : PadLayer(#Name, D, o.padding(), MODE, VALUE), options_(o) {} \
    CTORS(Name)                                                                                                \
    Tensor forward(const Tensor& input) { return pad(input); }                                                 \
    std::string extra_repr() const override { return repr(); }                                                 \
    const Name##Options& options() const { return options_; }                                                  \
                                                                                                               \
   private:                                                                                                    \
    Name##Options options_;                                                                                    \
  };                                                                                                           \
  WICK_MODULE(Name)

WICK_PAD_LAYER(ZeroPad2d, 2, PadOptions<2>, kConstant, 0.0, WICK_PAD_CTORS);
WICK_PAD_LAYER(ConstantPad1d, 1, ConstantPadOptions<1>, kConstant, o.value(), WICK_PAD_VALUE_CTORS);
WICK_PAD_LAYER(ConstantPad2d, 2, ConstantPadOptions<2>, kConstant, o.value(), WICK_PAD_VALUE_CTORS);
WICK_PAD_LAYER(ConstantPad3d, 3, ConstantPadOptions<3>, kConstant, o.value(), WICK_PAD_VALUE_CTORS);
WICK_PAD_LAYER(ReflectionPad1d, 1, PadOptions<1>, kReflect, 0.0, WICK_PAD_CTORS);
WICK_PAD_LAYER(ReflectionPad2d, 2, PadOptions<2>, kReflect, 0.0, WICK_PAD_CTORS);
WICK_PAD_LAYER(ReplicationPad1d, 1, PadOptions<1>, kReplicate, 0.0, WICK_PAD_CTORS);
WICK_PAD_LAYER(ReplicationPad2d, 2, PadOptions<2>, kReplicate, 0.0, WICK_PAD_CTORS);
WICK_PAD_LAYER(ReflectionPad3d, 3, PadOptions<3>, kReflect, 0.0, WICK_PAD_CTORS);
WICK_PAD_LAYER(ReplicationPad3d, 3, PadOptions<3>, kReplicate, 0.0, WICK_PAD_CTORS);
#undef WICK_PAD_LAYER
#undef WICK_PAD_CTORS
#undef WICK_PAD_VALUE_CTORS

}  // namespace wick::nn
