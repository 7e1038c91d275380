#pragma once
// Transforms, as LibTorch's torch::data::transforms: a BatchTransform maps a whole batch, a
// Transform maps each example of a vector batch, a TensorTransform maps an Example's data tensor
// (its target passes through). Lambda, BatchLambda and TensorLambda wrap a function.
//
//   dataset.map(transforms::Lambda<Example<>>([](Example<> e) { e.data = e.data * 2; return e; }))
//   dataset.map(transforms::TensorLambda<>([](Tensor x) { return x.flatten(); }))
#include <functional>
#include <utility>
#include <vector>

#include "wick/core/tensor.h"
#include "wick/nn/data/example.h"

namespace wick::data::transforms {

/// Maps a batch of type InputBatch to one of type OutputBatch.
template <typename InputBatch, typename OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;

  virtual ~BatchTransform() = default;
  /// The transformed batch.
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

/// Maps each example of a std::vector batch.
template <typename Input, typename Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;

  /// One transformed example.
  virtual OutputType apply(InputType input) = 0;

  /// apply() on every example, in order.
  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> output_batch;
    output_batch.reserve(input_batch.size());
    for (auto&& input : input_batch) output_batch.push_back(apply(std::move(input)));
    return output_batch;
  }
};

/// A Transform that calls a function on each example.
template <typename Input, typename Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit Lambda(FunctionType function) : function_(std::move(function)) {}
  Output apply(Input input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

/// A BatchTransform that calls a function on each batch.
template <typename Input, typename Output = Input>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit BatchLambda(FunctionType function) : function_(std::move(function)) {}
  Output apply_batch(Input input_batch) override { return function_(std::move(input_batch)); }

 private:
  FunctionType function_;
};

/// Maps the data tensor of each Example<Tensor, Target>; the target is kept as it is.
template <typename Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;
  /// The transformed data tensor.
  virtual Tensor operator()(Tensor input) = 0;
  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

/// A TensorTransform that calls a function on each data tensor.
template <typename Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<Tensor(Tensor)>;
  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}
  Tensor operator()(Tensor input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

}  // namespace wick::data::transforms
