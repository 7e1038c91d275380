#pragma once
// The state of one backward call, shared by the threads that run its nodes
// (Note [Device-parallel backward] in engine.cpp).
#include <atomic>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "wick/autograd/node.h"
#include "wick/autograd/saved_tensors_hooks.h"
#include "wick/core/device_threads.h"

namespace wick::autograd::detail {

/// Gradients arriving at one node's inputs, summed in a fixed order whatever the order of
/// arrival (Note [Deterministic accumulation] in input_buffer.cpp).
class InputBuffer {
 public:
  /// Adds `grad` for input `input_nr`; `producer` is the sending node's sequence number and
  /// `edge` the index of its next edge that carried it (together they order the sum).
  void add(uint32_t input_nr, uint64_t producer, uint32_t edge, Tensor grad);
  /// One sum per input (at least `size` entries; undefined where nothing arrived). Under grad
  /// mode the sums are recorded (create_graph).
  variable_list sum(size_t size) &&;

 private:
  struct Piece {
    uint64_t producer;
    uint32_t edge;
    Tensor grad;
  };
  std::vector<std::vector<Piece>> slots_;
};

/// A node of the graph being run: its remaining dependencies and its input buffer.
struct NodeSlot {
  std::shared_ptr<Node> node;
  int64_t deps = 0;
  InputBuffer inputs;
};

struct GraphTask {
  bool keep_graph = false;
  bool create_graph = false;
  /// autograd::grad: capture the gradients of these (node, input_nr) pairs instead of
  /// accumulating into leaves. Read-only while nodes run.
  bool capture = false;
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;
  /// With `capture`: the nodes that have a path to a captured node, the only ones whose backward
  /// runs (Note [autograd::grad runs only what its inputs need], engine.cpp). Read-only while
  /// nodes run.
  std::unordered_set<Node*> execute;

  /// Where the caller runs nodes: its own queue, or its worker queue when the caller is a
  /// device worker (re-entrant backward). caller_device's nodes go there.
  std::shared_ptr<TaskQueue> own_queue;
  TaskQueue* local_queue = nullptr;
  Device caller_device;
  int max_workers = -1;  ///< worker threads this backward may use (-1: one per device)
  /// The backward whose node or hook started this one on the same thread (a reentrant backward),
  /// or null. It outlives this one: its node waits for this backward to end.
  GraphTask* parent = nullptr;
  /// The saved-tensor hooks in effect where backward was called; every node of this backward
  /// runs with them, on any thread (Note [Saved tensor hooks]).
  std::shared_ptr<const SavedTensorHooks> saved_tensors_hooks;
  /// The caller's current stream on each non-CPU device of the graph, read when backward starts;
  /// every node of that device runs with it current, on any thread (Note [Backward streams]).
  std::vector<std::pair<Device, uintptr_t>> caller_streams;

  std::mutex mutex;  ///< guards everything below
  std::unordered_map<Node*, NodeSlot> slots;
  variable_list captured;
  int64_t outstanding = 0;  ///< nodes queued or running
  bool done = false;
  std::exception_ptr error;
  std::vector<std::function<void()>> callbacks;
  std::map<Device, TaskQueue*> routes;
  int workers_used = 0;

  std::atomic<bool> failed{false};  ///< set with `error`; queued nodes are then skipped
};

/// Rethrows `error` (an exception raised while running `node_name` on `device`) as the same
/// wick::Error class with the node named in the message; other exceptions pass unchanged.
[[noreturn]] void rethrow_naming_node(std::exception_ptr error, const std::string& node_name, Device device);

}  // namespace wick::autograd::detail
