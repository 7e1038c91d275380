#include "wick/autograd/grad.h"

#include "wick/autograd/engine.h"
#include "wick/autograd/meta.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::autograd {

namespace {
std::vector<Tensor> default_grads(const std::vector<Tensor>& outputs, const std::vector<Tensor>& given,
                                  const char* op) {
  WICK_CHECK(given.empty() || given.size() == outputs.size(), "{}: got {} outputs but {} gradients", op, outputs.size(),
             given.size());
  std::vector<Tensor> g(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!given.empty() && given[i].defined()) {
      WICK_CHECK(given[i].sizes() == outputs[i].sizes(), "{}: gradient {} has shape [{}] but output {} has shape [{}]",
                 op, i, fmt::join(given[i].sizes(), ", "), i, fmt::join(outputs[i].sizes(), ", "));
      WICK_CHECK(given[i].device() == outputs[i].device(), "{}: gradient {} is on {} but output {} is on {}", op, i,
                 given[i].device(), i, outputs[i].device());
      // A floating gradient of another precision is converted, as PyTorch does; others are refused.
      WICK_CHECK_TYPE(
          given[i].dtype() == outputs[i].dtype() || (is_floating(given[i].dtype()) && is_floating(outputs[i].dtype())),
          "{}: gradient {} is {} but output {} is {}; pass a {} gradient", op, i, given[i].dtype(), i,
          outputs[i].dtype(), outputs[i].dtype());
      g[i] = given[i].dtype() == outputs[i].dtype() ? given[i]
                                                    : native::to(given[i], given[i].device(), outputs[i].dtype());
    } else {
      WICK_CHECK(outputs[i].numel() == 1,
                 "{}: a gradient can be created implicitly only for one-element outputs, but "
                 "output {} has shape [{}]; pass a gradient",
                 op, i, fmt::join(outputs[i].sizes(), ", "));
      g[i] = native::ones(outputs[i].sizes(), outputs[i].dtype(), outputs[i].device());
    }
  }
  return g;
}
}  // namespace

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph, bool create_graph,
                         bool allow_unused) {
  WICK_CHECK(!inputs.empty(), "grad: expected at least one input");
  auto g = default_grads(outputs, grad_outputs, "grad");
  return run_backward(outputs, g, retain_graph.value_or(create_graph), create_graph, inputs, allow_unused);
}

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph) {
  auto g = default_grads(tensors, grad_tensors, "backward");
  run_backward(tensors, g, retain_graph.value_or(create_graph), create_graph, {}, false);
}

}  // namespace wick::autograd
