#pragma once
// MapDataset: a dataset whose batches go through a transform (LibTorch's
// torch::data::datasets::MapDataset), made by `dataset.map(transform)`. Maps chain:
// `MNIST(root).map(Normalize<>(0.1307, 0.3081)).map(Stack<>())` normalizes every example, then
// stacks each batch into one Example of two tensors.
#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>

#include "wick/nn/data/dataset.h"

namespace wick::data::datasets {

template <typename SourceDataset, typename AppliedTransform>
class MapDataset
    : public BatchDataset<MapDataset<SourceDataset, AppliedTransform>, typename AppliedTransform::OutputBatchType,
                          typename SourceDataset::BatchRequestType> {
 public:
  using DatasetType = SourceDataset;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename SourceDataset::BatchRequestType;
  using OutputBatchType = typename AppliedTransform::OutputBatchType;

  MapDataset(DatasetType dataset, TransformType transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  /// The source's batch for `request`, transformed.
  OutputBatchType get_batch(BatchRequestType request) override {
    return transform_.apply_batch(dataset_.get_batch(std::move(request)));
  }
  /// The source's size.
  std::optional<size_t> size() const override { return dataset_.size(); }

  const SourceDataset& dataset() const noexcept { return dataset_; }
  const AppliedTransform& transform() const noexcept { return transform_; }

 private:
  SourceDataset dataset_;
  AppliedTransform transform_;
};

/// `dataset` with `transform` applied to its batches; the transform's input batch type must be
/// the dataset's batch type (checked at compile time).
template <typename DatasetType, typename TransformType>
MapDataset<DatasetType, TransformType> map(DatasetType dataset, TransformType transform) {
  static_assert(std::is_same_v<typename DatasetType::BatchType, typename TransformType::InputBatchType>,
                "map: the dataset's BatchType is not the transform's InputBatchType");
  return {std::move(dataset), std::move(transform)};
}

}  // namespace wick::data::datasets
