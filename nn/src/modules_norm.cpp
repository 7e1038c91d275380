// NormBase (BatchNorm's and InstanceNorm's state), BatchNorm1d/2d/3d, LayerNorm and GroupNorm:
// the layers with state beyond a weight and a bias. InstanceNorm's forward: modules_instance_norm.cpp.
#include <fmt/format.h>

#include "repr.h"
#include "shape_text.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/batchnorm.h"
#include "wick/nn/modules/instancenorm.h"
#include "wick/nn/modules/normalization.h"

namespace wick::nn {

namespace {
TensorOptions plain(TensorOptions o) { return o.requires_grad(false); }

std::string momentum_repr(std::optional<double> momentum) {
  return momentum ? detail::py_float(*momentum) : std::string("None");
}
}  // namespace

// ---- NormBase ----

template <class Derived, class Options>
NormBase<Derived, Options>::NormBase(const Options& options, TensorOptions tensor_options) : options_(options) {
  const int64_t num_features = options.num_features();
  const bool affine = options.affine(), track_running_stats = options.track_running_stats();
  WICK_CHECK(num_features > 0, "{}: num_features must be positive, got {}", this->name(), num_features);
  tensor_options = plain(tensor_options);
  weight_ = this->register_parameter("weight", affine ? wick::ones({num_features}, tensor_options) : Tensor());
  bias_ = this->register_parameter("bias", affine ? wick::zeros({num_features}, tensor_options) : Tensor());
  running_mean_ = this->register_buffer("running_mean",
                                        track_running_stats ? wick::zeros({num_features}, tensor_options) : Tensor());
  running_var_ =
      this->register_buffer("running_var", track_running_stats ? wick::ones({num_features}, tensor_options) : Tensor());
  num_batches_tracked_ = this->register_buffer(
      "num_batches_tracked",
      track_running_stats ? wick::zeros({}, TensorOptions(kInt64).device(tensor_options.device_)) : Tensor());
}

template <class Derived, class Options>
void NormBase<Derived, Options>::reset_running_stats() {
  if (!options_.track_running_stats()) return;
  NoGradGuard no_grad;
  native::fill_(running_mean(), 0);
  native::fill_(running_var(), 1);
  native::fill_(num_batches_tracked(), 0);
}

template <class Derived, class Options>
void NormBase<Derived, Options>::reset_parameters() {
  reset_running_stats();
  if (options_.affine()) {
    init::ones_(weight());
    init::zeros_(bias());
  }
}

template <class Derived, class Options>
std::string NormBase<Derived, Options>::extra_repr() const {
  const auto& o = options_;
  return fmt::format("{}, eps={}, momentum={}, affine={}, track_running_stats={}", o.num_features(),
                     detail::py_float(o.eps()), momentum_repr(o.momentum()), detail::py_bool(o.affine()),
                     detail::py_bool(o.track_running_stats()));
}

template class NormBase<BatchNorm1dImpl, BatchNormOptions>;
template class NormBase<BatchNorm2dImpl, BatchNormOptions>;
template class NormBase<BatchNorm3dImpl, BatchNormOptions>;
template class NormBase<InstanceNorm1dImpl, InstanceNormOptions>;
template class NormBase<InstanceNorm2dImpl, InstanceNormOptions>;
template class NormBase<InstanceNorm3dImpl, InstanceNormOptions>;

// ---- BatchNorm ----

template <class Derived>
Tensor BatchNormBase<Derived>::forward(const Tensor& input) {
  // Note [Synchronised batch statistics]: the sync runs the input check itself, so that a
  // refusal reaches every process.
  const bool synced = sync_ && this->is_training() && sync_->world_size() > 1;
  if (!synced) this->check_input(input);
  const BatchNormOptions& o = this->options();
  const std::optional<double> momentum = o.momentum();
  const bool track_running_stats = o.track_running_stats();
  double factor = momentum.value_or(0.0);
  const bool training = this->is_training();
  const Tensor& nbt = this->num_batches_tracked();
  const bool count_batch = training && track_running_stats && nbt.defined();
  // The factor uses the count this batch makes; the count itself moves only once F::batch_norm
  // has accepted the input, so a refused input (one value per channel, wrong channels or dtype)
  // changes no state.
  if (count_batch && !momentum) factor = 1.0 / (static_cast<double>(nbt.item<int64_t>()) + 1.0);
  const Tensor &rmean = this->running_mean(), &rvar = this->running_var();
  const bool use_batch_stats = training || (!rmean.defined() && !rvar.defined());
  const bool pass_running = !training || track_running_stats;
  Tensor out;
  if (synced) {
    nn::BatchNormSyncCall call;
    call.layer = this->name();
    call.check_input = [this](const Tensor& x) { this->check_input(x); };
    call.num_features = o.num_features();
    call.running_mean = pass_running ? rmean : Tensor();
    call.running_var = pass_running ? rvar : Tensor();
    call.weight = this->weight();
    call.bias = this->bias();
    call.momentum = factor;
    call.eps = o.eps();
    out = sync_->forward(input, call);
  } else {
    out = F::batch_norm(input, pass_running ? rmean : Tensor(), pass_running ? rvar : Tensor(), this->weight(),
                        this->bias(), use_batch_stats, factor, o.eps());
  }
  if (count_batch) {
    NoGradGuard no_grad;
    native::binary_(BinaryOp::Add, nbt, native::scalar_tensor(int64_t{1}, kInt64, nbt.device()));
  }
  return out;
}

template class BatchNormBase<BatchNorm1dImpl>;
template class BatchNormBase<BatchNorm2dImpl>;
template class BatchNormBase<BatchNorm3dImpl>;

void BatchNorm1dImpl::check_input(const Tensor& input) const {
  WICK_CHECK(input.defined() && (input.dim() == 2 || input.dim() == 3),
             "BatchNorm1d: expected 2-d or 3-d input [N, C] or [N, C, L], got {}-d input", input.dim());
}

void BatchNorm2dImpl::check_input(const Tensor& input) const {
  WICK_CHECK(input.defined() && input.dim() == 4, "BatchNorm2d: expected 4-d input [N, C, H, W], got {}-d input",
             input.defined() ? input.dim() : 0);
}

// PyTorch's words, then the layout and the shape.
void BatchNorm3dImpl::check_input(const Tensor& input) const {
  WICK_CHECK(input.defined() && input.dim() == 5,
             "BatchNorm3d: expected 5D input (got {}D input); it takes [N, C, D, H, W], got {}",
             input.defined() ? input.dim() : 0, detail::shape_str(input));
}

// ---- LayerNorm ----

LayerNormImpl::LayerNormImpl(const LayerNormOptions& options, TensorOptions tensor_options) : options_(options) {
  const auto& shape = options.normalized_shape();
  WICK_CHECK(!shape.empty(), "LayerNorm: normalized_shape must not be empty");
  tensor_options = plain(tensor_options);
  const bool affine = options.elementwise_affine();
  weight_ = register_parameter("weight", affine ? wick::ones(shape, tensor_options) : Tensor());
  bias_ = register_parameter("bias", affine && options.bias() ? wick::zeros(shape, tensor_options) : Tensor());
}

void LayerNormImpl::reset_parameters() {
  if (weight().defined()) init::ones_(weight());
  if (bias().defined()) init::zeros_(bias());
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return F::layer_norm(input, options_.normalized_shape(), weight(), bias(), options_.eps());
}

std::string LayerNormImpl::extra_repr() const {
  const auto& ns = options_.normalized_shape();
  std::string shape = ns.size() == 1 ? fmt::format("({},)", ns[0]) : fmt::format("({})", fmt::join(ns, ", "));
  return fmt::format("{}, eps={}, elementwise_affine={}", shape, detail::py_float(options_.eps()),
                     detail::py_bool(options_.elementwise_affine()));
}

// ---- GroupNorm ----

GroupNormImpl::GroupNormImpl(const GroupNormOptions& options, TensorOptions tensor_options) : options_(options) {
  const int64_t groups = options.num_groups(), channels = options.num_channels();
  WICK_CHECK(groups > 0 && channels > 0 && channels % groups == 0,
             "GroupNorm: num_channels ({}) must be positive and divisible by num_groups ({}), itself positive",
             channels, groups);
  tensor_options = plain(tensor_options);
  const bool affine = options.affine();
  weight_ = register_parameter("weight", affine ? wick::ones({channels}, tensor_options) : Tensor());
  bias_ = register_parameter("bias", affine ? wick::zeros({channels}, tensor_options) : Tensor());
}

void GroupNormImpl::reset_parameters() {
  if (weight().defined()) init::ones_(weight());
  if (bias().defined()) init::zeros_(bias());
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  return F::group_norm(input, options_.num_groups(), weight(), bias(), options_.eps());
}

std::string GroupNormImpl::extra_repr() const {
  return fmt::format("{}, {}, eps={}, affine={}", options_.num_groups(), options_.num_channels(),
                     detail::py_float(options_.eps()), detail::py_bool(options_.affine()));
}

}  // namespace wick::nn
