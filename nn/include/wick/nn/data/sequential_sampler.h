#pragma once
// samplers::SequentialSampler: 0, 1, ..., size - 1, as LibTorch's.
#include <cstddef>
#include <optional>
#include <vector>

#include "wick/nn/data/sampler.h"

namespace wick::data::samplers {

class SequentialSampler : public Sampler<> {
 public:
  /// A sampler over `size` samples.
  explicit SequentialSampler(size_t size) : size_(size) {}

  /// Back to index 0 (with a new size when given).
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  /// The next min(batch_size, remaining) indices in order.
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  /// How many indices this epoch has handed out.
  size_t index() const noexcept { return index_; }

 private:
  size_t size_;
  size_t index_ = 0;
};

}  // namespace wick::data::samplers
