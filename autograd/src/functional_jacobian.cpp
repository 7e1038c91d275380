// wick::autograd::functional's jacobian (reverse mode, one backward per output element) and
// hessian (the jacobian of the jacobian), as torch.autograd.functional with vectorize=False.
#include <fmt/ranges.h>

#include "functional_internal.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"

namespace wick::autograd::functional::detail {

namespace {

void check_strategy(std::string_view fn, std::string_view argument, std::string_view strategy) {
  WICK_CHECK_NOT_IMPLEMENTED(strategy != "forward-mode",
                             "autograd::functional::{}: {} \"forward-mode\" is not supported (wick has no forward-mode "
                             "AD); use \"reverse-mode\", which gives the same values",
                             fn, argument);
  WICK_CHECK(strategy == "reverse-mode",
             "autograd::functional::{}: {} must be \"reverse-mode\" (or PyTorch's \"forward-mode\", which wick does "
             "not support), got \"{}\"",
             fn, argument, strategy);
}

// Output i of the function whose jacobian is taken: for hessian, the gradient of the user's function.
std::string output_name(std::string_view fn, size_t i) {
  return fn == "hessian" ? fmt::format("the gradient of the user-provided function with respect to input {}", i)
                         : fmt::format("output {} of the user-provided function", i);
}

// The result's shape: output.sizes() followed by input.sizes().
DimVector joined_shape(const Tensor& out, const Tensor& in) {
  DimVector shape(out.sizes());
  for (int64_t s : in.sizes()) shape.push_back(s);
  return shape;
}

}  // namespace

std::vector<TensorList> jacobian(std::string_view fn, const ListFunction& func, const TensorList& inputs_in,
                                 bool create_graph, bool strict, std::string_view strategy) {
  check_strategy(fn, fn == "hessian" ? "outer_jacobian_strategy" : "strategy", strategy);
  AutoGradMode enable(true);
  check_defined(fn, inputs_in, "input", true);
  const TensorList inputs = grad_preprocess(fn, inputs_in, create_graph, /*need_graph=*/true);
  const TensorList outputs = call_function(fn, func, inputs);
  check_requires_grad(fn, outputs, RequiresGradCheck::Outputs, strict);

  std::vector<TensorList> jac(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    std::vector<DimVector> shapes;  // checked before any backward runs (Note [Checked sizes])
    for (const Tensor& in : inputs) {
      shapes.push_back(joined_shape(out, in));
      (void)checked_numel(shapes.back(), "autograd::functional::jacobian");
    }
    std::vector<TensorList> rows(inputs.size());  // rows[j][k]: d out.flatten()[k] / d input j
    const Tensor flat = out.reshape({-1});
    for (int64_t k = 0; k < out.numel(); ++k) {
      const TensorList vj = autograd_grad({flat.select(0, k)}, inputs, {}, create_graph, /*retain_graph=*/true);
      for (size_t j = 0; j < inputs.size(); ++j) {
        if (vj[j].defined()) {
          WICK_CHECK(!(strict && create_graph && !vj[j].requires_grad()),
                     "autograd::functional::{} (strict): the jacobian of {} with respect to input {} is independent "
                     "of the inputs, which strict mode does not allow with create_graph=true; pass strict=false",
                     fn, output_name(fn, i), j);
          rows[j].push_back(vj[j]);
        } else {
          WICK_CHECK(!strict,
                     "autograd::functional::{} (strict): {} is independent of input {}; pass strict=false to get "
                     "zeros",
                     fn, output_name(fn, i), j);
          rows[j].push_back(zeros_like(inputs[j]));
        }
      }
    }
    for (size_t j = 0; j < inputs.size(); ++j) {
      jac[i].push_back(rows[j].empty() ? zeros(shapes[j], inputs[j].options()) : stack(rows[j], 0).view(shapes[j]));
    }
  }
  if (!create_graph)
    for (TensorList& row : jac) row = grad_postprocess(std::move(row), false);
  return jac;
}

// The hessian is the jacobian of x -> d func / d x, whose own jacobian is taken with create_graph
// (and without strict: the strict checks are the outer ones, and the Jacobian check below).
std::vector<TensorList> hessian(const ListFunction& func, const TensorList& inputs, bool create_graph, bool strict,
                                std::string_view strategy) {
  constexpr std::string_view fn = "hessian";
  check_strategy(fn, "outer_jacobian_strategy", strategy);
  check_defined(fn, inputs, "input", true);
  const ListFunction single_output = [&](const TensorList& xs) {
    TensorList out = call_function(fn, func, xs);
    check_requires_grad(fn, out, RequiresGradCheck::Outputs, strict);
    WICK_CHECK(out.size() == 1 && out[0].numel() == 1,
               "autograd::functional::hessian: the user-provided function must return a single tensor of one "
               "element, but it returned {}; reduce it (e.g. with sum()) first",
               describe(out));
    return TensorList{out[0].squeeze()};
  };
  const ListFunction jac_func = [&](const TensorList& xs) {
    TensorList jac = jacobian(fn, single_output, xs, /*create_graph=*/true, /*strict=*/false, "reverse-mode")[0];
    check_requires_grad(fn, jac, RequiresGradCheck::Jacobian, strict);
    return jac;
  };
  return jacobian(fn, jac_func, inputs, create_graph, strict, strategy);
}

}  // namespace wick::autograd::functional::detail
