#pragma once
// Dropout (torch.nn.Dropout).
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// Dropout's options, as LibTorch: `DropoutOptions().p(0.2)` (or `Dropout(0.2)`).
struct DropoutOptions {
  /* implicit */ DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  /// The probability of zeroing an element.
  WICK_ARG(double, p);
};

/// F::dropout(input, p, is_training()): zeroes elements with probability p in training mode
/// (seeded by wick::manual_seed), the identity in eval mode.
class DropoutImpl : public Cloneable<DropoutImpl> {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {});
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  double p() const { return options_.p(); }
  const DropoutOptions& options() const { return options_; }

 private:
  DropoutOptions options_;
};
WICK_MODULE(Dropout);

}  // namespace wick::nn
