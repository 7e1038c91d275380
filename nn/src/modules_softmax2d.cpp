// Softmax2d: softmax over dim -3 of a 3-d or 4-d input.
#include <fmt/format.h>

#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/nn/modules/softmax2d.h"

namespace wick::nn {

Tensor Softmax2dImpl::forward(const Tensor& input) {
  WICK_CHECK(input.defined() && (input.dim() == 3 || input.dim() == 4),
             "Softmax2d: expects a 3-d [C, H, W] or 4-d [N, C, H, W] input, got {}",
             input.defined() ? fmt::format("[{}]", fmt::join(input.sizes(), ", ")) : "an undefined tensor");
  return softmax(input, -3);
}

}  // namespace wick::nn
