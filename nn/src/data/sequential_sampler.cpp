// samplers::SequentialSampler.
#include "wick/nn/data/sequential_sampler.h"

#include <algorithm>
#include <numeric>

#include "wick/core/error.h"

namespace wick::data::samplers {

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}

std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  WICK_CHECK(batch_size > 0, "SequentialSampler::next: batch_size must be > 0, got 0");
  if (index_ >= size_) return std::nullopt;
  const size_t n = std::min(batch_size, size_ - index_);
  std::vector<size_t> out(n);
  std::iota(out.begin(), out.end(), index_);
  index_ += n;
  return out;
}

}  // namespace wick::data::samplers
