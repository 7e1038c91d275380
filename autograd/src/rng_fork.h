#pragma once
// RngFork: a recomputation's generator state (both activation checkpoints).
#include <optional>

#include "wick/core/generator.h"

namespace wick::autograd::detail {

// Sets the generator to a forward's state for a scope and puts the caller's state back when the
// scope ends, also by an exception (PyTorch's fork_rng). Does nothing for an empty state.
class RngFork {
 public:
  explicit RngFork(const std::optional<RngState>& forward_state) {
    if (!forward_state) return;
    caller_ = get_rng_state();
    set_rng_state(*forward_state);
  }
  ~RngFork() {
    if (caller_) set_rng_state(*caller_);
  }
  RngFork(const RngFork&) = delete;
  RngFork& operator=(const RngFork&) = delete;

 private:
  std::optional<RngState> caller_;
};

}  // namespace wick::autograd::detail
