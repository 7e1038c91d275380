#pragma once
// Dropout, Dropout1d, Dropout2d, Dropout3d (torch.nn's).
#include <string>

#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// The dropout layers' options, as LibTorch: `DropoutOptions().p(0.2).inplace(true)` (or
/// `Dropout(0.2)`); Dropout1dOptions, Dropout2dOptions and Dropout3dOptions are the same struct.
struct DropoutOptions {
  /* implicit */ DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  /// The probability of zeroing an element (Dropout) or a channel (DropoutNd), in [0, 1].
  WICK_ARG(double, p);
  /// Multiply the input itself by the mask (Tensor::mul_) and return it, in training mode.
  WICK_ARG(bool, inplace) = false;
};
using Dropout1dOptions = DropoutOptions;
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;

/// F::dropout(input, p, is_training()): zeroes elements with probability p in training mode
/// (seeded by wick::manual_seed), the identity in eval mode.
class DropoutImpl : public Cloneable<DropoutImpl> {
 public:
  /// ValueError for a p outside [0, 1].
  explicit DropoutImpl(const DropoutOptions& options = {});
  Tensor forward(const Tensor& input);
  /// "p=0.5, inplace=False", as PyTorch.
  std::string extra_repr() const override;
  double p() const { return options_.p(); }
  const DropoutOptions& options() const { return options_; }

 private:
  DropoutOptions options_;
};
WICK_MODULE(Dropout);

/// F::dropout1d in training mode, the identity in eval mode: whole channels of [N, C, L] (or an
/// unbatched [C, L]) zeroed with probability p, the others scaled by 1 / (1 - p).
class Dropout1dImpl : public Cloneable<Dropout1dImpl> {
 public:
  /// ValueError for a p outside [0, 1].
  explicit Dropout1dImpl(const Dropout1dOptions& options = {});
  Tensor forward(const Tensor& input);
  /// "p=0.5, inplace=False", as PyTorch.
  std::string extra_repr() const override;
  double p() const { return options_.p(); }
  const Dropout1dOptions& options() const { return options_; }

 private:
  Dropout1dOptions options_;
};
WICK_MODULE(Dropout1d);

/// F::dropout2d in training mode, the identity in eval mode: whole channels of [N, C, H, W]
/// zeroed with probability p. A 3-d input is refused (ValueError), as F::dropout2d says why.
class Dropout2dImpl : public Cloneable<Dropout2dImpl> {
 public:
  /// ValueError for a p outside [0, 1].
  explicit Dropout2dImpl(const Dropout2dOptions& options = {});
  Tensor forward(const Tensor& input);
  /// "p=0.5, inplace=False", as PyTorch.
  std::string extra_repr() const override;
  double p() const { return options_.p(); }
  const Dropout2dOptions& options() const { return options_; }

 private:
  Dropout2dOptions options_;
};
WICK_MODULE(Dropout2d);

/// F::dropout3d in training mode, the identity in eval mode: whole channels of [N, C, D, H, W]
/// (or an unbatched [C, D, H, W]) zeroed with probability p.
class Dropout3dImpl : public Cloneable<Dropout3dImpl> {
 public:
  /// ValueError for a p outside [0, 1].
  explicit Dropout3dImpl(const Dropout3dOptions& options = {});
  Tensor forward(const Tensor& input);
  /// "p=0.5, inplace=False", as PyTorch.
  std::string extra_repr() const override;
  double p() const { return options_.p(); }
  const Dropout3dOptions& options() const { return options_; }

 private:
  Dropout3dOptions options_;
};
WICK_MODULE(Dropout3d);

}  // namespace wick::nn
