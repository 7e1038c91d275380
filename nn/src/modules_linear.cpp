// Linear, and the default initialization of Linear and the convolutions (default_init.h).
#include <fmt/format.h>

#include <cmath>

#include "default_init.h"
#include "repr.h"
#include "wick/nn/functional.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/linear.h"

namespace wick::nn {

namespace {
TensorOptions plain(TensorOptions o) { return o.requires_grad(false); }
}  // namespace

// PyTorch's reset_parameters for Linear and Conv (default_init.h).
void detail::kaiming_default_init(const Tensor& weight, const Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).fan_in;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

LinearImpl::LinearImpl(const LinearOptions& options, TensorOptions tensor_options) : options_(options) {
  const int64_t in = options.in_features(), out = options.out_features();
  WICK_CHECK(in >= 0 && out >= 0, "Linear: in_features ({}) and out_features ({}) must be >= 0", in, out);
  weight_ = register_parameter("weight", wick::empty({out, in}, plain(tensor_options)));
  bias_ = register_parameter("bias", options.bias() ? wick::empty({out}, plain(tensor_options)) : Tensor());
  reset_parameters();
}

void LinearImpl::reset_parameters() { detail::kaiming_default_init(weight(), bias()); }

Tensor LinearImpl::forward(const Tensor& input) { return F::linear(input, weight(), bias()); }

std::string LinearImpl::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", in_features(), out_features(),
                     detail::py_bool(bias().defined()));
}

}  // namespace wick::nn
