// transforms::Stack: examples -> one example of stacked tensors.
#include "wick/nn/data/stack.h"

#include <utility>

#include "wick/autograd/functions.h"

namespace wick::data::transforms {

Example<> Stack<Example<>>::apply_batch(std::vector<Example<>> examples) {
  std::vector<Tensor> data, targets;
  data.reserve(examples.size());
  targets.reserve(examples.size());
  for (auto& e : examples) {
    data.push_back(std::move(e.data));
    targets.push_back(std::move(e.target));
  }
  return {wick::stack(data), wick::stack(targets)};
}

TensorExample Stack<TensorExample>::apply_batch(std::vector<TensorExample> examples) {
  std::vector<Tensor> data;
  data.reserve(examples.size());
  for (auto& e : examples) data.push_back(std::move(e.data));
  return wick::stack(data);
}

}  // namespace wick::data::transforms
