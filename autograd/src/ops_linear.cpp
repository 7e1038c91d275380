// linear: bias + input @ weight^T as one GEMM (bias written first, GEMM adds with beta = 1), and a
// backward that hands the transposed operands to GEMM as they lie (Note [GEMM without copies]).
#include "op_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

// Note [GEMM without copies]
// matmul(input, weight.t()) plus add(bias) used to record three nodes: the gradient of weight.t()
// came out as a contiguous [in, out] matrix, and TransposeBackward turned it into a transposed
// view that AccumulateGrad then copied into a contiguous [out, in] gradient (16% of an MLP
// step). linear is one node instead: its weight gradient is computed as go^T @ input straight
// into a contiguous [out, in] tensor (GEMM reads go transposed), the input gradient as
// go @ weight, the bias gradient as a column sum, and the forward writes the broadcast bias into
// the output and lets GEMM add onto it (beta = 1). The backward is written on the differentiable
// ops, so double backward works as before.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  WICK_CHECK(input.defined() && weight.defined(), "linear: input and weight must be defined");
  WICK_CHECK(weight.dim() == 2 && input.dim() >= 1 && input.size(-1) == weight.size(1),
             "linear: input [{}] must end in in_features = weight.size(1) of a 2-d weight [{}]",
             fmt::join(input.sizes(), ", "), fmt::join(weight.sizes(), ", "));
  const int64_t in_f = weight.size(1), out_f = weight.size(0);
  const Tensor x2 = input.dim() == 2 ? input : native::reshape(input, {-1, in_f});
  Tensor out = native::addmm(bias, x2, native::transpose(weight, 0, 1));
  if (input.dim() != 2) {
    DimVector os(input.sizes());
    os.back() = out_f;
    out = native::view(out, os);
  }
  if (needs_grad({&input, &weight, &bias})) {
    DimVector in_shape(input.sizes());
    const bool ri = input.requires_grad(), rw = weight.requires_grad();
    const bool rb = bias.defined() && bias.requires_grad();
    record_function("LinearBackward", {input, weight, bias}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      const Tensor go = g[0].dim() == 2 ? g[0] : reshape(g[0], {-1, out_f});
                      Tensor gi, gw, gb;
                      if (ri) {
                        gi = matmul(go, s[1]);
                        if (in_shape.size() != 2) gi = reshape(gi, in_shape);
                      }
                      if (rw) {
                        const Tensor x = s[0].dim() == 2 ? s[0] : reshape(s[0], {-1, in_f});
                        gw = matmul(transpose(go, 0, 1), x);
                      }
                      if (rb) gb = sum(go, {0});
                      return {gi, gw, gb};
                    },
                    {rw ? input : Tensor(), ri ? weight : Tensor()});
  }
  return out;
}

}  // namespace wick
