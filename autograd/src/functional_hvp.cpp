// wick::autograd::functional's hvp and vhp: products with the Hessian of a scalar function,
// without forming it (two backwards for vhp, three for hvp), as torch.autograd.functional.

#include "functional_internal.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"

namespace wick::autograd::functional::detail {

// vhp: v^T H is the gradient of (d f / d x) weighted by v. hvp: H v by the double-backward trick
// (as jvp): u -> u^T H is linear in u, so its gradient with respect to u, weighted by v, is H v
// (the same as v^T H for a symmetric H, but it costs one more backward, as in PyTorch).
std::pair<Tensor, TensorList> hvp_vhp(bool hvp, const ListFunction& func, const TensorList& inputs_in,
                                      const TensorList& v_in, bool create_graph, bool strict, bool inputs_list) {
  const std::string_view fn = hvp ? "hvp" : "vhp";
  TensorList inputs, outputs, v, jac, grad_jac, double_back;
  {
    AutoGradMode enable(true);
    prepare_inputs_and_v(fn, inputs_in, v_in, create_graph, inputs_list, inputs, v);
    outputs = call_function(fn, func, inputs);
    check_requires_grad(fn, outputs, RequiresGradCheck::Outputs, strict);
    WICK_CHECK(outputs.size() == 1 && outputs[0].numel() == 1,
               "autograd::functional::{}: the user-provided function must return a single tensor of one element, "
               "but it returned {}; reduce it (e.g. with sum()) first",
               fn, describe(outputs));
    jac = autograd_grad(outputs, inputs, {}, /*create_graph=*/true);
    check_requires_grad(fn, jac, RequiresGradCheck::Jacobian, strict);
    if (hvp) {
      for (const Tensor& x : inputs) grad_jac.push_back(zeros_like(x).requires_grad_(true));
      double_back = autograd_grad(jac, inputs, grad_jac, /*create_graph=*/true);
    }
  }
  AutoGradMode mode(create_graph || GradMode::is_enabled());
  TensorList res =
      hvp ? autograd_grad(double_back, grad_jac, v, create_graph) : autograd_grad(jac, inputs, v, create_graph);
  res =
      fill_in_zeros(fn, std::move(res), inputs, strict, create_graph, hvp ? Stage::DoubleBackTrick : Stage::DoubleBack);
  return {grad_postprocess(std::move(outputs), create_graph)[0], grad_postprocess(std::move(res), create_graph)};
}

}  // namespace wick::autograd::functional::detail
