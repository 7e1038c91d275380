#pragma once
// RemovableHandle: what a hook registration returns (torch.utils.hooks.RemovableHandle).
#include <functional>
#include <memory>

namespace wick {

/// Removes one registered hook when remove() is called. Copies share the registration;
/// removing twice, or after the hooked object is gone, does nothing. Dropping the handle does
/// not remove the hook (as PyTorch).
class RemovableHandle {
 public:
  RemovableHandle() = default;
  explicit RemovableHandle(std::function<void()> remover)
      : remover_(std::make_shared<std::function<void()>>(std::move(remover))) {}
  /// Unregisters the hook (idempotent).
  void remove() {
    if (remover_ && *remover_) {
      auto f = std::move(*remover_);
      *remover_ = nullptr;
      f();
    }
  }

 private:
  std::shared_ptr<std::function<void()>> remover_;
};

}  // namespace wick
