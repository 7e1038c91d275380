#include "wick/autograd/node.h"

#include "anomaly_check.h"
#include "wick/autograd/anomaly.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/meta.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/core/trace.h"

namespace wick::autograd {

namespace {
std::atomic<uint64_t> g_next_sequence_nr{0};

// Note [Iterative graph destruction]
// Destroying the last reference to a long chain of nodes would recurse once per node and
// overflow the stack (a chain of 100 000 ops is a test case). Each dying node hands the nodes
// it alone owns to a thread-local list, and the outermost destructor releases them in a loop.
thread_local std::vector<std::shared_ptr<Node>>* g_pending = nullptr;
}  // namespace

Node::Node() : sequence_nr_(g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {
  if (AnomalyMode::is_enabled()) detail::record_anomaly_metadata(*this);  // Note [Anomaly mode]
  if (profiler::enabled()) trace_flow_ = profiler::current_flow();        // Note [Tracer]
}

Node::~Node() {
  std::vector<std::shared_ptr<Node>> local;
  const bool outermost = g_pending == nullptr;
  if (outermost) g_pending = &local;
  for (auto& e : next_edges_) {
    if (e.function && e.function.use_count() == 1) g_pending->push_back(std::move(e.function));
  }
  next_edges_.clear();
  if (outermost) {
    while (!local.empty()) {
      std::shared_ptr<Node> n = std::move(local.back());
      local.pop_back();
      n.reset();  // may push more nodes onto `local`
    }
    g_pending = nullptr;
  }
}

void Node::set_output_meta(size_t i, const Tensor& t) {
  if (outputs_.size() <= i) outputs_.resize(i + 1);
  outputs_[i] = OutputMeta{DimVector(t.sizes()), t.dtype(), t.device()};
}

Tensor Node::zeros_for_output(size_t i) const {
  const OutputMeta& m = outputs_.at(i);
  return native::zeros(m.sizes, m.dtype, m.device);
}

AccumulateGrad::AccumulateGrad(const Tensor& leaf) : leaf_(leaf.impl_ptr()) { set_output_meta(0, leaf); }

Tensor AccumulateGrad::variable() const { return Tensor(leaf_.lock()); }

namespace {
// True when nothing but g references g's TensorImpl and storage: every other tensor on the
// storage (a view, a saved copy) holds the storage too. A version counter never co-owns its
// storage (TensorImpl::own_version).
bool sole_owner(const Tensor& g) {
  const TensorImpl& impl = *g.impl();
  return g.impl_ptr().use_count() == 1 && impl.storage.use_count() == 1;
}
}  // namespace

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor leaf = variable();
  if (!leaf.defined() || grads.empty() || !grads[0].defined()) return {};
  WICK_CHECK_STATE(
      grads[0].dtype() == leaf.dtype() && grads[0].device() == leaf.device() && grads[0].sizes() == leaf.sizes(),
      "backward: a leaf is now {} [{}] on {}, but this graph computed its gradient as {} [{}] on {}: its "
      "data was replaced (Module::to() or set_data) after the graph was recorded. Run forward again",
      leaf.dtype(), fmt::join(leaf.sizes(), ", "), leaf.device(), grads[0].dtype(), fmt::join(grads[0].sizes(), ", "),
      grads[0].device());
  AutogradMeta& m = ensure_meta(leaf);
  std::lock_guard<std::mutex> lock(m.mutex);
  // A leaf that stopped requiring grad (requires_grad_(false), detach_()) after the graph was
  // recorded gets no gradient, as in PyTorch.
  if (!m.requires_grad) return {};
  Tensor g = std::move(grads[0]);
  if (!m.grad.defined()) {
    if (GradMode::is_enabled()) {
      // create_graph: a differentiable copy. g may be the caller's gradient, another leaf's
      // (add's backward hands one tensor to both inputs) or a stride-0 expand, and the next
      // backward adds into .grad in place.
      m.grad = wick::clone(g);
    } else if (sole_owner(g) && g.is_contiguous()) {
      // Nothing else references this gradient or its memory: take it as it is. Later
      // accumulation into it in place cannot be seen elsewhere (as PyTorch's AccumulateGrad).
      m.grad = std::move(g);
    } else {
      m.grad = native::clone(g);  // others may still read it (e.g. add's backward passes one
                                  // gradient to both inputs): copy
    }
  } else if (GradMode::is_enabled()) {
    m.grad = wick::add(m.grad, g);
  } else {
    native::binary_(BinaryOp::Add, m.grad, g);
  }
  return {};
}

}  // namespace wick::autograd
