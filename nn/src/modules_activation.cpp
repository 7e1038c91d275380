// The activation layers around nn::F's activations (functional_activation.cpp), with PyTorch
// 1.13's extra_repr strings, and PReLU's learned slopes.
#include <fmt/format.h>

#include <string>

#include "repr.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/activation.h"

namespace wick::nn {

namespace {
// PyTorch's ", inplace=True" suffix (nothing when false).
std::string inplace_suffix(bool inplace) { return inplace ? ", inplace=True" : ""; }
// The repr of a layer whose only option is inplace (ReLU, SiLU, SELU, ReLU6, Mish).
std::string inplace_only(bool inplace) { return inplace ? "inplace=True" : ""; }
}  // namespace

Tensor ReLUImpl::forward(const Tensor& input) { return F::relu(input, options_); }
std::string ReLUImpl::extra_repr() const { return inplace_only(options_.inplace()); }

Tensor SiLUImpl::forward(const Tensor& input) { return F::silu(input, options_); }
std::string SiLUImpl::extra_repr() const { return inplace_only(options_.inplace()); }

Tensor LeakyReLUImpl::forward(const Tensor& input) { return F::leaky_relu(input, options_); }
std::string LeakyReLUImpl::extra_repr() const {
  return fmt::format("negative_slope={}{}", detail::py_float(options_.negative_slope()),
                     inplace_suffix(options_.inplace()));
}

Tensor ELUImpl::forward(const Tensor& input) { return F::elu(input, options_); }
std::string ELUImpl::extra_repr() const {
  return fmt::format("alpha={}{}", detail::py_float(options_.alpha()), inplace_suffix(options_.inplace()));
}

Tensor SELUImpl::forward(const Tensor& input) { return F::selu(input, options_); }
std::string SELUImpl::extra_repr() const { return inplace_only(options_.inplace()); }

CELUImpl::CELUImpl(const CELUOptions& options) : options_(options) {
  WICK_CHECK(options.alpha() != 0.0, "CELU: alpha cannot be 0 (it divides x)");
}
Tensor CELUImpl::forward(const Tensor& input) { return F::celu(input, options_); }
std::string CELUImpl::extra_repr() const {
  return fmt::format("alpha={}{}", detail::py_float(options_.alpha()), inplace_suffix(options_.inplace()));
}

SoftplusImpl::SoftplusImpl(const SoftplusOptions& options) : options_(options) {
  WICK_CHECK(options.beta() != 0.0, "Softplus: beta cannot be 0 (the result is divided by it)");
}
Tensor SoftplusImpl::forward(const Tensor& input) { return F::softplus(input, options_); }
std::string SoftplusImpl::extra_repr() const {
  return fmt::format("beta={}, threshold={}", options_.beta(), options_.threshold());
}

HardtanhImpl::HardtanhImpl(const HardtanhOptions& options) : options_(options) {
  WICK_CHECK(options.max_val() > options.min_val(), "Hardtanh: max_val ({}) must be greater than min_val ({})",
             options.max_val(), options.min_val());
}
Tensor HardtanhImpl::forward(const Tensor& input) { return F::hardtanh(input, options_); }
std::string HardtanhImpl::extra_repr() const {
  return fmt::format("min_val={}, max_val={}{}", detail::py_float(options_.min_val()),
                     detail::py_float(options_.max_val()), inplace_suffix(options_.inplace()));
}

Tensor ReLU6Impl::forward(const Tensor& input) { return F::relu6(input, options_); }
std::string ReLU6Impl::extra_repr() const { return inplace_only(options_.inplace()); }

Tensor HardsigmoidImpl::forward(const Tensor& input) { return F::hardsigmoid(input, options_); }

Tensor HardswishImpl::forward(const Tensor& input) { return F::hardswish(input, options_); }

Tensor MishImpl::forward(const Tensor& input) { return F::mish(input, options_); }
std::string MishImpl::extra_repr() const { return inplace_only(options_.inplace()); }

Tensor SoftsignImpl::forward(const Tensor& input) { return F::softsign(input); }

Tensor TanhshrinkImpl::forward(const Tensor& input) { return F::tanhshrink(input); }

Tensor LogSigmoidImpl::forward(const Tensor& input) { return F::logsigmoid(input); }

Tensor ThresholdImpl::forward(const Tensor& input) { return F::threshold(input, options_); }
std::string ThresholdImpl::extra_repr() const {
  return fmt::format("threshold={}, value={}{}", detail::py_float(options_.threshold()),
                     detail::py_float(options_.value()), inplace_suffix(options_.inplace()));
}

Tensor GLUImpl::forward(const Tensor& input) { return F::glu(input, options_); }
std::string GLUImpl::extra_repr() const { return fmt::format("dim={}", options_.dim()); }

Tensor SoftminImpl::forward(const Tensor& input) { return F::softmin(input, options_); }
std::string SoftminImpl::extra_repr() const { return fmt::format("dim={}", options_.dim()); }

Tensor LogSoftmaxImpl::forward(const Tensor& input) { return F::log_softmax(input, options_.dim()); }
std::string LogSoftmaxImpl::extra_repr() const { return fmt::format("dim={}", options_.dim()); }

PReLUImpl::PReLUImpl(const PReLUOptions& options, TensorOptions tensor_options) : options_(options) {
  WICK_CHECK(options.num_parameters() >= 1,
             "PReLU: num_parameters must be >= 1 (1 shared slope, or one per channel), got {}",
             options.num_parameters());
  weight_ = register_parameter("weight", wick::empty({options.num_parameters()}, tensor_options.requires_grad(false)));
  reset_parameters();
}
void PReLUImpl::reset_parameters() { init::constant_(weight(), options_.init()); }
Tensor PReLUImpl::forward(const Tensor& input) { return F::prelu(input, weight()); }
std::string PReLUImpl::extra_repr() const { return fmt::format("num_parameters={}", options_.num_parameters()); }

}  // namespace wick::nn
