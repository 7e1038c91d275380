#pragma once
// wick::autograd::functional: vjp, jvp, jacobian, hessian, hvp and vhp of a whole function, as
// torch.autograd.functional (PyTorch 1.13), built on autograd::grad (docs/autograd.md,
// "Higher-order functional API").
//
// Note [Functional API shapes]
// PyTorch's functions take "a Tensor or a tuple of Tensors" and give results whose nesting follows
// that choice. Here the choice is made by the type of the function: one Tensor in or a
// std::vector<Tensor> in (then the function receives the vector, where PyTorch unpacks it into
// arguments), one Tensor out or a std::vector<Tensor> out. Each overload below returns what
// PyTorch returns for that combination: a tuple becomes a std::vector, a tuple of tuples a nested
// std::vector (jacobian: [output][input]), a pair of results a std::pair. A lambda picks its
// overload by its own signature; a generic lambda (`auto` parameter) matches several, so give
// it a parameter type. An optional `v` is "not given" when it is an undefined Tensor or an empty
// vector.
//
// Options as PyTorch's: create_graph makes the results differentiable (with respect to inputs
// that require grad), strict turns the cases where PyTorch would quietly return zeros (an output
// independent of an input, a function linear where a second derivative is asked for) into
// ValueErrors naming the function, the output and the input. Without strict those results are
// zeros, as in PyTorch.
//
// Differences from PyTorch, on purpose:
// * jacobian and hessian run in reverse mode, one backward per output element (PyTorch's
//   vectorize=False, strategy="reverse-mode"). There is no vectorize argument; strategy (and
//   hessian's outer_jacobian_strategy) "forward-mode" raises NotImplementedError, since wick has
//   no forward-mode AD. jvp uses the double-backward trick, as PyTorch's jvp does.
// * A function output with no elements gives a jacobian with no elements (PyTorch fails in
//   torch.stack of nothing).
// * Functions that must return a single Tensor (hessian, hvp, vhp) have no vector-returning
//   overload: the mistake is a compile error instead of PyTorch's RuntimeError.
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::autograd::functional {

/// A function of one tensor returning one tensor.
using TensorFunction = std::function<Tensor(const Tensor&)>;
/// A function of one tensor returning several.
using TensorToListFunction = std::function<std::vector<Tensor>(const Tensor&)>;
/// A function of several tensors (PyTorch: a tuple of inputs) returning one tensor.
using ListToTensorFunction = std::function<Tensor(const std::vector<Tensor>&)>;
/// A function of several tensors returning several.
using ListFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// ---- vjp: (func(inputs), v^T J), v shaped as the outputs ----

/// Vector-Jacobian product: returns (func(inputs), vjp) where vjp has the shape of the inputs.
/// `v` has the shape of the outputs; it may be left out when the output has one element.
std::pair<Tensor, Tensor> vjp(const TensorFunction& func, const Tensor& inputs, const Tensor& v = {},
                              bool create_graph = false, bool strict = false);
/// vjp of a function with several outputs: v has one tensor per output.
std::pair<std::vector<Tensor>, Tensor> vjp(const TensorToListFunction& func, const Tensor& inputs,
                                           const std::vector<Tensor>& v = {}, bool create_graph = false,
                                           bool strict = false);
/// vjp of a function of several inputs: the second result has one tensor per input.
std::pair<Tensor, std::vector<Tensor>> vjp(const ListToTensorFunction& func, const std::vector<Tensor>& inputs,
                                           const Tensor& v = {}, bool create_graph = false, bool strict = false);
/// vjp of a function of several inputs and outputs.
std::pair<std::vector<Tensor>, std::vector<Tensor>> vjp(const ListFunction& func, const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& v = {}, bool create_graph = false,
                                                        bool strict = false);

// ---- jvp: (func(inputs), J v), v shaped as the inputs (the double-backward trick) ----

/// Jacobian-vector product: returns (func(inputs), jvp) where jvp has the shape of the outputs.
/// `v` has the shape of the inputs; it may be left out when the input has one element.
std::pair<Tensor, Tensor> jvp(const TensorFunction& func, const Tensor& inputs, const Tensor& v = {},
                              bool create_graph = false, bool strict = false);
/// jvp of a function with several outputs: one jvp tensor per output.
std::pair<std::vector<Tensor>, std::vector<Tensor>> jvp(const TensorToListFunction& func, const Tensor& inputs,
                                                        const Tensor& v = {}, bool create_graph = false,
                                                        bool strict = false);
/// jvp of a function of several inputs: v has one tensor per input.
std::pair<Tensor, Tensor> jvp(const ListToTensorFunction& func, const std::vector<Tensor>& inputs,
                              const std::vector<Tensor>& v = {}, bool create_graph = false, bool strict = false);
/// jvp of a function of several inputs and outputs.
std::pair<std::vector<Tensor>, std::vector<Tensor>> jvp(const ListFunction& func, const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& v = {}, bool create_graph = false,
                                                        bool strict = false);

// ---- jacobian: shape output.sizes() + input.sizes() per (output, input) ----

/// The Jacobian of func at inputs, of shape func(inputs).sizes() + inputs.sizes(). strategy
/// must be "reverse-mode" ("forward-mode": NotImplementedError).
Tensor jacobian(const TensorFunction& func, const Tensor& inputs, bool create_graph = false, bool strict = false,
                std::string_view strategy = "reverse-mode");
/// One Jacobian per output.
std::vector<Tensor> jacobian(const TensorToListFunction& func, const Tensor& inputs, bool create_graph = false,
                             bool strict = false, std::string_view strategy = "reverse-mode");
/// One Jacobian per input.
std::vector<Tensor> jacobian(const ListToTensorFunction& func, const std::vector<Tensor>& inputs,
                             bool create_graph = false, bool strict = false,
                             std::string_view strategy = "reverse-mode");
/// result[i][j]: the Jacobian of output i with respect to input j.
std::vector<std::vector<Tensor>> jacobian(const ListFunction& func, const std::vector<Tensor>& inputs,
                                          bool create_graph = false, bool strict = false,
                                          std::string_view strategy = "reverse-mode");

// ---- hessian: func returns one element; shape input.sizes() + input.sizes() ----

/// The Hessian of a function returning a one-element tensor, of shape inputs.sizes() twice.
Tensor hessian(const TensorFunction& func, const Tensor& inputs, bool create_graph = false, bool strict = false,
               std::string_view outer_jacobian_strategy = "reverse-mode");
/// result[i][j]: the second derivative with respect to inputs i and j.
std::vector<std::vector<Tensor>> hessian(const ListToTensorFunction& func, const std::vector<Tensor>& inputs,
                                         bool create_graph = false, bool strict = false,
                                         std::string_view outer_jacobian_strategy = "reverse-mode");

// ---- hvp / vhp: func returns one element; (func(inputs), H v) and (func(inputs), v^T H) ----

/// Hessian-vector product (the double-backward trick): returns (func(inputs), H v), shaped as
/// the inputs. v may be left out when the input has one element.
std::pair<Tensor, Tensor> hvp(const TensorFunction& func, const Tensor& inputs, const Tensor& v = {},
                              bool create_graph = false, bool strict = false);
/// hvp of a function of several inputs.
std::pair<Tensor, std::vector<Tensor>> hvp(const ListToTensorFunction& func, const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& v = {}, bool create_graph = false,
                                           bool strict = false);
/// Vector-Hessian product: returns (func(inputs), v^T H), shaped as the inputs.
std::pair<Tensor, Tensor> vhp(const TensorFunction& func, const Tensor& inputs, const Tensor& v = {},
                              bool create_graph = false, bool strict = false);
/// vhp of a function of several inputs.
std::pair<Tensor, std::vector<Tensor>> vhp(const ListToTensorFunction& func, const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& v = {}, bool create_graph = false,
                                           bool strict = false);

}  // namespace wick::autograd::functional
