// datasets::MNIST over load_mnist_split (the checked IDX reader).
#include "wick/nn/data/mnist.h"

#include "wick/core/error.h"
#include "wick/nn/data/idx.h"

namespace wick::data::datasets {

MNIST::MNIST(const std::string& root, Mode mode) : train_(mode == Mode::kTrain) {
  // Scaled to [0, 1] only, as LibTorch's MNIST: normalization is the Normalize transform's job.
  Split s = load_mnist_split(root, train_ ? "train" : "t10k", 0.0, 1.0);
  images_ = std::move(s.images);
  targets_ = std::move(s.labels);
}

Example<> MNIST::get(size_t index) {
  WICK_CHECK_INDEX(index < static_cast<size_t>(images_.size(0)),
                   "MNIST::get: index {} is out of range for the {} split of {} images", index,
                   train_ ? "train" : "test", images_.size(0));
  const auto i = static_cast<int64_t>(index);
  return {images_.select(0, i), targets_.select(0, i)};
}

std::optional<size_t> MNIST::size() const { return static_cast<size_t>(images_.size(0)); }

}  // namespace wick::data::datasets
