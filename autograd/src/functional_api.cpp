// The overloads of wick::autograd::functional (functional.h): each wraps the user's function into
// a ListFunction, calls the list-based core (functional_internal.h) and unwraps the results to the
// nesting PyTorch gives for that mix of Tensor and tuple (Note [Functional API shapes]).
#include "functional_internal.h"

namespace wick::autograd::functional {

namespace {

using detail::TensorList;

ListFunction wrap(const TensorFunction& f) {
  return [f](const TensorList& x) { return TensorList{f(x[0])}; };
}
ListFunction wrap(const TensorToListFunction& f) {
  return [f](const TensorList& x) { return f(x[0]); };
}
ListFunction wrap(const ListToTensorFunction& f) {
  return [f](const TensorList& x) { return TensorList{f(x)}; };
}

// An optional single tensor (undefined = not given) as the cores' list (empty = not given).
TensorList opt(const Tensor& t) { return t.defined() ? TensorList{t} : TensorList{}; }

std::vector<Tensor> column(const std::vector<TensorList>& m, size_t j) {
  std::vector<Tensor> out;
  for (const TensorList& row : m) out.push_back(row[j]);
  return out;
}

}  // namespace

// ---- vjp ----

std::pair<Tensor, Tensor> vjp(const TensorFunction& func, const Tensor& inputs, const Tensor& v, bool create_graph,
                              bool strict) {
  auto [out, res] = detail::vjp(wrap(func), {inputs}, opt(v), create_graph, strict, false);
  return {out[0], res[0]};
}
std::pair<std::vector<Tensor>, Tensor> vjp(const TensorToListFunction& func, const Tensor& inputs,
                                           const std::vector<Tensor>& v, bool create_graph, bool strict) {
  auto [out, res] = detail::vjp(wrap(func), {inputs}, v, create_graph, strict, true);
  return {out, res[0]};
}
std::pair<Tensor, std::vector<Tensor>> vjp(const ListToTensorFunction& func, const std::vector<Tensor>& inputs,
                                           const Tensor& v, bool create_graph, bool strict) {
  auto [out, res] = detail::vjp(wrap(func), inputs, opt(v), create_graph, strict, false);
  return {out[0], res};
}
std::pair<std::vector<Tensor>, std::vector<Tensor>> vjp(const ListFunction& func, const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& v, bool create_graph, bool strict) {
  return detail::vjp(func, inputs, v, create_graph, strict, true);
}

// ---- jvp ----

std::pair<Tensor, Tensor> jvp(const TensorFunction& func, const Tensor& inputs, const Tensor& v, bool create_graph,
                              bool strict) {
  auto [out, res] = detail::jvp(wrap(func), {inputs}, opt(v), create_graph, strict, false);
  return {out[0], res[0]};
}
std::pair<std::vector<Tensor>, std::vector<Tensor>> jvp(const TensorToListFunction& func, const Tensor& inputs,
                                                        const Tensor& v, bool create_graph, bool strict) {
  return detail::jvp(wrap(func), {inputs}, opt(v), create_graph, strict, false);
}
std::pair<Tensor, Tensor> jvp(const ListToTensorFunction& func, const std::vector<Tensor>& inputs,
                              const std::vector<Tensor>& v, bool create_graph, bool strict) {
  auto [out, res] = detail::jvp(wrap(func), inputs, v, create_graph, strict, true);
  return {out[0], res[0]};
}
std::pair<std::vector<Tensor>, std::vector<Tensor>> jvp(const ListFunction& func, const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& v, bool create_graph, bool strict) {
  return detail::jvp(func, inputs, v, create_graph, strict, true);
}

// ---- jacobian ----

Tensor jacobian(const TensorFunction& func, const Tensor& inputs, bool create_graph, bool strict,
                std::string_view strategy) {
  return detail::jacobian("jacobian", wrap(func), {inputs}, create_graph, strict, strategy)[0][0];
}
std::vector<Tensor> jacobian(const TensorToListFunction& func, const Tensor& inputs, bool create_graph, bool strict,
                             std::string_view strategy) {
  return column(detail::jacobian("jacobian", wrap(func), {inputs}, create_graph, strict, strategy), 0);
}
std::vector<Tensor> jacobian(const ListToTensorFunction& func, const std::vector<Tensor>& inputs, bool create_graph,
                             bool strict, std::string_view strategy) {
  return detail::jacobian("jacobian", wrap(func), inputs, create_graph, strict, strategy)[0];
}
std::vector<std::vector<Tensor>> jacobian(const ListFunction& func, const std::vector<Tensor>& inputs,
                                          bool create_graph, bool strict, std::string_view strategy) {
  return detail::jacobian("jacobian", func, inputs, create_graph, strict, strategy);
}

// ---- hessian ----

Tensor hessian(const TensorFunction& func, const Tensor& inputs, bool create_graph, bool strict,
               std::string_view outer_jacobian_strategy) {
  return detail::hessian(wrap(func), {inputs}, create_graph, strict, outer_jacobian_strategy)[0][0];
}
std::vector<std::vector<Tensor>> hessian(const ListToTensorFunction& func, const std::vector<Tensor>& inputs,
                                         bool create_graph, bool strict, std::string_view outer_jacobian_strategy) {
  return detail::hessian(wrap(func), inputs, create_graph, strict, outer_jacobian_strategy);
}

// ---- hvp, vhp ----

std::pair<Tensor, Tensor> hvp(const TensorFunction& func, const Tensor& inputs, const Tensor& v, bool create_graph,
                              bool strict) {
  auto [out, res] = detail::hvp_vhp(true, wrap(func), {inputs}, opt(v), create_graph, strict, false);
  return {out, res[0]};
}
std::pair<Tensor, std::vector<Tensor>> hvp(const ListToTensorFunction& func, const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& v, bool create_graph, bool strict) {
  return detail::hvp_vhp(true, wrap(func), inputs, v, create_graph, strict, true);
}
std::pair<Tensor, Tensor> vhp(const TensorFunction& func, const Tensor& inputs, const Tensor& v, bool create_graph,
                              bool strict) {
  auto [out, res] = detail::hvp_vhp(false, wrap(func), {inputs}, opt(v), create_graph, strict, false);
  return {out, res[0]};
}
std::pair<Tensor, std::vector<Tensor>> vhp(const ListToTensorFunction& func, const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& v, bool create_graph, bool strict) {
  return detail::hvp_vhp(false, wrap(func), inputs, v, create_graph, strict, true);
}

}  // namespace wick::autograd::functional
