#pragma once
// transforms::Stack: collates a vector of examples into one example of stacked tensors (a new
// dim 0), as LibTorch's torch::data::transforms::Stack. Stack<> (Stack<Example<>>) stacks data and
// targets; Stack<TensorExample> stacks the data of a TensorDataset's examples.
//
//   MNIST(root).map(Stack<>())   // batches of Example<>{[B, 1, 28, 28], [B]}
//
// An empty batch, or examples whose tensors differ in shape, dtype or device, raise stack's own
// errors.
#include <vector>

#include "wick/nn/data/example.h"
#include "wick/nn/data/transform.h"

namespace wick::data::transforms {

/// A BatchTransform from a vector of examples to one batch.
template <typename BatchType, typename T = std::vector<BatchType>>
using Collation = BatchTransform<T, BatchType>;

template <typename T = Example<>>
struct Stack;

/// Stacks data and targets.
template <>
struct Stack<Example<>> : public Collation<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override;
};

/// Stacks the data.
template <>
struct Stack<TensorExample> : public Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override;
};

}  // namespace wick::data::transforms
