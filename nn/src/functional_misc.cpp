// F::embedding and the activations (the dropout functions: functional_dropout.cpp).
#include <fmt/format.h>

#include <cmath>

#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx) {
  WICK_CHECK(indices.defined() && weight.defined(), "embedding: indices and weight must be defined");
  WICK_CHECK_TYPE(indices.dtype() == kInt64, "embedding: indices must be int64, got {}", indices.dtype());
  WICK_CHECK(weight.dim() == 2, "embedding: weight must be 2-d [num_embeddings, embedding_dim], got [{}]",
             fmt::join(weight.sizes(), ", "));
  WICK_CHECK(indices.device() == weight.device(), "embedding: indices are on {} but weight is on {}", indices.device(),
             weight.device());
  const int64_t num = weight.size(0), dim = weight.size(1);
  Tensor flat = native::reshape(indices, {-1});
  if (flat.numel() > 0) {
    Tensor lo = native::amin(flat, {}, false), hi = native::amax(flat, {}, false);
    const int64_t l = lo.item<int64_t>(), h = hi.item<int64_t>();
    WICK_CHECK_INDEX(l >= 0 && h < num, "embedding: index {} is out of range for {} embeddings (valid: 0..{})",
                     l < 0 ? l : h, num, num - 1);
  }
  Tensor rows = index_select(weight, 0, flat);  // [M, dim]
  if (padding_idx) {
    int64_t p = *padding_idx < 0 ? *padding_idx + num : *padding_idx;
    WICK_CHECK_INDEX(p >= 0 && p < num, "embedding: padding_idx {} is out of range for {} embeddings", *padding_idx,
                     num);
    // Same values; the gradient flows only through rows that are not padding.
    Tensor is_pad = native::unsqueeze(native::binary(BinaryOp::Eq, flat, Scalar(p)), 1);
    rows = where(is_pad, rows.detach(), rows);
  }
  DimVector shape(indices.sizes());
  shape.push_back(dim);
  return view(rows, shape);
}

Tensor relu(const Tensor& input) { return wick::relu(input); }

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
