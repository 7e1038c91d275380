// Module::clone: a deep copy of a module tree (LibTorch's Cloneable::clone).
#include <unordered_map>

#include "wick/autograd/grad_mode.h"
#include "wick/core/native.h"
#include "wick/nn/module.h"

namespace wick::nn {

std::shared_ptr<Module> Module::clone(std::optional<Device> device) const {
  NoGradGuard no_grad;
  // Every module once, in pre-order; a child registered twice is copied once.
  const auto originals = modules();
  std::unordered_map<const Module*, std::shared_ptr<Module>> copy_of;
  copy_of.reserve(originals.size());
  for (const auto& m : originals) copy_of.emplace(m.get(), m->shallow_copy());
  // Every tensor once, into fresh storage; a tied tensor is copied once.
  std::unordered_map<const TensorImpl*, Tensor> tensor_of;
  auto copy_tensor = [&](const Tensor& t) -> Tensor {
    if (!t.defined()) return t;
    auto it = tensor_of.find(t.impl());
    if (it != tensor_of.end()) return it->second;
    Tensor c = device && t.device() != *device ? native::to(t, *device, t.dtype()) : native::clone(t);
    if (t.requires_grad()) c.requires_grad_(true);
    return tensor_of.emplace(t.impl(), std::move(c)).first->second;
  };
  for (const auto& m : originals) {
    Module& c = *copy_of.at(m.get());
    for (size_t k = 0; k < c.parameters_.size(); ++k) c.parameters_[k].value = copy_tensor(m->parameters_[k].value);
    for (size_t k = 0; k < c.buffers_.size(); ++k) c.buffers_[k].value = copy_tensor(m->buffers_[k].value);
    for (size_t k = 0; k < c.children_.size(); ++k) {
      const auto& child = m->children_[k].value;
      c.children_[k].value = child ? copy_of.at(child.get()) : nullptr;
    }
    c.bump_structure();
  }
  for (const auto& m : originals) copy_of.at(m.get())->on_replicated();
  return copy_of.at(this);
}

}  // namespace wick::nn
