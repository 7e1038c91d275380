// Gradient hooks (Note [Gradient hooks] in wick/autograd/hooks.h).
#include "wick/autograd/hooks.h"

#include <atomic>
#include <mutex>

#include "hooks_internal.h"
#include "wick/autograd/meta.h"
#include "wick/core/error.h"

namespace wick {

namespace {
std::atomic<uint64_t> g_next_hook_id{1};
std::mutex g_node_hooks_mutex;  // guards every Node's pre_hooks_ and retained_

template <class List>
void erase_id(List& list, uint64_t id) {
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (it->first == id) {
      list.erase(it);
      return;
    }
  }
}
}  // namespace

namespace autograd {

uint64_t Node::add_tensor_pre_hook(uint32_t output_nr, std::function<Tensor(const Tensor&)> fn) {
  const uint64_t id = g_next_hook_id.fetch_add(1);
  std::lock_guard<std::mutex> lock(g_node_hooks_mutex);
  pre_hooks_.push_back({id, output_nr, std::move(fn)});
  has_pre_hooks_.store(true, std::memory_order_release);
  return id;
}

void Node::remove_tensor_pre_hook(uint64_t id) {
  std::lock_guard<std::mutex> lock(g_node_hooks_mutex);
  for (auto it = pre_hooks_.begin(); it != pre_hooks_.end(); ++it) {
    if (it->id == id) {
      pre_hooks_.erase(it);
      break;
    }
  }
  has_pre_hooks_.store(!pre_hooks_.empty(), std::memory_order_release);
}

std::vector<Node::TensorPreHook> Node::tensor_pre_hooks() const {
  if (!has_pre_hooks_.load(std::memory_order_acquire)) return {};
  std::lock_guard<std::mutex> lock(g_node_hooks_mutex);
  return pre_hooks_;
}

void Node::retain_grad_of(uint32_t output_nr, const Tensor& t) {
  std::lock_guard<std::mutex> lock(g_node_hooks_mutex);
  retained_.push_back({output_nr, t.impl_ptr()});
  has_retained_.store(true, std::memory_order_release);
}

void Node::forget_retained(const TensorImpl* impl) {
  std::lock_guard<std::mutex> lock(g_node_hooks_mutex);
  std::erase_if(retained_,
                [impl](const RetainedGrad& r) { return r.second.expired() || r.second.lock().get() == impl; });
  has_retained_.store(!retained_.empty(), std::memory_order_release);
}

std::vector<Node::RetainedGrad> Node::retained() const {
  if (!has_retained_.load(std::memory_order_acquire)) return {};
  std::lock_guard<std::mutex> lock(g_node_hooks_mutex);
  return retained_;
}

namespace detail {

namespace {
// A hook's replacement must be a gradient of the same tensor: the engine hands it on unchecked
// (PyTorch: "hook has changed the size of value"), so a wrong one would be broadcast or blamed on
// the next node.
void apply_hook(const TensorHook& hook, Tensor& grad) {
  if (!grad.defined()) return;
  Tensor replaced = hook(grad);
  if (!replaced.defined()) return;
  WICK_CHECK(replaced.sizes() == grad.sizes() && replaced.device() == grad.device(),
             "gradient hook: the hook got a gradient of shape [{}] on {} and returned one of shape [{}] on {}; a "
             "hook must return a gradient of the same shape, dtype and device, or nothing to keep it",
             fmt::join(grad.sizes(), ", "), grad.device(), fmt::join(replaced.sizes(), ", "), replaced.device());
  WICK_CHECK_TYPE(replaced.dtype() == grad.dtype(),
                  "gradient hook: the hook got a {} gradient of shape [{}] and returned a {} one; a hook must return "
                  "a gradient of the same dtype (convert it back with .to({}))",
                  grad.dtype(), fmt::join(grad.sizes(), ", "), replaced.dtype(), grad.dtype());
  grad = std::move(replaced);
}
}  // namespace

void run_tensor_hooks(Node& n, variable_list& grads) {
  if (auto* acc = dynamic_cast<AccumulateGrad*>(&n)) {
    Tensor leaf = acc->variable();
    AutogradMeta* m = leaf.defined() ? get_meta(leaf) : nullptr;
    if (!m || grads.empty()) return;
    std::vector<std::pair<uint64_t, TensorHook>> hooks;
    {
      std::lock_guard<std::mutex> lock(m->mutex);
      hooks = m->hooks;
    }
    for (const auto& [_, h] : hooks) apply_hook(h, grads[0]);
    return;
  }
  for (const auto& h : n.tensor_pre_hooks())
    if (h.output_nr < grads.size()) apply_hook(h.fn, grads[h.output_nr]);
}

void run_post_accumulate_grad_hooks(AccumulateGrad& acc) {
  Tensor leaf = acc.variable();
  AutogradMeta* m = leaf.defined() ? get_meta(leaf) : nullptr;
  if (!m) return;
  std::vector<std::pair<uint64_t, PostAccumulateGradHook>> hooks;
  {
    std::lock_guard<std::mutex> lock(m->mutex);
    hooks = m->post_accumulate_grad_hooks;
  }
  for (const auto& [_, h] : hooks) h(leaf);
}

}  // namespace detail
}  // namespace autograd

using autograd::AutogradMeta;

RemovableHandle Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  WICK_CHECK(defined(), "register_hook: the tensor is undefined");
  WICK_CHECK(static_cast<bool>(hook), "register_hook: the hook is empty");
  WICK_CHECK_STATE(requires_grad(),
                   "register_hook: cannot register a hook on a tensor that doesn't require "
                   "gradient (call requires_grad_() on a leaf first)");
  if (std::shared_ptr<autograd::Node> fn = grad_fn()) {
    const uint64_t id = fn->add_tensor_pre_hook(autograd::get_meta(*this)->output_nr, std::move(hook));
    std::weak_ptr<autograd::Node> weak = fn;
    return RemovableHandle([weak, id] {
      if (auto node = weak.lock()) node->remove_tensor_pre_hook(id);
    });
  }
  AutogradMeta& m = autograd::ensure_meta(*this);
  const uint64_t id = g_next_hook_id.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    m.hooks.emplace_back(id, std::move(hook));
  }
  std::weak_ptr<TensorImpl> weak = impl_ptr();
  return RemovableHandle([weak, id] {
    if (auto impl = weak.lock()) {
      if (AutogradMeta* meta = autograd::get_meta(Tensor(impl))) {
        std::lock_guard<std::mutex> lock(meta->mutex);
        erase_id(meta->hooks, id);
      }
    }
  });
}

RemovableHandle Tensor::register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const {
  WICK_CHECK(defined(), "register_post_accumulate_grad_hook: the tensor is undefined");
  WICK_CHECK(static_cast<bool>(hook), "register_post_accumulate_grad_hook: the hook is empty");
  WICK_CHECK_STATE(requires_grad(),
                   "register_post_accumulate_grad_hook: cannot register a hook on a tensor that "
                   "doesn't require gradient");
  WICK_CHECK_STATE(is_leaf(),
                   "register_post_accumulate_grad_hook: post accumulate grad hooks cannot be registered "
                   "on non-leaf tensors (this one is the output of {})",
                   grad_fn()->name());
  AutogradMeta& m = autograd::ensure_meta(*this);
  const uint64_t id = g_next_hook_id.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    m.post_accumulate_grad_hooks.emplace_back(id, std::move(hook));
  }
  std::weak_ptr<TensorImpl> weak = impl_ptr();
  return RemovableHandle([weak, id] {
    if (auto impl = weak.lock()) {
      if (AutogradMeta* meta = autograd::get_meta(Tensor(impl))) {
        std::lock_guard<std::mutex> lock(meta->mutex);
        erase_id(meta->post_accumulate_grad_hooks, id);
      }
    }
  });
}

}  // namespace wick
