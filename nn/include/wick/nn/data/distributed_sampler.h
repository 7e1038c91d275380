#pragma once
// samplers::DistributedRandomSampler and DistributedSequentialSampler: each of num_replicas
// processes (ranks) visits its own share of the dataset, as LibTorch's.
//
// Every rank gets local_sample_count() indices: ceil(size / num_replicas) with allow_duplicates
// (the default; the last ranks wrap around to the first samples, so the ranks together cover the
// dataset and a few samples appear twice), else floor(size / num_replicas) (disjoint shares; the
// last size % num_replicas samples of the order are left out). When num_replicas divides size the
// shares are disjoint and cover the dataset exactly, either way.
//
// DistributedRandomSampler shuffles the whole index list by its epoch alone, so every rank
// computes the same permutation without talking to the others; call set_epoch(e) before each
// epoch for a new order (the loader's reset() keeps the epoch). LibTorch shuffles with
// std::mt19937(epoch) and std::shuffle; wick with its counter-based hash of the epoch (the same
// on every platform), so the orders differ from LibTorch's but the contract is the same.
//
// Bad input raises a ValueError at construction: num_replicas == 0, or rank >= num_replicas
// (LibTorch does not check).
#include <cstddef>
#include <optional>
#include <vector>

#include "wick/nn/data/sampler.h"

namespace wick::data::samplers {

/// The shared part: size, replicas, rank, epoch.
class DistributedSampler : public Sampler<> {
 public:
  DistributedSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);

  /// The epoch whose order the next reset() makes.
  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const { return epoch_; }

 protected:
  /// Indices per rank (see above).
  size_t local_sample_count() const;

  size_t size_;
  size_t num_replicas_;
  size_t rank_;
  size_t epoch_ = 0;
  bool allow_duplicates_;
};

class DistributedRandomSampler : public DistributedSampler {
 public:
  DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);

  /// This rank's share of the permutation of epoch(), from its start.
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  /// Position in this rank's share (from begin_index).
  size_t index() const noexcept { return sample_index_ - begin_index_; }

 private:
  void populate_indices();
  std::vector<size_t> all_indices_;
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
};

class DistributedSequentialSampler : public DistributedSampler {
 public:
  DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);

  /// Back to the start of this rank's contiguous share.
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return sample_index_ - begin_index_; }

 private:
  void populate_indices();
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
};

}  // namespace wick::data::samplers
