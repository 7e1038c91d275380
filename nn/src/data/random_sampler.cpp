// samplers::RandomSampler: a permutation per epoch from wick's global generator.
#include "wick/nn/data/random_sampler.h"

#include <algorithm>
#include <numeric>

#include "shuffle.h"
#include "wick/core/error.h"
#include "wick/core/generator.h"

namespace wick::data::samplers {

RandomSampler::RandomSampler(int64_t size) {
  WICK_CHECK(size >= 0, "RandomSampler: size must be >= 0, got {}", size);
  reset(static_cast<size_t>(size));
}

void RandomSampler::reset(std::optional<size_t> new_size) {
  indices_.resize(new_size.value_or(indices_.size()));
  std::iota(indices_.begin(), indices_.end(), size_t{0});
  // One number from the global generator seeds this epoch's shuffle (shuffle.h).
  const RandomDraw d = reserve_random(1);
  detail::shuffle_in_place(indices_, math::random_bits(d.seed, d.offset));
  index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  WICK_CHECK(batch_size > 0, "RandomSampler::next: batch_size must be > 0, got 0");
  if (index_ >= indices_.size()) return std::nullopt;
  const size_t n = std::min(batch_size, indices_.size() - index_);
  std::vector<size_t> out(indices_.begin() + static_cast<std::ptrdiff_t>(index_),
                          indices_.begin() + static_cast<std::ptrdiff_t>(index_ + n));
  index_ += n;
  return out;
}

}  // namespace wick::data::samplers
