// The shared steps of wick::autograd::functional (functional_internal.h) and its vjp and jvp.
#include <fmt/ranges.h>

#include "functional_internal.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"

namespace wick::autograd::functional::detail {

void check_defined(std::string_view fn, const TensorList& xs, std::string_view what, bool need_one) {
  WICK_CHECK(!need_one || !xs.empty(), "autograd::functional::{}: got no {}; pass at least one tensor", fn, what);
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].defined()) continue;
    const std::string name = what == "v"        ? fmt::format("entry {} of v", i)
                             : what == "output" ? fmt::format("output {} of the user-provided function", i)
                                                : fmt::format("{} {}", what, i);
    throw ValueError(
        fmt::format("autograd::functional::{}: {} is an undefined tensor; every {} must be defined", fn, name, what));
  }
}

TensorList grad_preprocess(std::string_view fn, const TensorList& xs, bool create_graph, bool need_graph) {
  TensorList res;
  res.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    if (create_graph && x.requires_grad()) {
      res.push_back(x.view_as(x));  // a new tensor, still connected to x
      continue;
    }
    WICK_CHECK_TYPE(!need_graph || x.is_floating_point(),
                    "autograd::functional::{}: input {} is {} of shape [{}]; only floating tensors can be "
                    "differentiated, pass a float32 or float64 input",
                    fn, i, x.dtype(), fmt::join(x.sizes(), ", "));
    Tensor d = x.detach();
    if (need_graph) d.requires_grad_(true);
    res.push_back(std::move(d));
  }
  return res;
}

TensorList grad_postprocess(TensorList xs, bool create_graph) {
  if (!create_graph)
    for (Tensor& x : xs)
      if (x.defined()) x = x.detach();
  return xs;
}

void prepare_inputs_and_v(std::string_view fn, const TensorList& inputs_in, const TensorList& v_in, bool create_graph,
                          bool inputs_list, TensorList& inputs, TensorList& v) {
  check_defined(fn, inputs_in, "input", true);
  inputs = grad_preprocess(fn, inputs_in, create_graph, /*need_graph=*/true);
  if (!v_in.empty()) {
    check_defined(fn, v_in, "v", false);
    v = grad_preprocess(fn, v_in, create_graph, /*need_graph=*/false);
    validate_v(fn, v, inputs, inputs_list, "input");
  } else {
    WICK_CHECK(inputs.size() == 1 && inputs[0].numel() == 1,
               "autograd::functional::{}: v can be left out only when the input is a single tensor of one element, "
               "but there are {} inputs, the first of shape [{}]; pass v",
               fn, inputs.size(), fmt::join(inputs[0].sizes(), ", "));
  }
}

void validate_v(std::string_view fn, const TensorList& v, const TensorList& other, bool other_is_list,
                std::string_view other_what) {
  WICK_CHECK(v.size() == other.size(),
             "autograd::functional::{}: v has {} tensors but there are {} {}s; pass one tensor of v per {}", fn,
             v.size(), other.size(), other_what, other_what);
  for (size_t i = 0; i < v.size(); ++i) {
    WICK_CHECK(v[i].sizes() == other[i].sizes(), "autograd::functional::{}: {} has shape [{}] but {} {} has shape [{}]",
               fn, other_is_list ? fmt::format("entry {} of v", i) : std::string("v"), fmt::join(v[i].sizes(), ", "),
               other_what, i, fmt::join(other[i].sizes(), ", "));
    WICK_CHECK(v[i].device() == other[i].device(), "autograd::functional::{}: {} is on {} but {} {} is on {}", fn,
               other_is_list ? fmt::format("entry {} of v", i) : std::string("v"), v[i].device(), other_what, i,
               other[i].device());
  }
}

void check_requires_grad(std::string_view fn, const TensorList& xs, RequiresGradCheck kind, bool strict) {
  if (!strict) return;
  for (size_t i = 0; i < xs.size(); ++i) {
    WICK_CHECK(xs[i].defined(),
               "autograd::functional::{} (strict): the output of the user-provided function is independent of "
               "input {}; this is not allowed in strict mode",
               fn, i);
    if (xs[i].requires_grad()) continue;
    switch (kind) {
      case RequiresGradCheck::Hessian:
        throw ValueError(fmt::format(
            "autograd::functional::{} (strict): the hessian of the user-provided function with respect to input {} "
            "is independent of the input; make the function thrice differentiable, or pass strict=false",
            fn, i));
      case RequiresGradCheck::Jacobian:
        throw ValueError(fmt::format(
            "autograd::functional::{} (strict): the jacobian of the user-provided function with respect to input {} "
            "is independent of the inputs (the function is linear in it, for example); strict mode needs a twice "
            "differentiable function whose jacobian depends on the inputs, or pass strict=false",
            fn, i));
      case RequiresGradCheck::GradInputs:
        throw ValueError(fmt::format(
            "autograd::functional::{} (strict): the gradient with respect to input {} is independent of the inputs "
            "of the user-provided function; pass strict=false to accept it",
            fn, i));
      case RequiresGradCheck::Outputs:
        throw ValueError(
            fmt::format("autograd::functional::{} (strict): output {} of the user-provided function does not require "
                        "gradients; compute every output differentiably from the inputs, or pass strict=false",
                        fn, i));
    }
  }
}

TensorList autograd_grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                         bool create_graph, std::optional<bool> retain_graph) {
  TensorList outs, gouts;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].defined() || !outputs[i].requires_grad()) continue;
    outs.push_back(outputs[i]);
    gouts.push_back(grad_outputs.empty() ? Tensor() : grad_outputs[i]);
  }
  if (outs.empty()) return TensorList(inputs.size());  // nothing to differentiate: no backward
  return autograd::grad(outs, inputs, gouts, retain_graph, create_graph, /*allow_unused=*/true);
}

TensorList fill_in_zeros(std::string_view fn, TensorList grads, const TensorList& refs, bool strict, bool create_graph,
                         Stage stage) {
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) {
      if (strict) {
        switch (stage) {
          case Stage::Back:
            throw ValueError(fmt::format(
                "autograd::functional::{} (strict): the output of the user-provided function is independent of "
                "input {}; pass strict=false to get zeros",
                fn, i));
          case Stage::BackTrick:
            throw ValueError(fmt::format(
                "autograd::functional::{} (strict): the gradient with respect to the inputs is independent of entry "
                "{} of the grad_outputs of the double-backward trick (output {} does not depend on the inputs); "
                "pass strict=false to get zeros",
                fn, i, i));
          case Stage::DoubleBack:
            throw ValueError(fmt::format(
                "autograd::functional::{} (strict): the jacobian of the user-provided function is independent of "
                "input {}; pass strict=false to get zeros",
                fn, i));
          case Stage::DoubleBackTrick:
            throw ValueError(fmt::format(
                "autograd::functional::{} (strict): the hessian of the user-provided function is independent of "
                "entry {} of the grad_jacobian of the double-backward trick; pass strict=false to get zeros",
                fn, i));
        }
      }
      grads[i] = zeros_like(refs[i]);
    } else if (strict && create_graph && !grads[i].requires_grad()) {
      const bool double_stage = stage == Stage::DoubleBack || stage == Stage::DoubleBackTrick;
      throw ValueError(fmt::format(
          "autograd::functional::{} (strict): the {} of the user-provided function is independent of input {}, "
          "which strict mode does not allow with create_graph=true; pass strict=false",
          fn, double_stage ? "hessian" : "jacobian", i));
    }
  }
  return grads;
}

std::string describe(const TensorList& outputs) {
  if (outputs.size() == 1) return fmt::format("a tensor of shape [{}]", fmt::join(outputs[0].sizes(), ", "));
  return fmt::format("{} tensors", outputs.size());
}

TensorList call_function(std::string_view fn, const ListFunction& func, const TensorList& inputs) {
  TensorList outputs = func(inputs);
  check_defined(fn, outputs, "output", false);
  return outputs;
}

std::pair<TensorList, TensorList> vjp(const ListFunction& func, const TensorList& inputs_in, const TensorList& v_in,
                                      bool create_graph, bool strict, bool outputs_list) {
  constexpr std::string_view fn = "vjp";
  TensorList inputs, outputs, v;
  {
    AutoGradMode enable(true);
    check_defined(fn, inputs_in, "input", true);
    inputs = grad_preprocess(fn, inputs_in, create_graph, /*need_graph=*/true);
    outputs = call_function(fn, func, inputs);
    check_requires_grad(fn, outputs, RequiresGradCheck::Outputs, strict);
    if (!v_in.empty()) {
      check_defined(fn, v_in, "v", false);
      v = grad_preprocess(fn, v_in, create_graph, /*need_graph=*/false);
      validate_v(fn, v, outputs, outputs_list, "output");
    } else {
      WICK_CHECK(outputs.size() == 1 && outputs[0].numel() == 1,
                 "autograd::functional::vjp: v can be left out only when the user-provided function returns a "
                 "single tensor of one element, but it returned {}; pass v",
                 describe(outputs));
    }
  }
  AutoGradMode mode(create_graph || GradMode::is_enabled());
  TensorList res = autograd_grad(outputs, inputs, v, create_graph);
  res = fill_in_zeros(fn, std::move(res), inputs, strict, create_graph, Stage::Back);
  return {grad_postprocess(std::move(outputs), create_graph), grad_postprocess(std::move(res), create_graph)};
}

// J v by the double-backward trick: g -> J^T g is linear in g, so its gradient with respect to g,
// weighted by v, is J v. g's value never enters the result (zeros keep it free of inf and NaN).
std::pair<TensorList, TensorList> jvp(const ListFunction& func, const TensorList& inputs_in, const TensorList& v_in,
                                      bool create_graph, bool strict, bool inputs_list) {
  constexpr std::string_view fn = "jvp";
  TensorList inputs, outputs, v, grad_outputs, grad_inputs;
  {
    AutoGradMode enable(true);
    prepare_inputs_and_v(fn, inputs_in, v_in, create_graph, inputs_list, inputs, v);
    outputs = call_function(fn, func, inputs);
    // The double-backward trick needs a grad_output that requires grad per output, which only a
    // floating output has (PyTorch fails there too: "Only Tensors of floating point ... can require
    // gradients"); refused up front, naming the output.
    for (size_t i = 0; i < outputs.size(); ++i)
      WICK_CHECK_TYPE(outputs[i].is_floating_point(),
                      "autograd::functional::jvp: output {} of the user-provided function is {} of shape [{}]; a "
                      "Jacobian-vector product needs floating outputs only. Return that output separately (outside "
                      "the function), or convert it with .to(kFloat64) if it should be differentiated",
                      i, outputs[i].dtype(), fmt::join(outputs[i].sizes(), ", "));
    check_requires_grad(fn, outputs, RequiresGradCheck::Outputs, strict);
    for (const Tensor& out : outputs) grad_outputs.push_back(zeros_like(out).requires_grad_(true));
    grad_inputs = autograd_grad(outputs, inputs, grad_outputs, /*create_graph=*/true);
    check_requires_grad(fn, grad_inputs, RequiresGradCheck::GradInputs, strict);
  }
  AutoGradMode mode(create_graph || GradMode::is_enabled());
  TensorList res = autograd_grad(grad_inputs, grad_outputs, v, create_graph);
  res = fill_in_zeros(fn, std::move(res), outputs, strict, create_graph, Stage::BackTrick);
  return {grad_postprocess(std::move(outputs), create_graph), grad_postprocess(std::move(res), create_graph)};
}

}  // namespace wick::autograd::functional::detail
