#pragma once
// transforms::Normalize: (x - mean[c]) / stddev[c] per channel, as LibTorch's
// torch::data::transforms::Normalize and torchvision's Normalize.
//
//   MNIST(root).map(transforms::Normalize<>(0.1307, 0.3081))          // one channel
//   images.map(transforms::Normalize<>({0.5, 0.4, 0.3}, {0.2, 0.2, 0.2}))
//
// The data tensor is [..., C, H, W]: its dim -3 is the channel dim. With one mean and stddev
// every channel uses them; with C of them the input must have C channels. Bad input raises
// before anything is computed: mean and stddev of different lengths, an empty list, a stddev of
// 0 (ValueError, at construction); an input with fewer than 3 dims or another channel count
// (ValueError), or an integer input (TypeError).
//
// Difference from LibTorch: LibTorch keeps mean and stddev as float32 [C, 1, 1] tensors and lets
// broadcasting decide, so a 3-channel Normalize on a 1-channel image silently gives 3 channels;
// wick checks the channel count, and computes in the input's dtype and on its device
// (torchvision's rule).
#include <utility>
#include <vector>

#include "wick/core/tensor.h"
#include "wick/nn/data/transform.h"

namespace wick::data::transforms {

namespace detail {
/// The per-channel statistics of Normalize and its checks (not a template: normalize.cpp).
class NormalizeStats {
 public:
  /// Checks the lengths match, are not empty, and every stddev is nonzero.
  NormalizeStats(std::vector<double> mean, std::vector<double> stddev);
  /// (input - mean) / stddev over dim -3 of `input` (a floating tensor of >= 3 dims).
  Tensor apply(const Tensor& input) const;
  const std::vector<double>& mean() const { return mean_; }
  const std::vector<double>& stddev() const { return stddev_; }

 private:
  std::vector<double> mean_, stddev_;
};
}  // namespace detail

template <typename Target = Tensor>
class Normalize : public TensorTransform<Target> {
 public:
  /// One mean and stddev for every channel.
  Normalize(double mean, double stddev) : stats_({mean}, {stddev}) {}
  /// One mean and stddev per channel.
  Normalize(std::vector<double> mean, std::vector<double> stddev) : stats_(std::move(mean), std::move(stddev)) {}

  /// (input - mean) / stddev, per channel.
  Tensor operator()(Tensor input) override { return stats_.apply(input); }

  const std::vector<double>& mean() const { return stats_.mean(); }
  const std::vector<double>& stddev() const { return stats_.stddev(); }

 private:
  detail::NormalizeStats stats_;
};

}  // namespace wick::data::transforms
