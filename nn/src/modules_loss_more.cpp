// The margin and likelihood loss modules (wick/nn/modules/loss_more.h): each forward is its
// functional with the options; weights are buffers, read through their slots so that to() and
// replicas see theirs.
#include "wick/core/error.h"
#include "wick/nn/modules/loss_more.h"

namespace wick::nn {

namespace {
// A weight buffer must be a tensor of a floating dtype (or None).
Tensor checked_weight(const char* module, const Tensor& w) {
  WICK_CHECK_TYPE(!w.defined() || w.is_floating_point(), "{}: weight must be float32 or float64, got {}", module,
                  w.defined() ? w.dtype() : kFloat32);
  return w;
}
}  // namespace

TripletMarginLossImpl::TripletMarginLossImpl(const TripletMarginLossOptions& options) : options_(options) {
  detail::check_reduction("TripletMarginLoss", options_.reduction());
}
Tensor TripletMarginLossImpl::forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative) {
  return F::triplet_margin_loss(anchor, positive, negative, options_.margin(), options_.p(), options_.eps(),
                                options_.swap(), options_.reduction());
}

MultiMarginLossImpl::MultiMarginLossImpl(const MultiMarginLossOptions& options)
    : options_(options), weight_(register_buffer("weight", checked_weight("MultiMarginLoss", options.weight()))) {
  detail::check_reduction("MultiMarginLoss", options_.reduction());
  WICK_CHECK(options_.p() == 1 || options_.p() == 2, "MultiMarginLoss: only p == 1 and p == 2 are supported, got {}",
             options_.p());
  WICK_CHECK(!options_.weight().defined() || options_.weight().dim() == 1,
             "MultiMarginLoss: weight must be one-dimensional (one entry per class), got {} dims",
             options_.weight().defined() ? options_.weight().dim() : 0);
}
Tensor MultiMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::multi_margin_loss(input, target, options_.p(), options_.margin(), weight(), options_.reduction());
}

MultiLabelMarginLossImpl::MultiLabelMarginLossImpl(const MultiLabelMarginLossOptions& options) : options_(options) {
  detail::check_reduction("MultiLabelMarginLoss", options_.reduction());
}
Tensor MultiLabelMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::multilabel_margin_loss(input, target, options_.reduction());
}

MultiLabelSoftMarginLossImpl::MultiLabelSoftMarginLossImpl(const MultiLabelSoftMarginLossOptions& options)
    : options_(options),
      weight_(register_buffer("weight", checked_weight("MultiLabelSoftMarginLoss", options.weight()))) {
  detail::check_reduction("MultiLabelSoftMarginLoss", options_.reduction());
}
Tensor MultiLabelSoftMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::multilabel_soft_margin_loss(input, target, weight(), options_.reduction());
}

PoissonNLLLossImpl::PoissonNLLLossImpl(const PoissonNLLLossOptions& options) : options_(options) {
  detail::check_reduction("PoissonNLLLoss", options_.reduction());
}
Tensor PoissonNLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::poisson_nll_loss(input, target, options_.log_input(), options_.full(), options_.eps(),
                             options_.reduction());
}

GaussianNLLLossImpl::GaussianNLLLossImpl(const GaussianNLLLossOptions& options) : options_(options) {
  detail::check_reduction("GaussianNLLLoss", options_.reduction());
}
Tensor GaussianNLLLossImpl::forward(const Tensor& input, const Tensor& target, const Tensor& var) {
  return F::gaussian_nll_loss(input, target, var, options_.full(), options_.eps(), options_.reduction());
}

}  // namespace wick::nn
