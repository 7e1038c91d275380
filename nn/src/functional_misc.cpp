// gelu, tanh, sigmoid, softmax, log_softmax (relu, silu: functional_activation.cpp; dropout: functional_dropout.cpp;
// F::embedding: functional_embedding.cpp).
#include <fmt/format.h>

#include <cmath>

#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

Tensor gelu(const Tensor& input, const std::string& approximate) {
  if (approximate == "none") return wick::gelu(input);
  WICK_CHECK(approximate == "tanh", "gelu: approximate must be 'none' or 'tanh', got '{}'", approximate);
  const double k = std::sqrt(2.0 / M_PI);
  Tensor inner = (input + input * input * input * 0.044715) * k;
  return input * 0.5 * (wick::tanh(inner) + 1.0);
}

Tensor tanh(const Tensor& input) { return wick::tanh(input); }
Tensor sigmoid(const Tensor& input) { return wick::sigmoid(input); }
Tensor softmax(const Tensor& input, int64_t dim) { return wick::softmax(input, dim); }
Tensor log_softmax(const Tensor& input, int64_t dim) { return wick::log_softmax(input, dim); }

}  // namespace wick::nn::functional
