#pragma once
// Helpers shared by the nn tests: small test modules and a replicate-like rewiring.
#include <functional>
#include <memory>
#include <unordered_map>

#include "wick/autograd/functions.h"
#include "wick/nn/nn.h"

namespace wick::nn::test_util {

/// Shallow-copies every module reachable from `root` once (a child registered twice maps to one
/// copy) and rewires every table entry of every copy: children to their copies, tensors to
/// fn(tensor) (once per distinct tensor, so tied tensors stay tied). What replicate does, minus
/// the broadcast. Returns the copy of root.
inline std::shared_ptr<Module> rewire_copy(const std::shared_ptr<Module>& root,
                                           const std::function<Tensor(const Tensor&)>& fn) {
  std::unordered_map<const Module*, std::shared_ptr<Module>> copies;
  std::unordered_map<const TensorImpl*, Tensor> tensors;
  auto map_tensor = [&](const Tensor& t) -> Tensor {
    if (!t.defined()) return t;
    auto it = tensors.find(t.impl());
    if (it != tensors.end()) return it->second;
    Tensor n = fn(t);
    tensors.emplace(t.impl(), n);
    return n;
  };
  const auto modules = root->modules();
  for (const auto& m : modules) copies.emplace(m.get(), m->shallow_copy());
  for (const auto& m : modules) {
    auto& c = copies.at(m.get());
    for (size_t i = 0; i < c->parameter_table().size(); ++i)
      c->set_parameter_entry(i, map_tensor(c->parameter_table()[i].value));
    for (size_t i = 0; i < c->buffer_table().size(); ++i)
      c->set_buffer_entry(i, map_tensor(c->buffer_table()[i].value));
    for (size_t i = 0; i < c->child_table().size(); ++i) {
      const auto& child = c->child_table()[i].value;
      c->set_child_entry(i, child ? copies.at(child.get()) : nullptr);
    }
    c->mark_replica();
    c->on_replicated();
  }
  return copies.at(root.get());
}

/// A tensor copy on another device, keeping requires_grad.
inline Tensor moved(const Tensor& t, Device d) {
  Tensor n = t.detach().to(d);
  if (t.requires_grad()) n.requires_grad_(true);
  return n;
}

/// Gradcheck inputs: `data`, then a fresh float leaf copy of every parameter of m, in table
/// order (for modules without None parameters).
inline std::vector<Tensor> with_params(const Module& m, std::vector<Tensor> data) {
  for (const auto& e : m.parameter_table()) data.push_back(e.value.detach().clone().requires_grad_(true));
  return data;
}

/// Puts x[n_data], x[n_data + 1], ... into m's parameter table: what a gradcheck function over
/// with_params' inputs does first on each evaluation.
inline void set_params(Module& m, const std::vector<Tensor>& x, size_t n_data) {
  for (size_t i = n_data; i < x.size(); ++i) m.set_parameter_entry(i - n_data, x[i]);
}

}  // namespace wick::nn::test_util
