// checkpoint_sequential (wick/nn/checkpoint_sequential.h).
#include "wick/nn/checkpoint_sequential.h"

#include <memory>
#include <vector>

#include "wick/autograd/activation_checkpoint.h"
#include "wick/core/error.h"

namespace wick::nn {

namespace {
// Runs children [begin, end) of `children` on x, in order.
Tensor run_range(const std::vector<std::shared_ptr<Module>>& children, size_t begin, size_t end, Tensor x) {
  for (size_t i = begin; i < end; ++i) x = children[i]->forward_tensor(x);
  return x;
}
}  // namespace

Tensor checkpoint_sequential(const Sequential& seq, int64_t segments, const Tensor& input, bool preserve_rng_state) {
  return checkpoint_sequential(
      seq, segments, input,
      autograd::CheckpointOptions{.use_reentrant = true, .preserve_rng_state = preserve_rng_state});
}

Tensor checkpoint_sequential(const Sequential& seq, int64_t segments, const Tensor& input,
                             const autograd::CheckpointOptions& options) {
  WICK_CHECK(!seq.is_empty(), "checkpoint_sequential: the Sequential holder is empty; construct it first");
  const std::vector<std::shared_ptr<Module>> children(seq->begin(), seq->end());
  const auto n = static_cast<int64_t>(children.size());
  WICK_CHECK(segments >= 1 && segments <= n,
             "checkpoint_sequential: segments must be between 1 and the number of modules ({}), got {}; each segment "
             "runs at least one module",
             n, segments);
  for (int64_t i = 0; i < n; ++i)
    WICK_CHECK(children[i] != nullptr, "checkpoint_sequential: child {} of the Sequential is None", i);
  const auto size = static_cast<size_t>(n / segments);
  Tensor x = input;
  size_t end = 0;
  for (int64_t s = 0; s + 1 < segments; ++s) {
    const size_t begin = end;
    end = begin + size;
    // The children are captured by value: the recomputation in backward runs the same modules.
    x = autograd::checkpoint([children, begin, end](const Tensor& t) { return run_range(children, begin, end, t); }, x,
                             options);
  }
  return run_range(children, end, children.size(), x);
}

}  // namespace wick::nn
