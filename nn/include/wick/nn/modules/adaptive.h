#pragma once
// AdaptiveLogSoftmaxWithLoss (torch.nn.AdaptiveLogSoftmaxWithLoss, LibTorch's
// torch::nn::AdaptiveLogSoftmaxWithLoss): the efficient softmax approximation of Grave et al.,
// a head over the frequent classes and one cluster token per tail cluster, each cluster a
// two-layer projection (Note [AdaptiveLogSoftmaxWithLoss], nn/src/modules_adaptive_log_softmax.cpp).
// LibTorch has no F:: function for it, and neither does wick.
#include <cstdint>
#include <string>
#include <vector>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/modules/container.h"
#include "wick/nn/modules/linear.h"

namespace wick::nn {

/// AdaptiveLogSoftmaxWithLoss's options, as LibTorch's:
/// `AdaptiveLogSoftmaxWithLossOptions(64, 1000, {100, 500}).div_value(2.).head_bias(true)`.
struct AdaptiveLogSoftmaxWithLossOptions {
  AdaptiveLogSoftmaxWithLossOptions(int64_t in_features, int64_t n_classes, std::vector<int64_t> cutoffs)
      : in_features_(in_features), n_classes_(n_classes), cutoffs_(std::move(cutoffs)) {}
  WICK_ARG(int64_t, in_features);
  WICK_ARG(int64_t, n_classes);
  /// Increasing, unique, in [1, n_classes - 1]: the first cluster starts at cutoffs[0].
  WICK_ARG(std::vector<int64_t>, cutoffs);
  /// Cluster i's hidden size is floor(in_features / div_value^(i + 1)).
  WICK_ARG(double, div_value) = 4.;
  WICK_ARG(bool, head_bias) = false;
};

/// forward's result: the target's log-probability per example ([N], or 0-d for a 0-d target)
/// and the loss, their negated mean. LibTorch's `loss` is a double; wick's is a 0-d tensor in
/// the graph (PyTorch's Python module returns one too), so `out.loss.backward()` trains the
/// module; `out.loss.item<double>()` is LibTorch's number.
struct ASMoutput {
  ASMoutput(Tensor output_, Tensor loss_) : output(std::move(output_)), loss(std::move(loss_)) {}
  Tensor output;
  Tensor loss;
};

/// head: Linear(in_features, shortlist_size + n_clusters, bias = head_bias); tail: a ModuleList of
/// Sequential(Linear(in_features, hsz_i, bias = false), Linear(hsz_i, osz_i, bias = false)), one
/// per cluster, as PyTorch 1.13 (so state_dict names match: head.weight, tail.0.0.weight, ...).
/// ValueError for cutoffs that are not unique, increasing and within [1, n_classes - 1].
class AdaptiveLogSoftmaxWithLossImpl : public Cloneable<AdaptiveLogSoftmaxWithLossImpl> {
 public:
  explicit AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions options, TensorOptions tensor_options = {});
  AdaptiveLogSoftmaxWithLossImpl(int64_t in_features, int64_t n_classes, std::vector<int64_t> cutoffs)
      : AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions(in_features, n_classes, std::move(cutoffs))) {}
  /// input [N, in_features] with an int64 target [N] in [0, n_classes), or input [in_features]
  /// with a 0-d target. IndexError for a target out of range, ValueError for shapes, TypeError
  /// for dtypes.
  ASMoutput forward(const Tensor& input, const Tensor& target);
  /// The generic call: (input, target) -> the tuple (output, loss).
  Value forward_value(const std::vector<Value>& args) override;
  /// The log-probabilities of every class: input [N, in_features] -> [N, n_classes].
  Tensor log_prob(const Tensor& input);
  /// The most probable class per example (int64 [N]), log_prob(input).argmax(1) computed from the
  /// head alone where a shortlist class wins there.
  Tensor predict(const Tensor& input);
  /// The full log-probabilities from input and head(input) (LibTorch's _get_full_log_prob).
  Tensor get_full_log_prob(const Tensor& input, const Tensor& head_output);
  /// Re-draws every Linear's parameters.
  void reset_parameters();

  LinearImpl& head() const { return child(head_); }
  ModuleListImpl& tail() const { return child(tail_); }
  const AdaptiveLogSoftmaxWithLossOptions& options() const { return options_; }
  /// The cutoffs with n_classes appended, as LibTorch's member.
  const std::vector<int64_t>& cutoffs() const { return cutoffs_; }
  int64_t shortlist_size() const { return cutoffs_.front(); }
  int64_t n_clusters() const { return static_cast<int64_t>(cutoffs_.size()) - 1; }
  int64_t head_size() const { return shortlist_size() + n_clusters(); }

 private:
  AdaptiveLogSoftmaxWithLossOptions options_;
  std::vector<int64_t> cutoffs_;
  ChildSlot<LinearImpl> head_;
  ChildSlot<ModuleListImpl> tail_;
};
WICK_MODULE(AdaptiveLogSoftmaxWithLoss);

}  // namespace wick::nn
