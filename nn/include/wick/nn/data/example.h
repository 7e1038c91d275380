#pragma once
// Example<Data, Target>: one sample of a dataset, as LibTorch's torch::data::Example.
//
//   wick::data::Example<> e{image, label};   // e.data, e.target
//   wick::data::TensorExample t{row};        // data only (Target = example::NoTarget)
#include <utility>

#include "wick/core/tensor.h"

namespace wick::data {

namespace example {
/// The Target of an Example that has none (LibTorch's torch::data::example::NoTarget).
using NoTarget = void;
}  // namespace example

/// A data value and its target.
template <typename Data = Tensor, typename Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;

  Example() = default;
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}

  Data data;
  Target target;
};

/// An Example with data only; converts from and to its Data.
template <typename Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;

  Example() = default;
  /* implicit */ Example(Data data) : data(std::move(data)) {}  // NOLINT(google-explicit-constructor)

  // NOLINTNEXTLINE(google-explicit-constructor)
  operator Data&() { return data; }
  // NOLINTNEXTLINE(google-explicit-constructor)
  operator const Data&() const { return data; }

  Data data;
};

/// The example of a TensorDataset: one tensor, no target.
using TensorExample = Example<Tensor, example::NoTarget>;

}  // namespace wick::data
