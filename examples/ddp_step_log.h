#pragma once
// What one DistributedDataParallel step does on this rank, as it happens: a log of the backward
// nodes the engine runs, the parameters whose gradient arrives, and the collectives DDP calls,
// in one order, and a DOT picture of it. Used by examples/tour_07_ddp.cpp (docs/tour/07-ddp.md).
//
// Everything is observed through public hooks, nothing is recomputed:
//  - RecordingGroup wraps the process group and logs every collective DDP calls on it
//    (construction's all_gathers and broadcasts, each bucket's all_reduce with its tag);
//  - a post-accumulate-grad hook on each parameter, registered before DDP's own, logs the
//    parameter the moment its .grad is ready (DDP's hook, which may launch a bucket, runs next);
//  - a pre-hook on every backward node of the loss's graph logs the node as the engine starts it.
#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "wick/distributed/distributed.h"
#include "wick/wick.h"

namespace wick::examples {

/// One thing that happened on this rank.
struct StepEvent {
  enum Kind { Collective, Node, GradReady, Launch } kind;
  std::string text;     // "broadcast [8, 3] float32", "LinearBackward", "fc3.bias", ...
  int64_t bucket = -1;  // GradReady: the parameter's bucket; Launch: the bucket launched
};

/// The events, in the order they happened (hooks may run on the engine's device threads).
class StepLog {
 public:
  void add(StepEvent e) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (on_) events_.push_back(std::move(e));
  }
  void set_on(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    on_ = on;
  }
  std::vector<StepEvent> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(events_);
  }

 private:
  std::mutex mutex_;
  bool on_ = false;
  std::vector<StepEvent> events_;
};

/// A process group that logs each collective, then hands it to the group it wraps.
class RecordingGroup : public distributed::ProcessGroup {
 public:
  RecordingGroup(std::shared_ptr<distributed::ProcessGroup> inner, std::shared_ptr<StepLog> log)
      : inner_(std::move(inner)), log_(std::move(log)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string backend_name() const override { return inner_->backend_name(); }
  std::chrono::milliseconds timeout() const override { return inner_->timeout(); }
  Device device() const override { return inner_->device(); }
  void check_operand(std::string_view op, const Tensor& t) const override { inner_->check_operand(op, t); }

  using ProcessGroup::all_reduce;
  std::shared_ptr<distributed::Work> all_reduce(const Tensor& t, distributed::ReduceOp op,
                                                const distributed::CollectiveTag& tag) override {
    log_->add({StepEvent::Launch, "all_reduce " + autograd::dot_tensor_summary(t), tag.index});
    return inner_->all_reduce(t, op, tag);
  }
  std::shared_ptr<distributed::Work> broadcast(const Tensor& t, int root) override {
    log_->add({StepEvent::Collective, "broadcast " + autograd::dot_tensor_summary(t)});
    return inner_->broadcast(t, root);
  }
  std::shared_ptr<distributed::Work> all_gather(const std::vector<Tensor>& outputs, const Tensor& input) override {
    log_->add({StepEvent::Collective, "all_gather " + autograd::dot_tensor_summary(input)});
    return inner_->all_gather(outputs, input);
  }
  std::shared_ptr<distributed::Work> barrier() override {
    log_->add({StepEvent::Collective, "barrier"});
    return inner_->barrier();
  }

 private:
  std::shared_ptr<distributed::ProcessGroup> inner_;
  std::shared_ptr<StepLog> log_;
};

/// Puts a pre-hook on every node of `root`'s backward graph except the parameters'
/// AccumulateGrad (those are logged by their post-accumulate-grad hooks): it logs the node's
/// name when the engine is about to run it. The hooks live as long as the graph.
inline void log_backward_nodes(const Tensor& root, const std::shared_ptr<StepLog>& log) {
  std::vector<std::shared_ptr<autograd::Node>> todo{root.grad_fn()}, seen;
  while (!todo.empty()) {
    auto n = todo.back();
    todo.pop_back();
    if (!n || n->name() == "AccumulateGrad" || std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
    seen.push_back(n);
    n->add_tensor_pre_hook(0, [log, name = n->name()](const Tensor&) {
      log->add({StepEvent::Node, name});
      return Tensor();  // keep the gradient as it is
    });
    for (const auto& e : n->next_edges()) todo.push_back(e.function);
  }
}

/// The picture: construction's collectives, then the step on this rank top to bottom in the
/// order it ran (left), each bucket's all_reduce beside the gradient whose hook launched it
/// (right). No clusters around the columns: rank=same across a cluster's border breaks dot's
/// layout.
inline std::string ddp_step_dot(const std::vector<StepEvent>& construction, const std::vector<StepEvent>& step,
                                int world) {
  auto q = [](const std::string& s) { return autograd::dot_quote(s); };
  int gathers = 0, broadcasts = 0;
  for (const auto& e : construction) (e.text.rfind("all_gather", 0) == 0 ? gathers : broadcasts)++;
  std::string dot =
      "digraph ddp_step {\n  rankdir=TB;\n  nodesep=0.6;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
      "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  dot += "  check [label=" +
         q("DistributedDataParallel(net, options):\n" + std::to_string(gathers) +
           " all_gather: every rank's shapes, dtypes, requires_grad agree") +
         "];\n  copy [label=" + q(std::to_string(broadcasts) + " broadcast: rank 0's parameters to every rank") +
         "];\n  check -> copy;\n";
  dot += "  fwd [label=" + q("ddp.forward(x): net(x) on this rank's rows, no communication\nloss = mse_loss(...)") +
         "];\n  copy -> fwd [label=\" training loop\"];\n";
  dot += "  head [shape=plaintext, label=" + q("loss.backward(), in the order it ran") +
         "];\n  comm [shape=plaintext, label=" +
         q("the communication thread\n(each all_reduce runs there while backward goes on)") +
         "];\n  { rank=same; head; comm; }\n  fwd -> head [style=invis];\n";
  std::string prev = "head", last_ar;
  int n = 0;
  std::string rebuild;  // the first backward's last collective (Note [Bucket rebuild])
  for (const auto& e : step) {
    if (e.kind == StepEvent::Launch && e.bucket == -2) {
      rebuild = e.text;
      continue;
    }
    if (e.kind == StepEvent::Launch) {
      // Launched from inside the hook of the gradient logged just before: drawn beside it.
      const std::string b = std::to_string(e.bucket), ar = "ar" + b;
      dot += "  " + ar + " [style=filled, fillcolor=lightblue, label=" + q("bucket " + b + ": " + e.text + " (sum)") +
             "];\n  " + prev + " -> " + ar + " [color=red, label=\"launches\"];\n  { rank=same; " + prev + "; " + ar +
             "; }\n  " + (last_ar.empty() ? "comm" : last_ar) + " -> " + ar + " [style=dotted];\n";
      last_ar = ar;
      continue;
    }
    if (e.kind != StepEvent::Node && e.kind != StepEvent::GradReady) continue;
    const std::string id = "e" + std::to_string(n++);
    if (e.kind == StepEvent::Node)
      dot += "  " + id + " [label=" + q(e.text) + "];\n";
    else
      dot += "  " + id + " [shape=ellipse, style=filled, fillcolor=lightyellow, label=" +
             q(e.text + ".grad ready: DDP's hook copies it\nx 1/" + std::to_string(world) + " into bucket " +
               std::to_string(e.bucket)) +
             "];\n";
    dot += "  " + prev + " -> " + id + (prev == "head" ? " [style=invis]" : " [weight=10]") + ";\n";
    prev = id;
  }
  dot +=
      "  end [label=" + q("end of backward (a queued callback): wait for every bucket,\ncopy the averages into .grad") +
      "];\n";
  dot += "  " + prev + " -> end [weight=10];\n";
  if (!last_ar.empty()) dot += "  " + last_ar + " -> end [style=dotted, label=\"waited for\"];\n";
  if (!rebuild.empty())
    dot += "  rebuild [style=filled, fillcolor=lightblue, label=" +
           q("first backward only: " + rebuild +
             "\nof each parameter's arrival order;\nthe buckets are rebuilt in that order, once") +
           "];\n  end -> rebuild [style=dotted];\n  { rank=same; end; rebuild; }\n";
  dot += "  opt [label=" + q("sgd.step(): the same update on every rank") + "];\n  end -> opt;\n}\n";
  return dot;
}

}  // namespace wick::examples
