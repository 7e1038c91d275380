#pragma once
// detail::CopyBack: an RAII guard that copies saved values back into tensors, for LBFGS.step
// (Note [LBFGS state]): a step whose closure throws leaves its parameters as they were.
#include <vector>

#include "wick/autograd/grad_mode.h"
#include "wick/core/tensor.h"

namespace wick::optim::detail {

/// On destruction, unless dismissed, copies saved[i] into targets[i] (without recording a graph).
/// Both vectors must outlive the guard and match in shapes; a copy that fails is ignored, since a
/// destructor never throws (copies between tensors of one shape, dtype and device do not fail).
class CopyBack {
 public:
  CopyBack(const std::vector<Tensor>& targets, const std::vector<Tensor>& saved) : targets_(targets), saved_(saved) {}
  CopyBack(const CopyBack&) = delete;
  CopyBack& operator=(const CopyBack&) = delete;
  ~CopyBack() {
    if (dismissed_) return;
    try {
      NoGradGuard no_grad;
      for (size_t i = 0; i < targets_.size() && i < saved_.size(); ++i) {
        Tensor t = targets_[i];
        t.copy_(saved_[i]);
      }
    } catch (...) {
    }
  }
  /// Keeps the targets as they are at destruction.
  void dismiss() { dismissed_ = true; }

 private:
  const std::vector<Tensor>& targets_;
  const std::vector<Tensor>& saved_;
  bool dismissed_ = false;
};

}  // namespace wick::optim::detail
