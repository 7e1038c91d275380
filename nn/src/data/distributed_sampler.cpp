// samplers::DistributedRandomSampler and DistributedSequentialSampler: each rank's share of the
// dataset (LibTorch's algorithm; the shuffle is wick's, driven by the epoch alone).
#include "wick/nn/data/distributed_sampler.h"

#include <algorithm>
#include <numeric>

#include "shuffle.h"
#include "wick/core/error.h"
#include "wick/core/generator.h"

namespace wick::data::samplers {

namespace {
// Salt of the distributed shuffle's stream (any constant: every rank uses the same one).
constexpr uint64_t kDistributedShuffleSeed = 0xD157A11EDull;
}  // namespace

DistributedSampler::DistributedSampler(size_t size, size_t num_replicas, size_t rank, bool allow_duplicates)
    : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates) {
  WICK_CHECK(num_replicas > 0, "DistributedSampler: num_replicas must be > 0, got 0");
  WICK_CHECK(rank < num_replicas,
             "DistributedSampler: rank {} is out of range for {} replicas; ranks are 0 to num_replicas - 1", rank,
             num_replicas);
}

size_t DistributedSampler::local_sample_count() const {
  // Not (size + n - 1) / n, which overflows near SIZE_MAX.
  return size_ / num_replicas_ + (allow_duplicates_ && size_ % num_replicas_ != 0);
}

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank, bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  reset(size_);
}

void DistributedRandomSampler::populate_indices() {
  const size_t local = local_sample_count();
  const size_t count = std::max(size_, local * num_replicas_);
  all_indices_.resize(size_);
  std::iota(all_indices_.begin(), all_indices_.end(), size_t{0});
  // With allow_duplicates the list is padded with the first samples, cycling through them when
  // there are fewer samples than replicas, so every rank gets `local`.
  for (size_t i = size_; i < count; ++i) all_indices_.push_back((i - size_) % size_);
  begin_index_ = rank_ * local;
  end_index_ = begin_index_ + local;
  sample_index_ = begin_index_;
}

void DistributedRandomSampler::reset(std::optional<size_t> new_size) {
  size_ = new_size.value_or(size_);
  populate_indices();
  detail::shuffle_in_place(all_indices_, math::random_bits(kDistributedShuffleSeed, epoch_));
  sample_index_ = begin_index_;
}

std::optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
  WICK_CHECK(batch_size > 0, "DistributedRandomSampler::next: batch_size must be > 0, got 0");
  if (sample_index_ >= end_index_) return std::nullopt;
  const size_t end = sample_index_ + std::min(batch_size, end_index_ - sample_index_);
  std::vector<size_t> out(all_indices_.begin() + static_cast<std::ptrdiff_t>(sample_index_),
                          all_indices_.begin() + static_cast<std::ptrdiff_t>(end));
  sample_index_ = end;
  return out;
}

DistributedSequentialSampler::DistributedSequentialSampler(size_t size, size_t num_replicas, size_t rank,
                                                           bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  populate_indices();
}

void DistributedSequentialSampler::populate_indices() {
  begin_index_ = rank_ * local_sample_count();
  end_index_ = begin_index_ + local_sample_count();
  sample_index_ = begin_index_;
}

void DistributedSequentialSampler::reset(std::optional<size_t> new_size) {
  size_ = new_size.value_or(size_);
  populate_indices();
}

std::optional<std::vector<size_t>> DistributedSequentialSampler::next(size_t batch_size) {
  WICK_CHECK(batch_size > 0, "DistributedSequentialSampler::next: batch_size must be > 0, got 0");
  if (sample_index_ >= end_index_) return std::nullopt;
  const size_t end = sample_index_ + std::min(batch_size, end_index_ - sample_index_);
  std::vector<size_t> out(end - sample_index_);
  std::iota(out.begin(), out.end(), sample_index_);
  // With allow_duplicates the last ranks run past the end and wrap around to the first samples.
  for (size_t& i : out) i %= size_;
  sample_index_ = end;
  return out;
}

}  // namespace wick::data::samplers
