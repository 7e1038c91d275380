#pragma once
// Grad mode: a thread-local switch. Ops record graph nodes only while it is on.
namespace wick {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// RAII: sets grad mode for a scope and restores the previous value.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

/// RAII: turns gradient recording off for a scope (torch::NoGradGuard).
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

}  // namespace wick
