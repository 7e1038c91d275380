#pragma once
// Anomaly mode (PyTorch's torch.autograd.detect_anomaly / LibTorch's DetectAnomalyGuard).
//
// Note [Anomaly mode]
// While anomaly mode is on, every backward node records where it was created: a short native
// backtrace of the forward call (the op that recorded the node and its callers). The engine
// then checks every gradient a node returns and, on the first NaN, raises a wick::ValueError
// naming the node, the input whose gradient is NaN, and the forward site (the first frame
// outside wick) with the rest of the recorded frames. Function names need the executable's
// symbols exported (CMake ENABLE_EXPORTS, -rdynamic); otherwise frames show as
// binary(+offset), which addr2line resolves. The switch is process-wide, as PyTorch's, since
// backward runs on the engine's device threads; nested guards restore the previous state. Off,
// it costs one relaxed atomic load per node created and per node run.
#include <memory>
#include <string>
#include <vector>

namespace wick::autograd {

struct AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// RAII: anomaly mode on for a scope, the previous state restored after (nests).
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard();
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
};

/// PyTorch's spelling: `autograd::detect_anomaly guard;` is `with torch.autograd.detect_anomaly():`.
using detect_anomaly = DetectAnomalyGuard;

/// Where a node was created (captured only in anomaly mode).
class AnomalyMetadata {
 public:
  /// Captures the calling thread's stack.
  static std::shared_ptr<const AnomalyMetadata> capture();
  /// The first frame outside wick and the C++ runtime: the user's call of the op.
  std::string forward_site() const;
  /// Up to `max_frames` symbolized frames, one per line, innermost first.
  std::string backtrace(size_t max_frames = 12) const;

 private:
  std::vector<void*> frames_;
};

}  // namespace wick::autograd
