// DataLoaderOptions' checks.
#include "wick/nn/data/data_loader_options.h"

#include "wick/core/error.h"

namespace wick::data::detail {

size_t checked_max_jobs(const DataLoaderOptions& options) {
  WICK_CHECK(options.batch_size() > 0, "make_data_loader: batch_size must be > 0, got 0");
  if (options.workers() == 0) return 0;
  WICK_CHECK(options.workers() <= kMaxLoaderWorkers,
             "make_data_loader: workers must be at most {} (one thread each), got {}", kMaxLoaderWorkers,
             options.workers());
  const size_t jobs = options.max_jobs().value_or(2 * options.workers());
  WICK_CHECK(jobs > 0, "make_data_loader: max_jobs must be > 0 with {} workers, got 0", options.workers());
  return jobs;
}

}  // namespace wick::data::detail
