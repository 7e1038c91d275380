// The parameter-free layers: pooling, dropout, activations, flatten.
#include <fmt/format.h>

#include "repr.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/activation.h"
#include "wick/nn/modules/dropout.h"
#include "wick/nn/modules/pooling.h"

namespace wick::nn {

MaxPool2d::MaxPool2d(Int2 kernel_size, Int2 stride, Int2 padding, Int2 dilation, bool ceil_mode)
    : kernel_size_(kernel_size),
      stride_(stride == Int2(0) ? kernel_size : stride),
      padding_(padding),
      dilation_(dilation),
      ceil_mode_(ceil_mode) {}

Tensor MaxPool2d::forward(const Tensor& input) {
  return F::max_pool2d(input, kernel_size_, stride_, padding_, dilation_, ceil_mode_);
}

std::string MaxPool2d::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}", detail::py_int2(kernel_size_),
                     detail::py_int2(stride_), detail::py_int2(padding_), detail::py_int2(dilation_),
                     detail::py_bool(ceil_mode_));
}

AvgPool2d::AvgPool2d(Int2 kernel_size, Int2 stride, Int2 padding, bool ceil_mode, bool count_include_pad)
    : kernel_size_(kernel_size),
      stride_(stride == Int2(0) ? kernel_size : stride),
      padding_(padding),
      ceil_mode_(ceil_mode),
      count_include_pad_(count_include_pad) {}

Tensor AvgPool2d::forward(const Tensor& input) {
  return F::avg_pool2d(input, kernel_size_, stride_, padding_, ceil_mode_, count_include_pad_);
}

std::string AvgPool2d::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}", detail::py_int2(kernel_size_), detail::py_int2(stride_),
                     detail::py_int2(padding_));
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(Int2 output_size) : output_size_(output_size) {}

Tensor AdaptiveAvgPool2d::forward(const Tensor& input) { return F::adaptive_avg_pool2d(input, output_size_); }

std::string AdaptiveAvgPool2d::extra_repr() const {
  return fmt::format("output_size={}", detail::py_int2(output_size_));
}

Dropout::Dropout(double p) : p_(p) {
  WICK_CHECK(p >= 0.0 && p <= 1.0, "Dropout: probability p must be in [0, 1], got {}", p);
}

Tensor Dropout::forward(const Tensor& input) { return F::dropout(input, p_, is_training()); }

std::string Dropout::extra_repr() const { return fmt::format("p={}, inplace=False", detail::py_float(p_)); }

Tensor ReLU::forward(const Tensor& input) { return F::relu(input); }

GELU::GELU(std::string approximate) : approximate_(std::move(approximate)) {
  WICK_CHECK(approximate_ == "none" || approximate_ == "tanh", "GELU: approximate must be 'none' or 'tanh', got '{}'",
             approximate_);
}

Tensor GELU::forward(const Tensor& input) { return F::gelu(input, approximate_); }

std::string GELU::extra_repr() const { return fmt::format("approximate='{}'", approximate_); }

Tensor Tanh::forward(const Tensor& input) { return F::tanh(input); }

Tensor Sigmoid::forward(const Tensor& input) { return F::sigmoid(input); }

Softmax::Softmax(int64_t dim) : dim_(dim) {}

Tensor Softmax::forward(const Tensor& input) { return F::softmax(input, dim_); }

std::string Softmax::extra_repr() const { return fmt::format("dim={}", dim_); }

Flatten::Flatten(int64_t start_dim, int64_t end_dim) : start_dim_(start_dim), end_dim_(end_dim) {}

Tensor Flatten::forward(const Tensor& input) { return flatten(input, start_dim_, end_dim_); }

std::string Flatten::extra_repr() const { return fmt::format("start_dim={}, end_dim={}", start_dim_, end_dim_); }

}  // namespace wick::nn
