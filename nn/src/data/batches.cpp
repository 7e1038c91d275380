// BatchLoader: index-based epochs (a permutation per epoch, index_select per batch).
#include "wick/nn/data/batches.h"

#include <numeric>

#include "shuffle.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"
#include "wick/core/generator.h"

namespace wick::data {

BatchLoader::BatchLoader(Tensor inputs, Tensor targets, BatchOptions options)
    : inputs_(std::move(inputs)), targets_(std::move(targets)), options_(options) {
  WICK_CHECK(inputs_.defined() && targets_.defined() && inputs_.dim() >= 1 && targets_.dim() >= 1,
             "BatchLoader: inputs and targets must be defined tensors with at least one dimension");
  WICK_CHECK(inputs_.size(0) == targets_.size(0), "BatchLoader: inputs have {} samples but targets have {}",
             inputs_.size(0), targets_.size(0));
  WICK_CHECK(inputs_.size(0) > 0, "BatchLoader: the dataset is empty");
  WICK_CHECK(options_.batch_size > 0, "BatchLoader: batch_size must be > 0, got {}", options_.batch_size);
}

int64_t BatchLoader::size() const {
  const int64_t n = num_samples(), b = options_.batch_size;
  // Not (n + b - 1) / b: that overflows for a batch_size near INT64_MAX.
  return options_.drop_last ? n / b : n / b + (n % b != 0);
}

std::vector<int64_t> BatchLoader::order(int64_t epoch) const {
  std::vector<int64_t> idx(static_cast<size_t>(num_samples()));
  std::iota(idx.begin(), idx.end(), int64_t{0});
  if (!options_.shuffle) return idx;
  // The order depends only on (seed, epoch) (shuffle.h).
  detail::shuffle_in_place(idx, math::random_bits(options_.seed, static_cast<uint64_t>(epoch) ^ 0xE90C5EEDull));
  return idx;
}

BatchLoader::Epoch BatchLoader::epoch(int64_t e) const {
  if (!options_.shuffle) return Epoch(*this, Tensor());
  auto idx = order(e);
  NoGradGuard no_grad;
  return Epoch(*this, wick::from_blob(idx.data(), {static_cast<int64_t>(idx.size())},
                                      TensorOptions(kInt64).device(inputs_.device())));
}

BatchLoader::Epoch::Epoch(const BatchLoader& l, Tensor perm)
    : inputs_(l.inputs_),
      targets_(l.targets_),
      perm_(std::move(perm)),
      batch_size_(l.options_.batch_size),
      size_(l.size()) {}

BatchLoader::Iterator BatchLoader::Epoch::begin() const { return Iterator(*this, 0); }
BatchLoader::Iterator BatchLoader::Epoch::end() const { return Iterator(*this, size_); }

Batch BatchLoader::Epoch::batch(int64_t i) const {
  WICK_CHECK_INDEX(i >= 0 && i < size(), "BatchLoader: batch {} out of range (the epoch has {})", i, size());
  const int64_t b = batch_size_;
  const int64_t start = i * b, len = std::min(b, inputs_.size(0) - start);  // i < size(): no overflow
  NoGradGuard no_grad;
  Batch out;
  out.index = i;
  if (!perm_.defined()) {
    out.inputs = inputs_.narrow(0, start, len);
    out.targets = targets_.narrow(0, start, len);
  } else {
    Tensor idx = perm_.narrow(0, start, len);
    out.inputs = inputs_.index_select(0, idx);
    out.targets = targets_.index_select(0, idx);
  }
  return out;
}

BatchLoader::Iterator::Iterator(const Epoch& e, int64_t pos) : epoch_(e), pos_(pos) { load(); }

void BatchLoader::Iterator::load() {
  if (pos_ < epoch_.size())
    current_ = epoch_.batch(pos_);
  else
    current_ = Batch{};
}

BatchLoader::Iterator& BatchLoader::Iterator::operator++() {
  ++pos_;
  load();
  return *this;
}

}  // namespace wick::data
