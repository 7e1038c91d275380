// AdaptiveLogSoftmaxWithLoss.
//
// Note [AdaptiveLogSoftmaxWithLoss]
// PyTorch 1.13's module, step for step: the classes [0, cutoffs[0]) are the head's shortlist; the
// classes [cutoffs[i], cutoffs[i + 1]) form cluster i, which the head scores as one extra class
// (shortlist_size + i) and a tail projection scores within. forward picks, per example, the
// head's log-probability of its class (or of its cluster) and adds, for a clustered target, the
// cluster's log-probability of the target within it; the rows of each cluster are gathered with
// argwhere and the results placed with index_copy and index_fill, so the whole forward is one
// differentiable graph (the loss too: Note on ASMoutput in adaptive.h) and runs on every device.
// Targets are checked before anything is computed (IndexError, naming the range found), where
// PyTorch first runs the clusters and then compares the rows it used. log_prob concatenates the
// shortlist's log-probabilities and each cluster's plus its head score; predict takes the head's
// argmax and recomputes the full distribution only for the rows whose argmax is a cluster.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/nn/modules/adaptive.h"

namespace wick::nn {

AdaptiveLogSoftmaxWithLossImpl::AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions options,
                                                               TensorOptions tensor_options)
    : options_(std::move(options)) {
  const std::vector<int64_t>& c = options_.cutoffs();
  const int64_t n_classes = options_.n_classes(), in = options_.in_features();
  bool ok = !c.empty();
  for (size_t i = 0; ok && i < c.size(); ++i) ok = c[i] > 0 && c[i] <= n_classes - 1 && (i == 0 || c[i] > c[i - 1]);
  WICK_CHECK(ok,
             "AdaptiveLogSoftmaxWithLoss: cutoffs [{}] should be a sequence of unique, positive integers sorted in "
             "an increasing order, where each value is between 1 and n_classes-1 (n_classes = {})",
             fmt::join(c, ", "), n_classes);
  WICK_CHECK(in > 0, "AdaptiveLogSoftmaxWithLoss: in_features must be > 0, got {}", in);
  WICK_CHECK(options_.div_value() > 0, "AdaptiveLogSoftmaxWithLoss: div_value must be > 0, got {}",
             options_.div_value());
  cutoffs_ = c;
  cutoffs_.push_back(n_classes);
  head_ = register_module(
      "head", std::make_shared<LinearImpl>(LinearOptions(in, head_size()).bias(options_.head_bias()), tensor_options));
  auto tail = std::make_shared<ModuleListImpl>();
  for (int64_t i = 0; i < n_clusters(); ++i) {
    const auto hsz = static_cast<int64_t>(std::floor(static_cast<double>(in) / std::pow(options_.div_value(), i + 1)));
    const int64_t osz = cutoffs_[static_cast<size_t>(i + 1)] - cutoffs_[static_cast<size_t>(i)];
    tail->push_back(std::make_shared<SequentialImpl>(
        std::make_shared<LinearImpl>(LinearOptions(in, hsz).bias(false), tensor_options),
        std::make_shared<LinearImpl>(LinearOptions(hsz, osz).bias(false), tensor_options)));
  }
  tail_ = register_module("tail", tail);
}

ASMoutput AdaptiveLogSoftmaxWithLossImpl::forward(const Tensor& input_, const Tensor& target_) {
  const char* op = "AdaptiveLogSoftmaxWithLoss";
  WICK_CHECK(input_.defined() && target_.defined(), "{}: input and target must be defined", op);
  WICK_CHECK_TYPE(target_.dtype() == kInt64, "{}: target must be int64 class indices, got {}", op, target_.dtype());
  WICK_CHECK_TYPE(input_.is_floating_point(), "{}: input must be float32 or float64, got {}", op, input_.dtype());
  WICK_CHECK(input_.device() == target_.device(), "{}: input is on {} but target is on {}", op, input_.device(),
             target_.device());
  const int64_t in = options_.in_features();
  if (target_.dim() == 1) {
    WICK_CHECK(input_.dim() == 2 && input_.size(0) == target_.size(0) && input_.size(1) == in,
               "{}: a 1-d target {} expects input [{}, {}], got {}", op, detail::shape_str(target_), target_.size(0),
               in, detail::shape_str(input_));
  } else {
    WICK_CHECK(target_.dim() == 0, "{}: expects a 0-d or 1-d target, got {} (multi-target is not supported)", op,
               detail::shape_str(target_));
    WICK_CHECK(input_.dim() == 1 && input_.size(0) == in, "{}: a 0-d target expects input [{}], got {}", op, in,
               detail::shape_str(input_));
  }
  const bool batched = target_.dim() > 0;
  const Tensor input = batched ? input_ : input_.unsqueeze(0);
  const Tensor target = batched ? target_ : target_.unsqueeze(0);
  const int64_t n = target.size(0);
  if (n > 0) {
    const auto lo = target.min().item<int64_t>(), hi = target.max().item<int64_t>();
    WICK_CHECK_INDEX(lo >= 0 && hi < options_.n_classes(),
                     "{}: target values should be in [0, {}], but values in range [{}, {}] were found", op,
                     options_.n_classes() - 1, lo, hi);
  }
  Tensor output = zeros({n}, TensorOptions(input.dtype()).device(input.device()));
  Tensor gather_inds = target;
  for (int64_t i = 1; i <= n_clusters(); ++i) {
    const int64_t low = cutoffs_[static_cast<size_t>(i - 1)], high = cutoffs_[static_cast<size_t>(i)];
    const Tensor rows = argwhere(logical_and(target.ge(Scalar(low)), target.lt(Scalar(high)))).reshape({-1});
    if (rows.numel() == 0) continue;
    const Tensor relative = target.index_select(0, rows).sub(Scalar(low));
    const Tensor cluster_output = tail().at<SequentialImpl>(i - 1)->forward(input.index_select(0, rows));
    gather_inds = index_fill(gather_inds, 0, rows, Scalar(shortlist_size() + i - 1));
    const Tensor local = log_softmax(cluster_output, 1).gather(1, relative.unsqueeze(1)).squeeze(1);
    output = index_copy(output, 0, rows, local);
  }
  const Tensor head_logprob = log_softmax(head().forward(input), 1);
  output = output + head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze(1);
  Tensor loss = output.neg().mean();
  return ASMoutput(batched ? output : output.squeeze(0), loss);
}

Value AdaptiveLogSoftmaxWithLossImpl::forward_value(const std::vector<Value>& args) {
  WICK_CHECK(args.size() == 2, "AdaptiveLogSoftmaxWithLoss: forward takes (input, target), got {} arguments",
             args.size());
  ASMoutput out = forward(args[0].tensor(), args[1].tensor());
  return Value::tuple({Value(out.output), Value(out.loss)});
}

Tensor AdaptiveLogSoftmaxWithLossImpl::get_full_log_prob(const Tensor& input, const Tensor& head_output) {
  const Tensor head_logprob = log_softmax(head_output, 1);
  std::vector<Tensor> parts{head_logprob.narrow(1, 0, shortlist_size())};
  for (int64_t i = 0; i < n_clusters(); ++i) {
    const Tensor cluster_logprob = log_softmax(tail().at<SequentialImpl>(i)->forward(input), 1);
    parts.push_back(cluster_logprob + head_logprob.narrow(1, shortlist_size() + i, 1));
  }
  return cat(parts, 1);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::log_prob(const Tensor& input) {
  WICK_CHECK(input.defined() && input.dim() == 2 && input.size(1) == options_.in_features(),
             "AdaptiveLogSoftmaxWithLoss::log_prob: expects input [N, {}], got {}", options_.in_features(),
             input.defined() ? detail::shape_str(input) : "an undefined tensor");
  return get_full_log_prob(input, head().forward(input));
}

Tensor AdaptiveLogSoftmaxWithLossImpl::predict(const Tensor& input) {
  WICK_CHECK(input.defined() && input.dim() == 2 && input.size(1) == options_.in_features(),
             "AdaptiveLogSoftmaxWithLoss::predict: expects input [N, {}], got {}", options_.in_features(),
             input.defined() ? detail::shape_str(input) : "an undefined tensor");
  const Tensor head_output = head().forward(input);
  const Tensor output = head_output.argmax(1);
  const Tensor not_in_shortlist = output.ge(Scalar(shortlist_size()));
  const Tensor rows = argwhere(not_in_shortlist).reshape({-1});
  if (rows.numel() == 0) return output;
  if (rows.numel() == output.numel()) return get_full_log_prob(input, head_output).argmax(1);
  const Tensor log_prob = get_full_log_prob(input.index_select(0, rows), head_output.index_select(0, rows));
  return index_copy(output, 0, rows, log_prob.argmax(1));
}

void AdaptiveLogSoftmaxWithLossImpl::reset_parameters() {
  head().reset_parameters();
  for (size_t i = 0; i < tail().size(); ++i) {
    const auto seq = tail().at<SequentialImpl>(static_cast<int64_t>(i));
    seq->at<LinearImpl>(0)->reset_parameters();
    seq->at<LinearImpl>(1)->reset_parameters();
  }
}

}  // namespace wick::nn
