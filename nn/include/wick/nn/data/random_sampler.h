#pragma once
// samplers::RandomSampler: a random permutation of 0..size - 1 per epoch, as LibTorch's (which
// draws torch::randperm from the global generator).
//
// Every reset() (the constructor's and each epoch's) draws one number from wick's global
// generator (reserve_random) and shuffles with wick's counter-based hash, so after
// `wick::manual_seed(s)` a program sees the same orders on every run and platform, with any
// number of loader workers (only the loader's thread calls the sampler).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "wick/nn/data/sampler.h"

namespace wick::data::samplers {

class RandomSampler : public Sampler<> {
 public:
  /// A sampler over `size` samples (size >= 0, a ValueError otherwise); draws the first order.
  explicit RandomSampler(int64_t size);

  /// A new permutation (of `new_size` samples when given), from wick's generator.
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  /// The next min(batch_size, remaining) indices of the permutation.
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  /// How many indices this epoch has handed out.
  size_t index() const noexcept { return index_; }

 private:
  std::vector<size_t> indices_;
  size_t index_ = 0;
};

}  // namespace wick::data::samplers
