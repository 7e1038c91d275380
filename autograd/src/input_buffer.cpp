// InputBuffer (graph_task.h).
//
// Note [Deterministic accumulation]
// Floating-point addition is not associative, so a sum of gradients depends on its order. With
// several device threads, gradients reach a node in an order that changes from run to run. The
// buffer therefore keeps every piece with its producer's sequence number and edge index, and
// sums when the node runs: latest producer first (the order in which a single thread, running
// the newest node first, would have produced them), then by edge. The bits of every gradient
// are thus the same on every run and with any number of worker threads, including none
// (autograd::set_max_worker_threads(0)); tests/autograd/engine_threads_test.cpp compares them.
// The root gradients count as the latest producer, in root order.
#include <algorithm>

#include "graph_task.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/native.h"

namespace wick::autograd::detail {

void InputBuffer::add(uint32_t input_nr, uint64_t producer, uint32_t edge, Tensor grad) {
  if (!grad.defined()) return;
  if (slots_.size() <= input_nr) slots_.resize(input_nr + 1);
  slots_[input_nr].push_back(Piece{producer, edge, std::move(grad)});
}

variable_list InputBuffer::sum(size_t size) && {
  variable_list out(std::max(size, slots_.size()));
  const bool record = GradMode::is_enabled();
  for (size_t i = 0; i < slots_.size(); ++i) {
    auto& pieces = slots_[i];
    if (pieces.empty()) continue;
    if (pieces.size() > 1) {
      std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
        return a.producer != b.producer ? a.producer > b.producer : a.edge < b.edge;
      });
    }
    Tensor acc = std::move(pieces[0].grad);
    for (size_t k = 1; k < pieces.size(); ++k)
      acc = record ? wick::add(acc, pieces[k].grad) : native::binary(BinaryOp::Add, acc, pieces[k].grad);
    out[i] = std::move(acc);
  }
  slots_.clear();
  return out;
}

}  // namespace wick::autograd::detail
