// The parameter-free layers: activations, flatten (the pooling layers: modules_pooling.cpp; the dropout layers:
// modules_dropout.cpp).
#include <fmt/format.h>

#include "repr.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/activation.h"

namespace wick::nn {

GELUImpl::GELUImpl(GELUOptions options) : options_(std::move(options)) {
  const std::string& a = options_.approximate();
  WICK_CHECK(a == "none" || a == "tanh", "GELU: approximate must be 'none' or 'tanh', got '{}'", a);
}

Tensor GELUImpl::forward(const Tensor& input) { return F::gelu(input, options_.approximate()); }

std::string GELUImpl::extra_repr() const { return fmt::format("approximate='{}'", options_.approximate()); }

Tensor TanhImpl::forward(const Tensor& input) { return F::tanh(input); }

Tensor SigmoidImpl::forward(const Tensor& input) { return F::sigmoid(input); }

SoftmaxImpl::SoftmaxImpl(const SoftmaxOptions& options) : options_(options) {}

Tensor SoftmaxImpl::forward(const Tensor& input) { return F::softmax(input, options_.dim()); }

std::string SoftmaxImpl::extra_repr() const { return fmt::format("dim={}", options_.dim()); }

FlattenImpl::FlattenImpl(const FlattenOptions& options) : options_(options) {}

Tensor FlattenImpl::forward(const Tensor& input) { return flatten(input, options_.start_dim(), options_.end_dim()); }

std::string FlattenImpl::extra_repr() const {
  return fmt::format("start_dim={}, end_dim={}", options_.start_dim(), options_.end_dim());
}

}  // namespace wick::nn
