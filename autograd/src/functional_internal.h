#pragma once
// The list-based cores of wick::autograd::functional (functional.h) and their shared steps, as
// torch.autograd.functional's private helpers. The overloads of functional.h (functional_api.cpp)
// wrap a function into a ListFunction and record whether the inputs and outputs were lists, which
// only changes the nesting of the results and the wording of a few messages.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wick/autograd/functional.h"

namespace wick::autograd::functional::detail {

using TensorList = std::vector<Tensor>;

/// Which check of strict mode (PyTorch's _check_requires_grad input_type).
enum class RequiresGradCheck { Outputs, GradInputs, Jacobian, Hessian };
/// Which backward found a missing gradient (PyTorch's _fill_in_zeros stage).
enum class Stage { Back, BackTrick, DoubleBack, DoubleBackTrick };

/// ValueError unless `xs` is non-empty (when `need_one`) and every tensor is defined. `what`
/// names them: "input", "v" or "output" (of the user-provided function).
void check_defined(std::string_view fn, const TensorList& xs, std::string_view what, bool need_one);
/// Copies of the inputs for the function: a differentiable view when create_graph and the input
/// requires grad (so results stay connected to it), else a detached tensor that requires grad
/// when need_graph. TypeError for a non-floating input when need_graph.
TensorList grad_preprocess(std::string_view fn, const TensorList& xs, bool create_graph, bool need_graph);
/// Detaches every result unless create_graph.
TensorList grad_postprocess(TensorList xs, bool create_graph);
/// ValueError unless v has one tensor of the right shape (and device) per tensor of `other`.
/// `other_is_list` picks PyTorch's wording; `other_what` is "input" or "output".
void validate_v(std::string_view fn, const TensorList& v, const TensorList& other, bool other_is_list,
                std::string_view other_what);
/// jvp's, hvp's and vhp's first step, under grad mode: checks and preprocesses the inputs (with a
/// graph) and v (without), v shaped as the inputs; v may be left out only for a single
/// one-element input (ValueError otherwise).
void prepare_inputs_and_v(std::string_view fn, const TensorList& inputs_in, const TensorList& v_in, bool create_graph,
                          bool inputs_list, TensorList& inputs, TensorList& v);
/// ValueError, in strict mode only, when a tensor of `xs` is undefined or does not require grad.
void check_requires_grad(std::string_view fn, const TensorList& xs, RequiresGradCheck kind, bool strict);
/// autograd::grad of the outputs that require grad (with their grad_outputs; empty = none),
/// allow_unused: one undefined tensor per input that nothing reaches (all when no output
/// requires grad).
TensorList autograd_grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                         bool create_graph, std::optional<bool> retain_graph = std::nullopt);
/// Replaces undefined gradients with zeros shaped as `refs` (ValueError in strict mode), and in
/// strict mode with create_graph refuses gradients that do not require grad.
TensorList fill_in_zeros(std::string_view fn, TensorList grads, const TensorList& refs, bool strict, bool create_graph,
                         Stage stage);
/// "a tensor of shape [2, 3]" or "3 tensors", for messages about what a function returned.
std::string describe(const TensorList& outputs);
/// Calls func, checks its outputs are defined.
TensorList call_function(std::string_view fn, const ListFunction& func, const TensorList& inputs);

// ---- the cores: `v` empty = not given ----

/// (outputs, v^T J). outputs_list: whether the user's function returns a list.
std::pair<TensorList, TensorList> vjp(const ListFunction& func, const TensorList& inputs, const TensorList& v,
                                      bool create_graph, bool strict, bool outputs_list);
/// (outputs, J v). inputs_list: whether the user's inputs are a list.
std::pair<TensorList, TensorList> jvp(const ListFunction& func, const TensorList& inputs, const TensorList& v,
                                      bool create_graph, bool strict, bool inputs_list);
/// result[i][j] = d output i / d input j. `fn` names the public function in messages.
std::vector<TensorList> jacobian(std::string_view fn, const ListFunction& func, const TensorList& inputs,
                                 bool create_graph, bool strict, std::string_view strategy);
/// result[i][j] = d2 func / d input i d input j; func returns one one-element tensor.
std::vector<TensorList> hessian(const ListFunction& func, const TensorList& inputs, bool create_graph, bool strict,
                                std::string_view strategy);
/// (output, H v) when hvp, else (output, v^T H); func returns one one-element tensor.
std::pair<Tensor, TensorList> hvp_vhp(bool hvp, const ListFunction& func, const TensorList& inputs, const TensorList& v,
                                      bool create_graph, bool strict, bool inputs_list);

}  // namespace wick::autograd::functional::detail
