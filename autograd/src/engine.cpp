// The backward engine (DESIGN section 3): dependency counting, then a ready queue processed in
// a loop. No recursion anywhere, so graph depth is bounded by memory, not by the stack.
#include "wick/autograd/engine.h"

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/meta.h"
#include "wick/core/backend.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::autograd {

namespace {

// Sums gradients arriving at one node input.
void accumulate(Tensor& slot, const Tensor& g) {
  if (!g.defined()) return;
  if (!slot.defined()) {
    slot = g;
  } else if (GradMode::is_enabled()) {
    slot = wick::add(slot, g);
  } else {
    slot = native::binary(BinaryOp::Add, slot, g);
  }
}

struct ByLatest {  // run the most recently created node first, as PyTorch
  bool operator()(Node* a, Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

}  // namespace

variable_list run_backward(const variable_list& roots, const variable_list& grad_roots, bool keep_graph,
                           bool create_graph, const variable_list& inputs, bool allow_unused) {
  WICK_CHECK(roots.size() == grad_roots.size(), "backward: got {} tensors but {} gradients", roots.size(),
             grad_roots.size());
  AutoGradMode mode(create_graph);

  // A graph root that gathers the user's gradients into the real roots.
  std::vector<Edge> root_edges;
  std::vector<Tensor> root_grads;
  for (size_t i = 0; i < roots.size(); ++i) {
    Edge e = gradient_edge(roots[i]);
    WICK_CHECK_STATE(e.valid(), "backward: tensor {} does not require grad and has no grad_fn; call requires_grad_() on "
               "the leaves you want gradients for", i);
    root_edges.push_back(e);
    root_grads.push_back(grad_roots[i]);
  }

  // Gradients to capture instead of accumulating (autograd::grad).
  const bool capture = !inputs.empty();
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;
  std::vector<Tensor> captured(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    Edge e = gradient_edge(inputs[i]);
    WICK_CHECK_STATE(e.valid(), "grad: input {} does not require grad", i);
    captures[e.function.get()].push_back({e.input_nr, i});
  }

  // Count dependencies (iterative DFS).
  std::unordered_map<Node*, int> deps;
  std::unordered_set<Node*> seen;
  std::vector<Node*> stack;
  for (auto& e : root_edges) {
    if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges()) {
      if (!e.valid()) continue;
      ++deps[e.function.get()];
      if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
    }
  }

  std::unordered_map<Node*, variable_list> buffers;
  std::unordered_map<Node*, std::shared_ptr<Node>> owners;  // keeps nodes alive while queued
  std::priority_queue<Node*, std::vector<Node*>, ByLatest> ready;
  for (size_t i = 0; i < root_edges.size(); ++i) {
    Node* n = root_edges[i].function.get();
    auto& buf = buffers[n];
    if (buf.size() < std::max<size_t>(n->num_outputs(), root_edges[i].input_nr + 1))
      buf.resize(std::max<size_t>(n->num_outputs(), root_edges[i].input_nr + 1));
    accumulate(buf[root_edges[i].input_nr], root_grads[i]);
    owners[n] = root_edges[i].function;
  }
  for (auto& [n, _] : owners)
    if (deps[n] == 0) ready.push(n);

  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    std::shared_ptr<Node> hold = owners[n];
    variable_list grads = std::move(buffers[n]);
    buffers.erase(n);
    owners.erase(n);
    grads.resize(std::max(grads.size(), n->num_outputs()));

    if (auto it = captures.find(n); it != captures.end()) {
      for (auto [input_nr, idx] : it->second) {
        if (input_nr < grads.size()) accumulate(captured[idx], grads[input_nr]);
      }
    }
    for (const auto& [nr, weak] : n->retained()) {
      if (auto impl = weak.lock(); impl && nr < grads.size() && grads[nr].defined()) {
        AutogradMeta& m = ensure_meta(Tensor(impl));
        accumulate(m.grad, GradMode::is_enabled() ? grads[nr] : native::clone(grads[nr]));
      }
    }
    variable_list outs;
    const bool is_accumulator = dynamic_cast<AccumulateGrad*>(n) != nullptr;
    if (is_accumulator) {
      if (!capture) n->apply(std::move(grads));
    } else {
      bool any = false;
      for (auto& g : grads) any = any || g.defined();
      if (any) {
        DeviceGuard guard(n->device());
        outs = n->apply(std::move(grads));
      }
      if (!keep_graph) n->release_variables();
    }
    const auto& edges = n->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid()) continue;
      Node* next = e.function.get();
      auto& buf = buffers[next];
      if (buf.size() < std::max<size_t>(next->num_outputs(), e.input_nr + 1))
        buf.resize(std::max<size_t>(next->num_outputs(), e.input_nr + 1));
      if (i < outs.size() && outs[i].defined()) {
        // A formula that returns a gradient of the wrong shape is a bug in that formula; catch it
        // here, naming the node, instead of corrupting a .grad (as PyTorch's validate_outputs).
        const bool known = e.input_nr < next->num_outputs();
        WICK_CHECK(!known || outs[i].sizes() == IntArrayRef(next->output_meta(e.input_nr).sizes), "{} returned a gradient of shape [{}] for its input {}, "
                   "but that input has shape [{}]", n->name(), fmt::join(outs[i].sizes(), ", "), i,
                   fmt::join(next->output_meta(e.input_nr).sizes, ", "));
        accumulate(buf[e.input_nr], outs[i]);
      }
      owners[next] = e.function;
      if (--deps[next] == 0) ready.push(next);
    }
  }

  if (capture) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      WICK_CHECK(captured[i].defined() || allow_unused, "grad: input {} was not used to compute the outputs; pass "
                 "allow_unused=true to get an undefined gradient for it", i);
    }
  }
  return captured;
}

}  // namespace wick::autograd
