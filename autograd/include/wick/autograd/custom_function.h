#pragma once
// Custom autograd functions: an op with its own backward, written by the user (LibTorch's
// torch::autograd::Function<T>).
//
//   struct Cube : wick::autograd::Function<Cube> {
//     static Tensor forward(AutogradContext* ctx, const Tensor& x, double scale) {
//       ctx->save_for_backward({x});
//       ctx->saved_data["scale"] = scale;
//       return pow(x, 3.0) * scale;
//     }
//     static tensor_list backward(AutogradContext* ctx, tensor_list g) {
//       Tensor x = ctx->get_saved_variables()[0];
//       double s = ctx->saved_data["scale"].toDouble();
//       return {g[0] * (x * x) * (3.0 * s), Tensor()};  // one per argument (per element of a vector)
//     }
//   };
//   Tensor y = Cube::apply(x, 2.0);
//
// Note [Custom functions]
// apply() makes a CustomFunctionNode, runs T::forward under NoGradGuard with the node's context,
// then wires the outputs: when grad mode is on and a tensor argument requires grad, every
// defined floating output that is not marked non-differentiable gets the node as grad_fn (an
// integer output gets no history, as in PyTorch; an output that is an unmodified input is
// returned as an alias, so the input keeps its own history; a dirty input is itself rebased onto
// the node after a version bump), and the tensors passed to save_for_backward are saved as
// SavedTensors (outputs weakly, Note [Saved tensors and cycles]), so an in-place change before
// backward is caught. An output that shares memory with an input and is not a dirty input (an
// input returned as it is, a view made in forward) is a view the engine does not track: it is
// flagged as a view made without grad (TensorImpl::view_made_without_grad, which every view made
// in forward already carries; not the detached alias that a non-differentiable output requiring
// grad becomes, as PyTorch's detach()), so a recorded in-place op on it, or on a view of it, is
// a StateError saying to clone() it (PyTorch refuses it too: the view+in-place logic would
// bypass the custom backward). The node's edges are those
// of the tensor arguments in order (a std::vector<Tensor> argument gives one per element);
// backward receives one gradient per forward output (undefined for an undefined output, also
// with materialize_grads; zeros for another unused one unless set_materialize_grads(false)) and
// returns one gradient per tensor argument or vector element and one (undefined) per other
// argument, checked by count and position. The node's device is that of the first defined
// output, so the device-parallel engine runs it like any other node; backward runs with grad
// mode = create_graph, so a backward written with wick ops differentiates again. An exception
// from backward that is not a wick::Error becomes a wick::Error naming the function and the
// exception's type (LibTorch keeps the type), and the engine adds the node and device. The
// context drops its marks (dirty, non-differentiable) once the outputs are wired, so a dirty
// input, whose grad_fn is the node, does not keep the node alive. Refused (forward has already
// run then): a dirty input that is a leaf requiring grad, a dirty view of another tensor
// (LibTorch rebases the view's base; clone() the view first), a dirty view made under
// NoGradGuard or flagged as above (the in-place ops' message), a dirty tensor not returned.
// Mirrored in docs/autograd.md.
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "wick/autograd/custom_function_context.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/record.h"

namespace wick::autograd {

namespace detail {

/// The tensor arguments of a call (in order) and, per argument position, whether it is one.
struct ForwardInputs {
  variable_list tensors;
  std::vector<bool> is_tensor;
};
inline void collect_input(ForwardInputs& in, const Tensor& t) {
  in.tensors.push_back(t);
  in.is_tensor.push_back(true);
}
inline void collect_input(ForwardInputs& in, const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) collect_input(in, t);
}
template <class U>
void collect_input(ForwardInputs& in, const U&) {
  in.is_tensor.push_back(false);
}

/// The demangled name of a type.
std::string demangle(const char* mangled);

}  // namespace detail

/// The node of one custom-function call. backward_fn is T::backward.
class CustomFunctionNode final : public Node {
 public:
  using BackwardFn = variable_list (*)(AutogradContext*, variable_list);
  CustomFunctionNode(std::string name, BackwardFn fn, std::vector<bool> is_tensor_input);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return ctx_.name_; }
  void release_variables() override;
  std::vector<const SavedTensor*> saved_tensors() const override;
  AutogradContext& ctx() { return ctx_; }

  /// Before forward: records the edges of `inputs` when `recording`, and points ctx at this node.
  void begin(const detail::ForwardInputs& inputs, bool recording);
  /// After forward: bumps dirty inputs, wires `outputs` (replacing an output by an alias where
  /// Note [Custom functions] says) and saves what forward asked to save.
  void finish(const detail::ForwardInputs& inputs, variable_list& outputs);

 private:
  BackwardFn fn_;
  std::vector<bool> is_tensor_input_;
  std::vector<bool> output_defined_;
  AutogradContext ctx_;
};

/// Base of a custom function T (CRTP), which defines
///   static Tensor-or-variable_list forward(AutogradContext*, args...);
///   static variable_list backward(AutogradContext*, variable_list grad_outputs);
/// backward gets one gradient per output of forward and returns one per tensor argument, one per
/// element of a std::vector<Tensor> argument, and an undefined Tensor() per other argument.
/// and may hide name() to rename its node (default: T's demangled type name).
template <class T>
struct Function {
  /// The node's name in errors, traces and DOT graphs.
  static std::string name() { return detail::demangle(typeid(T).name()); }

  /// Runs T::forward on `args` and records the node when grad mode is on and a tensor argument
  /// requires grad. Returns what forward returns (a Tensor or a variable_list).
  template <typename X = T, typename... Args>
  static auto apply(Args&&... args) {
    using R = decltype(X::forward(static_cast<AutogradContext*>(nullptr), std::forward<Args>(args)...));
    static_assert(std::is_same_v<R, Tensor> || std::is_same_v<R, variable_list>,
                  "wick::autograd::Function: forward must return a Tensor or a variable_list");
    detail::ForwardInputs in;
    (detail::collect_input(in, args), ...);
    auto node = std::make_shared<CustomFunctionNode>(X::name(), &backward_thunk<X>, in.is_tensor);
    node->begin(in, needs_grad(in.tensors));
    variable_list outs;
    {
      AutoGradMode no_grad(false);
      if constexpr (std::is_same_v<R, Tensor>) {
        outs.push_back(X::forward(&node->ctx(), std::forward<Args>(args)...));
      } else {
        outs = X::forward(&node->ctx(), std::forward<Args>(args)...);
      }
    }
    node->finish(in, outs);
    if constexpr (std::is_same_v<R, Tensor>) {
      return outs[0];
    } else {
      return outs;
    }
  }

 private:
  template <typename X>
  static variable_list backward_thunk(AutogradContext* ctx, variable_list grads) {
    return X::backward(ctx, std::move(grads));
  }
};

}  // namespace wick::autograd
