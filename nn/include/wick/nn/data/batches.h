#pragma once
// BatchLoader: mini-batches of (inputs, targets) tensors, optionally shuffled with a seed.
//
// The dataset is never copied per epoch: an epoch is a permutation of sample indices (or the
// identity), and each batch gathers its rows with index_select (a shuffled epoch) or is a view
// (narrow, an unshuffled one). The permutation depends only on (seed, epoch), so a run resumed
// at epoch k sees exactly the batches the uninterrupted run would have.
//
//   wick::data::BatchLoader train(split.images, split.labels, {.batch_size = 64, .shuffle = true, .seed = 1});
//   for (const auto& b : train.epoch(e)) { ... b.inputs, b.targets ... }
#include <cstdint>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::data {

struct BatchOptions {
  int64_t batch_size = 64;
  bool shuffle = false;
  uint64_t seed = 0;
  /// Leave out the last batch when it is smaller than batch_size.
  bool drop_last = false;
};

struct Batch {
  Tensor inputs;
  Tensor targets;
  int64_t index = 0;  ///< position in the epoch
};

class BatchLoader {
 public:
  /// inputs and targets must have the same size along dim 0 (> 0); batch_size > 0 (any size:
  /// INT64_MAX means one batch of everything, or none with drop_last when it exceeds N).
  BatchLoader(Tensor inputs, Tensor targets, BatchOptions options);

  /// Samples in the dataset.
  int64_t num_samples() const { return inputs_.size(0); }
  /// Batches per epoch.
  int64_t size() const;
  const BatchOptions& options() const { return options_; }

  /// The sample order of epoch `epoch` (identity without shuffle).
  std::vector<int64_t> order(int64_t epoch) const;

  class Iterator;
  /// One pass over the data: iterate it with a range-for. An Epoch holds its own handles to the
  /// dataset and its batch size (no pointer to the loader), and an Iterator its own Epoch, so
  /// both stay valid after the BatchLoader is gone: `for (auto& b : BatchLoader(x, y, o).epoch(0))`
  /// is safe.
  class Epoch {
   public:
    Iterator begin() const;
    Iterator end() const;
    int64_t size() const { return size_; }
    /// Batch i of this epoch.
    Batch batch(int64_t i) const;

   private:
    friend class BatchLoader;
    Epoch(const BatchLoader& l, Tensor perm);
    Tensor inputs_, targets_;
    Tensor perm_;  ///< int64 [N], undefined without shuffle
    int64_t batch_size_;
    int64_t size_;
  };

  class Iterator {
   public:
    const Batch& operator*() const { return current_; }
    const Batch* operator->() const { return &current_; }
    Iterator& operator++();
    bool operator!=(const Iterator& o) const { return pos_ != o.pos_; }
    bool operator==(const Iterator& o) const { return pos_ == o.pos_; }

   private:
    friend class Epoch;
    Iterator(const Epoch& e, int64_t pos);
    void load();
    Epoch epoch_;
    int64_t pos_;
    Batch current_;
  };

  /// The batches of epoch `epoch` (the permutation is made here, once).
  Epoch epoch(int64_t epoch) const;

 private:
  Tensor inputs_, targets_;
  BatchOptions options_;
};

}  // namespace wick::data
