// BatchNorm1d/2d, LayerNorm and Embedding: the layers with state beyond a weight and a bias.
#include <fmt/format.h>

#include "repr.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/batchnorm.h"
#include "wick/nn/modules/embedding.h"
#include "wick/nn/modules/normalization.h"

namespace wick::nn {

namespace {
TensorOptions plain(TensorOptions o) { return o.requires_grad(false); }
}  // namespace

// ---- BatchNorm ----

template <class Derived>
BatchNormBase<Derived>::BatchNormBase(int64_t num_features, double eps, std::optional<double> momentum, bool affine,
                                      bool track_running_stats, TensorOptions options)
    : num_features_(num_features),
      eps_(eps),
      momentum_(momentum),
      affine_(affine),
      track_running_stats_(track_running_stats) {
  WICK_CHECK(num_features > 0, "{}: num_features must be positive, got {}", this->name(), num_features);
  options = plain(options);
  weight_ = this->register_parameter("weight", affine ? wick::ones({num_features}, options) : Tensor());
  bias_ = this->register_parameter("bias", affine ? wick::zeros({num_features}, options) : Tensor());
  running_mean_ =
      this->register_buffer("running_mean", track_running_stats ? wick::zeros({num_features}, options) : Tensor());
  running_var_ =
      this->register_buffer("running_var", track_running_stats ? wick::ones({num_features}, options) : Tensor());
  num_batches_tracked_ = this->register_buffer(
      "num_batches_tracked",
      track_running_stats ? wick::zeros({}, TensorOptions(kInt64).device(options.device_)) : Tensor());
}

template <class Derived>
void BatchNormBase<Derived>::reset_running_stats() {
  if (!track_running_stats_) return;
  NoGradGuard no_grad;
  native::fill_(running_mean(), 0);
  native::fill_(running_var(), 1);
  native::fill_(num_batches_tracked(), 0);
}

template <class Derived>
void BatchNormBase<Derived>::reset_parameters() {
  reset_running_stats();
  if (affine_) {
    init::ones_(weight());
    init::zeros_(bias());
  }
}

template <class Derived>
Tensor BatchNormBase<Derived>::forward(const Tensor& input) {
  check_input(input);
  double factor = momentum_.value_or(0.0);
  const bool training = this->is_training();
  if (training && track_running_stats_) {
    const Tensor& nbt = num_batches_tracked();
    if (nbt.defined()) {
      NoGradGuard no_grad;
      native::binary_(BinaryOp::Add, nbt, native::scalar_tensor(int64_t{1}, kInt64, nbt.device()));
      if (!momentum_) factor = 1.0 / static_cast<double>(nbt.item<int64_t>());
    }
  }
  const bool use_batch_stats = training || (!running_mean().defined() && !running_var().defined());
  const bool pass_running = !training || track_running_stats_;
  return F::batch_norm(input, pass_running ? running_mean() : Tensor(), pass_running ? running_var() : Tensor(),
                       weight(), bias(), use_batch_stats, factor, eps_);
}

template <class Derived>
std::string BatchNormBase<Derived>::extra_repr() const {
  return fmt::format("{}, eps={}, momentum={}, affine={}, track_running_stats={}", num_features_,
                     detail::py_float(eps_), momentum_ ? detail::py_float(*momentum_) : std::string("None"),
                     detail::py_bool(affine_), detail::py_bool(track_running_stats_));
}

template class BatchNormBase<BatchNorm1d>;
template class BatchNormBase<BatchNorm2d>;

void BatchNorm1d::check_input(const Tensor& input) const {
  WICK_CHECK(input.defined() && (input.dim() == 2 || input.dim() == 3),
             "BatchNorm1d: expected 2-d or 3-d input [N, C] or [N, C, L], got {}-d input", input.dim());
}

void BatchNorm2d::check_input(const Tensor& input) const {
  WICK_CHECK(input.defined() && input.dim() == 4, "BatchNorm2d: expected 4-d input [N, C, H, W], got {}-d input",
             input.defined() ? input.dim() : 0);
}

// ---- LayerNorm ----

LayerNorm::LayerNorm(std::vector<int64_t> normalized_shape, double eps, bool elementwise_affine, bool bias,
                     TensorOptions options)
    : normalized_shape_(std::move(normalized_shape)), eps_(eps), elementwise_affine_(elementwise_affine) {
  WICK_CHECK(!normalized_shape_.empty(), "LayerNorm: normalized_shape must not be empty");
  options = plain(options);
  weight_ = register_parameter("weight", elementwise_affine ? wick::ones(normalized_shape_, options) : Tensor());
  bias_ = register_parameter("bias", elementwise_affine && bias ? wick::zeros(normalized_shape_, options) : Tensor());
}

void LayerNorm::reset_parameters() {
  if (weight().defined()) init::ones_(weight());
  if (bias().defined()) init::zeros_(bias());
}

Tensor LayerNorm::forward(const Tensor& input) {
  return F::layer_norm(input, normalized_shape_, weight(), bias(), eps_);
}

std::string LayerNorm::extra_repr() const {
  std::string shape = normalized_shape_.size() == 1 ? fmt::format("({},)", normalized_shape_[0])
                                                    : fmt::format("({})", fmt::join(normalized_shape_, ", "));
  return fmt::format("{}, eps={}, elementwise_affine={}", shape, detail::py_float(eps_),
                     detail::py_bool(elementwise_affine_));
}

// ---- Embedding ----

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx,
                     TensorOptions options)
    : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim), padding_idx_(padding_idx) {
  WICK_CHECK(num_embeddings > 0 && embedding_dim >= 0,
             "Embedding: num_embeddings ({}) must be positive and embedding_dim ({}) non-negative", num_embeddings,
             embedding_dim);
  if (padding_idx_) {
    WICK_CHECK_INDEX(*padding_idx_ < num_embeddings && *padding_idx_ >= -num_embeddings,
               "Embedding: padding_idx {} must be within num_embeddings ({})", *padding_idx_, num_embeddings);
    if (*padding_idx_ < 0) *padding_idx_ += num_embeddings;
  }
  weight_ = register_parameter("weight", wick::empty({num_embeddings, embedding_dim}, plain(options)));
  reset_parameters();
}

void Embedding::reset_parameters() {
  init::normal_(weight());
  if (padding_idx_) {
    NoGradGuard no_grad;
    native::fill_(native::select(weight(), 0, *padding_idx_), 0);
  }
}

Tensor Embedding::forward(const Tensor& indices) { return F::embedding(indices, weight(), padding_idx_); }

std::string Embedding::extra_repr() const {
  std::string s = fmt::format("{}, {}", num_embeddings_, embedding_dim_);
  if (padding_idx_) s += fmt::format(", padding_idx={}", *padding_idx_);
  return s;
}

}  // namespace wick::nn
