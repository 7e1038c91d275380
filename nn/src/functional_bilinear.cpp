// F::bilinear: einsum("...i,oij,...j->...o"), contracted left to right as PyTorch's einsum does
// (one GEMM of input1 against the weight, then one batched GEMM with input2), plus the bias.
#include "wick/nn/functional_bilinear.h"

#include <fmt/format.h>

#include "wick/autograd/einsum.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"

namespace wick::nn::functional {

namespace {
std::string shape_str(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }
}  // namespace

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias) {
  WICK_CHECK(input1.defined() && input2.defined() && weight.defined(),
             "bilinear: input1, input2 and weight must be defined tensors");
  const std::string shapes = fmt::format("input1 {}, input2 {}, weight {}{}", shape_str(input1), shape_str(input2),
                                         shape_str(weight), bias.defined() ? ", bias " + shape_str(bias) : "");
  WICK_CHECK(input1.dim() >= 1 && input1.dim() == input2.dim(),
             "bilinear: {}: input1 and input2 need one rank (at least 1), got {} and {}", shapes, input1.dim(),
             input2.dim());
  for (int64_t d = 0; d + 1 < input1.dim(); ++d)
    WICK_CHECK(input1.size(d) == input2.size(d),
               "bilinear: {}: the inputs' batch dims differ at dim {} ({} and {}); they do not broadcast", shapes, d,
               input1.size(d), input2.size(d));
  WICK_CHECK(weight.dim() == 3, "bilinear: {}: weight must be 3-d [out, in1, in2]", shapes);
  WICK_CHECK(input1.size(-1) == weight.size(1), "bilinear: {}: input1's last dim is {} but weight expects {}", shapes,
             input1.size(-1), weight.size(1));
  WICK_CHECK(input2.size(-1) == weight.size(2), "bilinear: {}: input2's last dim is {} but weight expects {}", shapes,
             input2.size(-1), weight.size(2));
  WICK_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)),
             "bilinear: {}: bias must be 1-d of weight's {} outputs", shapes, weight.size(0));
  const Tensor y = einsum("...i,oij,...j->...o", {input1, weight, input2});
  return bias.defined() ? add(y, bias) : y;
}

}  // namespace wick::nn::functional
