#pragma once
// DataLoaderOptions, as LibTorch's torch::data::DataLoaderOptions:
//
//   make_data_loader(dataset, DataLoaderOptions().batch_size(64).workers(2).drop_last(true))
//   make_data_loader(dataset, 64)   // implicit from a batch size
//
// batch_size (default 1, LibTorch's) must be > 0; max_jobs (the batch requests in flight, default
// 2 * workers) must be > 0 when there are workers, and workers at most kMaxLoaderWorkers (a
// ValueError from make_data_loader otherwise).
// LibTorch's `timeout` option is not there (a worker's get_batch that never returns blocks the
// loop, as it does in LibTorch without a timeout).
#include <cstddef>
#include <optional>

#include "wick/nn/arg.h"

namespace wick::data {

struct DataLoaderOptions {
  DataLoaderOptions() = default;
  /* implicit */ DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}  // NOLINT

  /// Samples per batch.
  WICK_ARG(size_t, batch_size) = 1;
  /// Worker threads that produce batches (0: the loop's own thread does).
  WICK_ARG(size_t, workers) = 0;
  /// Batch requests queued to the workers at once (default 2 * workers).
  WICK_ARG(std::optional<size_t>, max_jobs);
  /// With workers: batches arrive in the sampler's order (true) or as workers finish them.
  WICK_ARG(bool, enforce_ordering) = true;
  /// Leave out the last batch of an epoch when it is smaller than batch_size.
  WICK_ARG(bool, drop_last) = false;
};

/// The most worker threads a loader starts (make_data_loader refuses more with a ValueError).
inline constexpr size_t kMaxLoaderWorkers = 1024;

namespace detail {
/// Checks `options` (Note above) and returns the effective max_jobs (0 without workers).
size_t checked_max_jobs(const DataLoaderOptions& options);
}  // namespace detail

}  // namespace wick::data
