#pragma once
// datasets::MNIST: MNIST or Fashion-MNIST (the same IDX files), as LibTorch's
// torch::data::datasets::MNIST.
//
//   auto train = datasets::MNIST(data::kFashionMnistDir, datasets::MNIST::Mode::kTrain)
//                    .map(transforms::Normalize<>(data::kFashionMnistMean, data::kFashionMnistStd))
//                    .map(transforms::Stack<>());
//
// It reads `<root>/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz` (Debian's and torchvision's
// names) or, when the .gz file is missing, the same name without .gz (LibTorch's names), through
// load_mnist_split (idx.h): every file is checked as hostile input, the images must be 28x28,
// the counts equal and the labels in [0, 10) (FormatError naming the file otherwise); a missing
// file is an IOError that says how to install Fashion-MNIST.
//
// Examples are Example<>{image float32 [1, 28, 28] in [0, 1], label int64 []}, as LibTorch's.
#include <cstddef>
#include <optional>
#include <string>

#include "wick/core/tensor.h"
#include "wick/nn/data/dataset.h"

namespace wick::data::datasets {

class MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };

  /// Loads the training split (Mode::kTrain, "train-*") or the test split (Mode::kTest, "t10k-*")
  /// from the directory `root`.
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);

  /// {images[index], targets[index]} (views); an IndexError when index >= size().
  Example<> get(size_t index) override;
  /// The number of images.
  std::optional<size_t> size() const override;

  /// True for the training split.
  bool is_train() const noexcept { return train_; }
  /// float32 [N, 1, 28, 28], scaled to [0, 1].
  const Tensor& images() const { return images_; }
  /// int64 [N].
  const Tensor& targets() const { return targets_; }

 private:
  Tensor images_, targets_;
  bool train_;
};

}  // namespace wick::data::datasets
