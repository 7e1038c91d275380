#include "wick/autograd/meta.h"

#include "view_tracking.h"
#include "wick/core/error.h"

namespace wick::autograd {

AutogradMeta* get_meta(const Tensor& t) {
  if (!t.defined()) return nullptr;
  return static_cast<AutogradMeta*>(t.impl()->autograd_meta.get());
}

AutogradMeta& ensure_meta(const Tensor& t) {
  WICK_CHECK(t.defined(), "autograd: undefined tensor");
  auto& slot = t.impl()->autograd_meta;
  if (!slot) slot = std::make_unique<AutogradMeta>();
  return *static_cast<AutogradMeta*>(slot.get());
}

bool requires_grad(const Tensor& t) {
  // A view whose base gained a history after the view was made derives its grad_fn first, or
  // its uses and in-place ops would go unrecorded (Note [Views and in-place ops]).
  const AutogradMeta* m = detail::fresh_meta(t);
  return m && (m->requires_grad || m->grad_fn);
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = detail::fresh_meta(t);  // Note [Views and in-place ops]
  if (!m) return {};
  if (m->grad_fn) return Edge{m->grad_fn, m->output_nr};
  if (!m->requires_grad) return {};
  std::lock_guard<std::mutex> lock(m->mutex);
  std::shared_ptr<Node> acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    m->grad_accumulator = acc;
  }
  return Edge{acc, 0};
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  AutogradMeta& m = ensure_meta(t);
  std::shared_ptr<Node> old = std::move(m.grad_fn);
  m.grad_fn = node;
  m.output_nr = output_nr;
  m.requires_grad = false;
  node->set_output_meta(output_nr, t);
  detail::follow_retained_grad(t, m, old);
}

void detail::follow_retained_grad(const Tensor& t, AutogradMeta& m, const std::shared_ptr<Node>& old) {
  if (!m.retains_grad || old == m.grad_fn) return;
  if (old) old->forget_retained(t.impl());
  if (m.grad_fn) m.grad_fn->retain_grad_of(m.output_nr, t);
}

}  // namespace wick::autograd
