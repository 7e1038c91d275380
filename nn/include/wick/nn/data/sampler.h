#pragma once
// samplers::Sampler: the order in which a data loader visits a dataset, as LibTorch's
// torch::data::samplers::Sampler. A data loader calls reset() at the start of every epoch and
// then next(batch_size) until it returns std::nullopt; only the loader's own thread calls them.
//
// Difference from LibTorch: no save()/load() to a serialize archive (wick has no archive type);
// a resumed run recreates its sampler (the distributed samplers depend only on their epoch, a
// RandomSampler on wick's generator, which manual_seed sets).
#include <cstddef>
#include <optional>
#include <vector>

namespace wick::data::samplers {

template <typename BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;

  virtual ~Sampler() = default;
  /// Starts over (a new epoch), for a dataset of `new_size` samples (std::nullopt: the same size).
  virtual void reset(std::optional<size_t> new_size) = 0;
  /// The next batch request of at most batch_size indices (batch_size > 0, a ValueError
  /// otherwise), or std::nullopt at the end of the epoch.
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
};

}  // namespace wick::data::samplers
