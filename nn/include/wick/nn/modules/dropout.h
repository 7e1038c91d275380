#pragma once
// Dropout (torch.nn.Dropout).
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// F::dropout(input, p, is_training()): zeroes elements with probability p in training mode
/// (seeded by wick::manual_seed), the identity in eval mode.
class Dropout : public Cloneable<Dropout> {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  double p() const { return p_; }

 private:
  double p_;
};

}  // namespace wick::nn
