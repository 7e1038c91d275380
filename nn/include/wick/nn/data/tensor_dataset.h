#pragma once
// datasets::TensorDataset: the rows (dim 0) of one tensor, as LibTorch's
// torch::data::datasets::TensorDataset; each example is a TensorExample (data, no target).
//
//   auto loader = make_data_loader(datasets::TensorDataset(x).map(transforms::Stack<TensorExample>()),
//                                  DataLoaderOptions().batch_size(32));
//
// For (input, target) pairs write a Dataset with get(i) returning Example<>{x[i], y[i]}, as in
// LibTorch (dataset.h shows one).
#include <cstddef>
#include <optional>
#include <vector>

#include "wick/core/tensor.h"
#include "wick/nn/data/dataset.h"

namespace wick::data::datasets {

struct TensorDataset : public Dataset<TensorDataset, TensorExample> {
  /// The rows of stack(tensors) (each of the tensors is one example).
  explicit TensorDataset(const std::vector<Tensor>& tensors);
  /// The rows of `tensor` (a defined tensor of at least one dim).
  explicit TensorDataset(Tensor tensor);

  /// tensor[index] (a view); an IndexError when index >= size().
  TensorExample get(size_t index) override;
  /// tensor.size(0).
  std::optional<size_t> size() const override;

  Tensor tensor;
};

}  // namespace wick::data::datasets
