// The backward engine (docs/autograd.md, "The engine"): dependency counting, then ready nodes run on the
// thread of their device. No recursion anywhere, so graph depth is bounded by memory, not by
// the stack.
//
// Note [Device-parallel backward]
// * Every node runs on the thread of its device, Node::device() (that of its first forward
//   output; a leaf's AccumulateGrad: the leaf's device). The thread that called backward works
//   for one device, the caller device: the device of the first root's node, or, when the caller
//   is itself a device worker (backward called from a hook or a node: re-entrant), that
//   worker's device. Every other device's nodes are queued to that device's persistent worker
//   thread (Note [Device threads], core/device_threads.h), so a DataParallel backward runs on
//   every device at once. set_max_worker_threads limits the workers a backward uses; devices
//   beyond the limit run on the caller.
// * A ready queue per device: the caller's is private to this backward (or the worker's own
//   queue, when re-entrant), the others are the workers' queues. Ready nodes run newest first
//   (highest sequence number), as PyTorch.
// * Dependencies are counted once before anything runs, as before. When a node has run, its
//   thread adds each output gradient to the next node's input buffer, under the backward's
//   mutex, and queues the nodes whose count drops to zero. The buffer sums on the thread of the
//   node that consumes it, in a fixed order (Note [Deterministic accumulation]).
// * AccumulateGrad runs once per leaf and backward, after every device's contribution has
//   arrived; it takes the leaf's mutex, so concurrent backwards feeding one leaf are safe.
// * The caller runs its own queue until the backward's outstanding count (nodes queued or
//   running) reaches zero. The first exception (from a node, a hook, a shape check) is kept;
//   nodes queued after it are skipped, not run, so every thread drains quickly; the caller then
//   drops the graph task's state (input buffers, node references) and rethrows the exception,
//   naming the node. Worker threads live on for the next backward.
// * A waiting thread that is a device worker keeps running its queue, so a backward started
//   from a hook (on any thread) cannot deadlock on its own device.
// * queue_callback's callbacks run on the caller after the last node, in order.
//
// Note [autograd::grad runs only what its inputs need]
// autograd::grad (a backward with inputs to capture) runs the backward of a node only when the
// node has a path to a captured node, as PyTorch's exec_info: a node that only holds a capture
// (an input's AccumulateGrad, or the grad_fn of a non-leaf input whose own inputs lead to no
// other capture) receives its gradient, runs its tensor hooks and gives up the capture; every
// other node is left out of the graph task. So the branches that do not lead to an input run no
// hook, fill no retained .grad, keep their saved tensors for a later backward, raise no version
// error, and cost nothing: grad(D(x), {x}) no longer computes every parameter's gradient.
//
// Note [Backward streams]
// A backward's work on a device with streams is queued on the stream that was the caller's
// current stream on that device when backward() started, whichever thread runs the node: each
// node makes it current for its run (CurrentStreamScope) and the worker's own is restored after.
// So backward is ordered with the caller's surrounding work exactly like any other call, as
// parallel_apply's replicas are (Note [parallel_apply threads]). Without this, nodes run on a
// device worker went to that thread's default stream, which a non-blocking pool stream does not
// wait for: under a StreamGuard, they could read activations not yet written. PyTorch goes
// further and runs each node on the stream of its forward; wick asks the forward and the
// backward to run under the same current stream, or the caller to order them (Event).
#include "wick/autograd/engine.h"

#include <atomic>
#include <optional>
#include <unordered_set>
#include <utility>

#include "anomaly_check.h"
#include "graph_task.h"
#include "hooks_internal.h"
#include "wick/autograd/anomaly.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/meta.h"
#include "wick/core/backend.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/core/trace.h"

namespace wick::autograd {

namespace {

using detail::GraphTask;
using detail::InputBuffer;
using detail::NodeSlot;

std::atomic<int> g_max_workers{-1};
thread_local GraphTask* t_current_task = nullptr;  // the backward whose node or callback runs here

constexpr uint64_t kRootProducer = UINT64_MAX;  // root gradients sort as the newest producer

struct CurrentTask {
  explicit CurrentTask(GraphTask* t) : prev(std::exchange(t_current_task, t)) {}
  ~CurrentTask() { t_current_task = prev; }
  GraphTask* prev;
};

// Sums one more gradient into `slot` (retain_grad of a tensor that already has .grad).
void accumulate(Tensor& slot, const Tensor& g) {
  if (!g.defined()) return;
  if (!slot.defined())
    slot = g;
  else if (GradMode::is_enabled())
    slot = wick::add(slot, g);
  else
    slot = native::binary(BinaryOp::Add, slot, g);
}

// The queue that runs nodes of device d (caller holds gt.mutex).
TaskQueue* route(GraphTask& gt, Device d) {
  if (d == gt.caller_device || gt.max_workers == 0) return gt.local_queue;
  if (auto it = gt.routes.find(d); it != gt.routes.end()) return it->second;
  TaskQueue* q = nullptr;
  if (gt.max_workers < 0 || gt.workers_used < gt.max_workers) {
    q = device_threads::queue(d);  // nullptr: no thread for d; its nodes run on the caller's queue
    if (q == gt.local_queue) q = nullptr;
    if (q) ++gt.workers_used;
  }
  if (!q) q = gt.local_queue;
  gt.routes.emplace(d, q);
  return q;
}

void run_node_task(const std::shared_ptr<GraphTask>& gt, std::shared_ptr<Node> node, InputBuffer inputs);

// Queues ready nodes (their slots already removed; outstanding already counted).
void schedule(const std::shared_ptr<GraphTask>& gt, std::vector<NodeSlot>& ready) {
  for (NodeSlot& s : ready) {
    TaskQueue* q;
    {
      std::lock_guard<std::mutex> lock(gt->mutex);
      q = route(*gt, s.node->device());
    }
    const uint64_t priority = s.node->sequence_nr();
    q->push({priority, [gt, node = std::move(s.node), inputs = std::move(s.inputs)]() mutable {
               run_node_task(gt, std::move(node), std::move(inputs));
             }});
  }
  ready.clear();
}

void finish_one(GraphTask& gt) {
  std::lock_guard<std::mutex> lock(gt.mutex);
  if (--gt.outstanding == 0) {
    gt.done = true;
    gt.local_queue->push({UINT64_MAX, {}});  // wake the caller
  }
}

// Keeps in gt.slots only the nodes that have a path to a captured node (gt.execute) or hold a
// capture themselves, and counts dependencies again over the edges between kept nodes that run
// (Note [autograd::grad runs only what its inputs need]). Iterative post-order: no recursion.
void prune_to_captures(GraphTask& gt) {
  std::unordered_set<Node*> seen, keep;
  for (const auto& [start, unused] : gt.slots) {
    if (!seen.insert(start).second) continue;
    std::vector<std::pair<Node*, size_t>> stack{{start, 0}};
    while (!stack.empty()) {
      Node* n = stack.back().first;
      const auto& edges = n->next_edges();
      if (size_t& i = stack.back().second; i < edges.size()) {
        Node* c = edges[i++].function.get();
        if (c && seen.insert(c).second) stack.push_back({c, 0});
        continue;
      }
      bool runs = false;
      for (const Edge& e : edges) runs = runs || (e.valid() && keep.count(e.function.get()));
      if (runs) gt.execute.insert(n);
      if (runs || gt.captures.count(n)) keep.insert(n);
      stack.pop_back();
    }
  }
  for (auto it = gt.slots.begin(); it != gt.slots.end();) {
    if (keep.count(it->first)) {
      it->second.deps = 0;
      ++it;
    } else {
      it = gt.slots.erase(it);
    }
  }
  for (Node* n : gt.execute)
    for (const Edge& e : n->next_edges())
      if (e.valid())
        if (auto it = gt.slots.find(e.function.get()); it != gt.slots.end()) ++it->second.deps;
}

// Runs node n on its incoming gradients and hands its outputs on.
void evaluate(const std::shared_ptr<GraphTask>& gt_ptr, const std::shared_ptr<Node>& node, InputBuffer&& inputs) {
  GraphTask& gt = *gt_ptr;
  Node* n = node.get();
  auto trace_event = profiler::RecordScope::named("backward", [n] { return n->name(); });  // Note [Tracer]
  if (trace_event.active()) [[unlikely]] {
    trace_event.set_args(fmt::format("\"sequence_nr\": {}", n->sequence_nr()));
    profiler::finish_flow(n->trace_flow());
  }
  CurrentTask current(&gt);
  AutoGradMode mode(gt.create_graph);
  SavedTensorsHooksScope saved_hooks(gt.saved_tensors_hooks);
  DeviceGuard guard(n->device());
  std::optional<CurrentStreamScope> stream;  // Note [Backward streams]
  for (const auto& [device, handle] : gt.caller_streams)
    if (device == n->device()) stream.emplace(device, handle);
  variable_list grads = std::move(inputs).sum(n->num_outputs());

  detail::run_tensor_hooks(*n, grads);  // Note [Gradient hooks]
  for (const auto& [nr, weak] : n->retained()) {
    if (auto impl = weak.lock(); impl && nr < grads.size() && grads[nr].defined()) {
      AutogradMeta& m = ensure_meta(Tensor(impl));
      // A copy, under create_graph a differentiable one: grads[nr] also goes on to the next nodes.
      Tensor g = wick::clone(grads[nr]);
      std::lock_guard<std::mutex> lock(m.mutex);
      accumulate(m.grad, g);
    }
  }
  if (gt.capture) {
    if (auto it = gt.captures.find(n); it != gt.captures.end()) {
      std::lock_guard<std::mutex> lock(gt.mutex);
      for (auto [input_nr, idx] : it->second)
        if (input_nr < grads.size() && grads[input_nr].defined()) gt.captured[idx] = grads[input_nr];
    }
    // A node kept only for its capture: nothing below it leads to another input.
    if (!gt.execute.count(n)) return;
  }

  variable_list outs;
  if (auto* acc = dynamic_cast<AccumulateGrad*>(n)) {
    // A leaf that stopped requiring grad since the graph was recorded gets nothing, and its
    // post-accumulate hooks do not run (PyTorch's AccumulateGrad).
    if (!gt.capture && !grads.empty() && grads[0].defined() && acc->variable().requires_grad()) {
      acc->apply(std::move(grads));
      detail::run_post_accumulate_grad_hooks(*acc);
    }
  } else {
    bool any = false;
    for (auto& g : grads) any = any || g.defined();
    if (any) outs = n->apply(std::move(grads));
    if (AnomalyMode::is_enabled()) detail::check_anomaly(*n, outs);  // Note [Anomaly mode]
    if (!gt.keep_graph) n->release_variables();
  }

  const auto& edges = n->next_edges();
  for (size_t i = 0; i < edges.size() && i < outs.size(); ++i) {
    const Edge& e = edges[i];
    if (!e.valid() || !outs[i].defined()) continue;
    // A formula that returns a gradient of the wrong shape is a bug in that formula; catch it
    // here, naming the node, instead of corrupting a .grad (as PyTorch's validate_outputs).
    Node* next = e.function.get();
    if (e.input_nr >= next->num_outputs()) continue;
    const OutputMeta& want = next->output_meta(e.input_nr);
    WICK_CHECK(outs[i].sizes() == IntArrayRef(want.sizes),
               "{} returned a gradient of shape [{}] for its input {}, but that input has shape [{}]", n->name(),
               fmt::join(outs[i].sizes(), ", "), i, fmt::join(want.sizes, ", "));
    // Another device is a bug in the formula too (PyTorch: "invalid gradient ... expected device"),
    // but for a 0-dim input; another floating dtype is converted, as PyTorch's validate_outputs.
    WICK_CHECK(outs[i].device() == want.device || want.sizes.empty(),
               "{} returned a gradient on {} for its input {}, but that input is on {}; return it on the input's "
               "device",
               n->name(), outs[i].device(), i, want.device);
    if (outs[i].dtype() != want.dtype || outs[i].device() != want.device) {
      WICK_CHECK_TYPE(is_floating(outs[i].dtype()) && is_floating(want.dtype),
                      "{} returned a {} gradient for its input {}, but that input is {}; return a {} gradient",
                      n->name(), outs[i].dtype(), i, want.dtype, want.dtype);
      outs[i] = wick::to(outs[i], want.device, want.dtype);  // recorded only under create_graph
    }
  }
  std::vector<NodeSlot> ready;
  {
    std::lock_guard<std::mutex> lock(gt.mutex);
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid()) continue;
      auto it = gt.slots.find(e.function.get());
      if (it == gt.slots.end()) continue;  // cannot happen: every reachable node has a slot
      NodeSlot& slot = it->second;
      if (i < outs.size() && outs[i].defined())
        slot.inputs.add(e.input_nr, n->sequence_nr(), static_cast<uint32_t>(i), std::move(outs[i]));
      if (--slot.deps == 0) {
        ready.push_back(std::move(slot));
        gt.slots.erase(it);
      }
    }
    gt.outstanding += static_cast<int64_t>(ready.size());
  }
  schedule(gt_ptr, ready);
}

void run_node_task(const std::shared_ptr<GraphTask>& gt, std::shared_ptr<Node> node, InputBuffer inputs) {
  if (!gt->failed.load(std::memory_order_acquire)) {
    try {
      evaluate(gt, node, std::move(inputs));
    } catch (...) {
      std::exception_ptr err = std::current_exception();
      std::string name = node->name();
      const Device device = node->device();
      try {
        detail::rethrow_naming_node(err, name, device);
      } catch (...) {
        err = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(gt->mutex);
      if (!gt->error) gt->error = err;
      gt->failed.store(true, std::memory_order_release);
    }
  }
  inputs = InputBuffer();
  node.reset();  // drop this thread's references before the caller may return
  finish_one(*gt);
}

// Runs the caller's queue until every node of gt has run (or been skipped after a failure).
void drive(GraphTask& gt) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(gt.mutex);
      if (gt.done) return;
    }
    gt.local_queue->run_one();
  }
}

}  // namespace

void set_max_worker_threads(int n) {
  WICK_CHECK(n >= -1, "set_max_worker_threads: expected -1 (one per device), 0 (none) or a positive count, got {}", n);
  g_max_workers.store(n);
}

int max_worker_threads() { return g_max_workers.load(); }

namespace {
// Queues `callback` on the backward running on this thread or, with `outermost`, on the one
// that started it (following GraphTask::parent).
void queue_on_task(std::function<void()> callback, bool outermost, const char* op) {
  GraphTask* gt = t_current_task;
  WICK_CHECK_STATE(gt != nullptr,
                   "{}: no backward is running on this thread; call it from a hook or a node during "
                   "backward",
                   op);
  while (outermost && gt->parent != nullptr) gt = gt->parent;
  std::lock_guard<std::mutex> lock(gt->mutex);
  gt->callbacks.push_back(std::move(callback));
}
}  // namespace

void queue_callback(std::function<void()> callback) { queue_on_task(std::move(callback), false, "queue_callback"); }

void queue_callback_outermost(std::function<void()> callback) {
  queue_on_task(std::move(callback), true, "queue_callback_outermost");
}

bool task_should_compute(const Edge& e) {
  if (!e.valid()) return false;
  const GraphTask* gt = t_current_task;
  if (gt == nullptr || !gt->capture) return true;
  // Read-only while nodes run: no lock. A node runs when it leads to an input, or holds one.
  Node* n = e.function.get();
  return gt->execute.count(n) > 0 || gt->captures.count(n) > 0;
}

bool is_checkpoint_valid() {
  const GraphTask* gt = t_current_task;
  return gt == nullptr || !gt->capture;
}

variable_list run_backward(const variable_list& roots, const variable_list& grad_roots, bool keep_graph,
                           bool create_graph, const variable_list& inputs, bool allow_unused) {
  WICK_CHECK(roots.size() == grad_roots.size(), "backward: got {} tensors but {} gradients", roots.size(),
             grad_roots.size());
  AutoGradMode mode(create_graph);

  auto gt = std::make_shared<GraphTask>();
  gt->keep_graph = keep_graph;
  gt->create_graph = create_graph;
  gt->max_workers = g_max_workers.load();
  gt->parent = t_current_task;
  gt->saved_tensors_hooks = current_saved_tensors_hooks();

  // A graph root that gathers the user's gradients into the real roots.
  std::vector<Edge> root_edges;
  for (size_t i = 0; i < roots.size(); ++i) {
    Edge e = gradient_edge(roots[i]);
    WICK_CHECK_STATE(e.valid(),
                     "backward: tensor {} does not require grad and has no grad_fn; call requires_grad_() on "
                     "the leaves you want gradients for",
                     i);
    root_edges.push_back(e);
  }

  // Gradients to capture instead of accumulating (autograd::grad).
  gt->capture = !inputs.empty();
  gt->captured.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    Edge e = gradient_edge(inputs[i]);
    WICK_CHECK_STATE(e.valid(), "grad: input {} does not require grad", i);
    gt->captures[e.function.get()].push_back({e.input_nr, i});
  }

  // Count dependencies (iterative DFS). Every reachable node gets a slot.
  std::vector<Node*> stack;
  for (auto& e : root_edges) {
    auto [it, fresh] = gt->slots.try_emplace(e.function.get());
    if (fresh) {
      it->second.node = e.function;
      stack.push_back(e.function.get());
    }
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges()) {
      if (!e.valid()) continue;
      auto [it, fresh] = gt->slots.try_emplace(e.function.get());
      ++it->second.deps;
      if (fresh) {
        it->second.node = e.function;
        stack.push_back(e.function.get());
      }
    }
  }
  if (gt->capture) prune_to_captures(*gt);  // Note [autograd::grad runs only what its inputs need]
  // The caller's streams on the graph's devices that have them (Note [Backward streams]).
  for (const auto& [node, slot] : gt->slots) {
    const Device d = node->device();
    if (d.is_cpu()) continue;
    bool seen = false;
    for (const auto& entry : gt->caller_streams) seen = seen || entry.first == d;
    if (!seen) gt->caller_streams.emplace_back(d, backend(d).current_stream(d));
  }
  std::vector<NodeSlot> ready;
  for (size_t i = 0; i < root_edges.size(); ++i)
    if (auto it = gt->slots.find(root_edges[i].function.get()); it != gt->slots.end())  // not pruned
      it->second.inputs.add(root_edges[i].input_nr, kRootProducer, static_cast<uint32_t>(i), grad_roots[i]);
  for (const Edge& e : root_edges) {
    auto it = gt->slots.find(e.function.get());
    if (it != gt->slots.end() && it->second.deps == 0) {
      ready.push_back(std::move(it->second));
      gt->slots.erase(it);
    }
  }

  // Where the caller works (Note [Device-parallel backward]).
  if (TaskQueue* own = device_threads::current_worker_queue()) {
    gt->local_queue = own;
    gt->caller_device = *device_threads::current_worker_device();
  } else {
    gt->own_queue = std::make_shared<TaskQueue>();
    gt->local_queue = gt->own_queue.get();
    gt->caller_device = root_edges.empty() ? kCPU : root_edges.front().function->device();
  }

  if (!ready.empty()) {
    gt->outstanding = static_cast<int64_t>(ready.size());
    schedule(gt, ready);
    drive(*gt);
  }

  // Every node has run or been skipped: release what is left of the graph.
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(gt->mutex);
    error = std::move(gt->error);  // only this thread may hold it: the exception dies here
    gt->error = nullptr;
    gt->slots.clear();
  }
  if (error) std::rethrow_exception(error);

  // End-of-backward callbacks, on this thread; they may queue more.
  {
    CurrentTask current(gt.get());
    for (;;) {
      std::vector<std::function<void()>> callbacks;
      {
        std::lock_guard<std::mutex> lock(gt->mutex);
        callbacks.swap(gt->callbacks);
      }
      if (callbacks.empty()) break;
      for (auto& cb : callbacks) cb();
    }
  }

  if (gt->capture) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      WICK_CHECK(gt->captured[i].defined() || allow_unused,
                 "grad: input {} was not used to compute the outputs; pass "
                 "allow_unused=true to get an undefined gradient for it",
                 i);
    }
  }
  return gt->captured;
}

}  // namespace wick::autograd
