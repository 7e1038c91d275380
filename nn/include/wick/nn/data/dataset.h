#pragma once
// Datasets, as LibTorch's torch::data::datasets: a BatchDataset answers a batch request (sample
// indices) with a batch; a Dataset answers get(index) with one example, and its batch is the
// vector of those examples. `.map(transform)` wraps either in a MapDataset (map_dataset.h).
//
//   struct Pairs : wick::data::datasets::Dataset<Pairs> {
//     wick::data::Example<> get(size_t i) override { return {x[i], y[i]}; }
//     std::optional<size_t> size() const override { return x.size(0); }
//     wick::Tensor x, y;
//   };
//
// A data loader with workers > 0 gives each worker thread its own copy of the dataset (as
// LibTorch does), so a dataset must be copyable and its get() must not rely on state shared
// between copies unless that state is thread-safe.
//
// One difference from LibTorch: a batch request is a std::span<const size_t> (LibTorch's
// c10::ArrayRef<size_t>; wick has no ArrayRef of its own).
#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "wick/nn/data/example.h"

namespace wick::data::datasets {

template <typename SourceDataset, typename AppliedTransform>
class MapDataset;
template <typename DatasetType, typename TransformType>
MapDataset<DatasetType, TransformType> map(DatasetType dataset, TransformType transform);

/// A dataset that produces a whole batch for a batch request. `Self` is the derived class (CRTP).
template <typename Self, typename Batch, typename BatchRequest = std::span<const size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;

  virtual ~BatchDataset() = default;

  /// The batch for `request` (its sample indices).
  virtual Batch get_batch(BatchRequest request) = 0;
  /// The number of samples (std::nullopt: unknown, which a data loader refuses).
  virtual std::optional<size_t> size() const = 0;

  /// This dataset (copied) with `transform` applied to every batch it produces.
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) & {
    return datasets::map(static_cast<Self&>(*this), std::move(transform));
  }
  /// This dataset (moved) with `transform` applied to every batch it produces.
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) && {
    return datasets::map(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

/// A dataset of single examples: derived classes implement get(index) and size().
template <typename Self, typename SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;

  /// The example at `index` (an IndexError when index >= size(), for wick's own datasets).
  virtual ExampleType get(size_t index) = 0;

  /// get(i) for every index of the request, in its order.
  std::vector<ExampleType> get_batch(std::span<const size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (const size_t i : indices) batch.push_back(get(i));
    return batch;
  }
};

}  // namespace wick::data::datasets

#include "wick/nn/data/map_dataset.h"  // IWYU pragma: export (`.map` needs MapDataset complete)
