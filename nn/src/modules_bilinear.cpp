// Bilinear: PyTorch's parameters and reset_parameters, forward on F::bilinear.
#include <fmt/format.h>

#include <cmath>

#include "repr.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/nn/functional_bilinear.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/bilinear.h"

namespace wick::nn {

BilinearImpl::BilinearImpl(const BilinearOptions& options, TensorOptions tensor_options) : options_(options) {
  const int64_t in1 = options.in1_features(), in2 = options.in2_features(), out = options.out_features();
  WICK_CHECK(in1 >= 0 && in2 >= 0 && out >= 0,
             "Bilinear: in1_features ({}), in2_features ({}) and out_features ({}) must be >= 0", in1, in2, out);
  const TensorOptions plain = tensor_options.requires_grad(false);
  weight_ = register_parameter("weight", wick::empty({out, in1, in2}, plain));
  bias_ = register_parameter("bias", options.bias() ? wick::empty({out}, plain) : Tensor());
  reset_parameters();
}

void BilinearImpl::reset_parameters() {
  // PyTorch: bound = 1 / sqrt(weight.size(1)) for weight and bias alike.
  const int64_t in1 = options_.in1_features();
  const double bound = in1 > 0 ? 1.0 / std::sqrt(static_cast<double>(in1)) : 0.0;
  init::uniform_(weight(), -bound, bound);
  if (bias().defined()) init::uniform_(bias(), -bound, bound);
}

Tensor BilinearImpl::forward(const Tensor& input1, const Tensor& input2) {
  return F::bilinear(input1, input2, weight(), bias());
}

std::string BilinearImpl::extra_repr() const {
  return fmt::format("in1_features={}, in2_features={}, out_features={}, bias={}", options_.in1_features(),
                     options_.in2_features(), options_.out_features(), detail::py_bool(bias().defined()));
}

}  // namespace wick::nn
