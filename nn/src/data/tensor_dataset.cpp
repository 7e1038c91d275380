// datasets::TensorDataset: rows of one tensor.
#include "wick/nn/data/tensor_dataset.h"

#include <fmt/format.h>

#include <utility>

#include "wick/autograd/functions.h"
#include "wick/core/error.h"

namespace wick::data::datasets {

TensorDataset::TensorDataset(const std::vector<Tensor>& tensors) : TensorDataset(wick::stack(tensors)) {}

TensorDataset::TensorDataset(Tensor t) : tensor(std::move(t)) {
  WICK_CHECK(tensor.defined() && tensor.dim() >= 1,
             "TensorDataset: expected a defined tensor with at least one dimension (its rows are the examples)");
}

TensorExample TensorDataset::get(size_t index) {
  WICK_CHECK_INDEX(index < static_cast<size_t>(tensor.size(0)),
                   "TensorDataset::get: index {} is out of range for a dataset of {} examples (tensor of shape [{}])",
                   index, tensor.size(0), fmt::join(tensor.sizes(), ", "));
  return tensor.select(0, static_cast<int64_t>(index));
}

std::optional<size_t> TensorDataset::size() const { return static_cast<size_t>(tensor.size(0)); }

}  // namespace wick::data::datasets
