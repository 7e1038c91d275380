#pragma once
// make_data_loader and StatelessDataLoader, as LibTorch's torch::data:
//
//   auto dataset = datasets::MNIST(root).map(transforms::Normalize<>(0.1307, 0.3081)).map(transforms::Stack<>());
//   auto loader = make_data_loader(std::move(dataset), DataLoaderOptions().batch_size(64).workers(2));
//   for (auto& batch : *loader) { ... batch.data, batch.target ... }   // one epoch per range-for
//
// make_data_loader(dataset, options) samples with a RandomSampler (LibTorch's default; choose
// another with make_data_loader<samplers::SequentialSampler>(dataset, options)), and
// make_data_loader(dataset, sampler, options) with the sampler given. Every begin() starts an
// epoch: it resets the sampler and, with workers, queues max_jobs batch requests; each batch is
// dataset.get_batch(sampler.next(batch_size)), the last one left out with drop_last when short.
//
// With workers > 0 the batches are made on worker threads (Note [Data loader threads],
// data_loader_workers.h), each with its own copy of the dataset; with enforce_ordering (the
// default) they arrive in the same order and with the same contents as with workers = 0. An
// exception thrown by get_batch on a worker is rethrown, with its own type, by the ++ (or
// begin()) that would have returned that batch. Destroying the loader mid-epoch stops and joins
// its workers. An error ends the epoch: the iterator whose ++ threw is end() (its batch was
// released first), the requests still queued are dropped, and the next begin() starts a new
// epoch. The workers run under the thread-local settings of the thread that called begin() (grad
// mode, current CPU device, flush-denormal), so they give the same bits as workers = 0.
//
// Differences from LibTorch, documented in docs/training.md ("LibTorch-style data loading"):
// begin() while an epoch is under way abandons it and starts a new one (LibTorch raises "Attempted
// to get a new DataLoader iterator while another iterator is not yet exhausted"), so `break` out
// of a loop and loop again works; sampler() gives access to the loader's sampler (for
// DistributedRandomSampler::set_epoch); there is no `timeout` option and no join().
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "wick/core/error.h"
#include "wick/nn/data/data_loader_options.h"
#include "wick/nn/data/data_loader_workers.h"
#include "wick/nn/data/random_sampler.h"

namespace wick::data {

template <typename Dataset, typename Sampler>
class StatelessDataLoader {
 public:
  using BatchType = typename Dataset::BatchType;
  using BatchRequestType = typename Sampler::BatchRequestType;

  /// Checks `options` (ValueError) and starts options.workers() threads.
  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : options_(std::move(options)),
        max_jobs_(detail::checked_max_jobs(options_)),
        dataset_(std::move(dataset)),
        sampler_(std::move(sampler)) {
    if (options_.workers() == 0) return;
    std::vector<typename detail::LoaderWorkers<BatchType>::Fetch> fetch;
    for (size_t w = 0; w < options_.workers(); ++w)  // each worker gets its own copy of the dataset
      fetch.emplace_back([ds = dataset_](std::span<const size_t> request) mutable { return ds.get_batch(request); });
    workers_ = std::make_unique<detail::LoaderWorkers<BatchType>>(std::move(fetch), options_.enforce_ordering());
  }
  StatelessDataLoader(const StatelessDataLoader&) = delete;
  StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;

  /// An input iterator over one epoch's batches; `*it` is the current batch.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = BatchType;
    using difference_type = std::ptrdiff_t;
    using pointer = BatchType*;
    using reference = BatchType&;

    BatchType& operator*() {
      WICK_CHECK_STATE(batch_.has_value(), "data loader: dereferencing the end of an epoch");
      return *batch_;
    }
    BatchType* operator->() { return &**this; }
    Iterator& operator++() {
      WICK_CHECK_STATE(batch_.has_value(), "data loader: incrementing past the end of an epoch");
      batch_.reset();
      batch_ = loader_->next();
      return *this;
    }
    /// Equal when both are at the end of the epoch (or are the same iterator).
    bool operator==(const Iterator& o) const { return this == &o || (!batch_ && !o.batch_); }
    bool operator!=(const Iterator& o) const { return !(*this == o); }

   private:
    friend class StatelessDataLoader;
    Iterator(StatelessDataLoader* loader, std::optional<BatchType> batch) : loader_(loader), batch_(std::move(batch)) {}
    StatelessDataLoader* loader_;
    std::optional<BatchType> batch_;
  };

  /// Starts an epoch (abandoning one under way) and returns its first batch.
  Iterator begin() {
    start_epoch();
    return Iterator(this, next());
  }
  /// The end of every epoch.
  Iterator end() { return Iterator(this, std::nullopt); }

  const DataLoaderOptions& options() const noexcept { return options_; }
  /// The loader's sampler (a wick addition: DistributedRandomSampler::set_epoch goes here).
  Sampler& sampler() noexcept { return sampler_; }

 private:
  void start_epoch() {
    sampler_.reset(std::nullopt);
    sent_ = received_ = 0;
    exhausted_ = false;
    if (!workers_) return;
    workers_->start_epoch();
    for (size_t i = 0; i < max_jobs_ && push_request(); ++i) {
    }
  }

  // The sampler's next request, or nullopt at the end of the epoch (and for a short last batch
  // with drop_last).
  std::optional<BatchRequestType> next_request() {
    if (exhausted_) return std::nullopt;
    auto request = sampler_.next(options_.batch_size());
    if (!request || (request->size() < options_.batch_size() && options_.drop_last())) {
      exhausted_ = true;
      return std::nullopt;
    }
    return request;
  }

  bool push_request() {
    auto request = next_request();
    if (!request) return false;
    workers_->push(sent_, std::move(*request));
    ++sent_;  // only once the request is queued: a push that throws leaves nothing to pop
    return true;
  }

  // The next batch of the epoch, or nullopt at its end. What get_batch throws is rethrown and
  // ends the epoch (the iterator that called this is then end()): later calls return nullopt,
  // and the requests still queued to the workers are dropped.
  std::optional<BatchType> next() {
    if (!workers_) {
      auto request = next_request();
      if (!request) return std::nullopt;
      try {
        return dataset_.get_batch(*request);
      } catch (...) {
        exhausted_ = true;
        throw;
      }
    }
    if (received_ == sent_) return std::nullopt;
    const uint64_t seq = received_++;
    std::optional<BatchType> out;
    try {
      out.emplace(workers_->pop(seq));
    } catch (...) {
      exhausted_ = true;
      received_ = sent_;
      workers_->start_epoch();  // drops the queued requests and the results in flight
      throw;
    }
    push_request();
    return out;
  }

  DataLoaderOptions options_;
  size_t max_jobs_;
  Dataset dataset_;  ///< the loop thread's copy (for workers = 0)
  Sampler sampler_;
  uint64_t sent_ = 0, received_ = 0;
  bool exhausted_ = false;
  std::unique_ptr<detail::LoaderWorkers<BatchType>> workers_;  ///< last: destroyed (joined) first
};

/// A loader over `dataset` in the order of `sampler`.
template <typename Dataset, typename Sampler>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, Sampler sampler,
                                                                        DataLoaderOptions options) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler),
                                                                 std::move(options));
}

/// A loader over `dataset` with a Sampler(dataset.size()) (RandomSampler by default); the dataset
/// must know its size (a ValueError otherwise).
template <typename Sampler = samplers::RandomSampler, typename Dataset,
          typename = std::enable_if_t<std::is_constructible_v<Sampler, size_t>>>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset,
                                                                        DataLoaderOptions options = {}) {
  const std::optional<size_t> size = dataset.size();
  WICK_CHECK(size.has_value(), "make_data_loader: the dataset does not know its size; pass a sampler");
  return make_data_loader(std::move(dataset), Sampler(*size), std::move(options));
}

}  // namespace wick::data
