#pragma once
// EmbeddingBag (torch.nn.EmbeddingBag), with LibTorch's options and EmbeddingBag::from_pretrained.
#include <optional>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"
#include "wick/nn/module_holder.h"

namespace wick::nn {

/// EmbeddingBag's options, as LibTorch: `EmbeddingBagOptions(vocab, dim).mode(EmbeddingBagMode::Sum)`
/// (mode defaults to Mean, as PyTorch's).
struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  WICK_ARG(int64_t, num_embeddings);
  WICK_ARG(int64_t, embedding_dim);
  WICK_ARG(std::optional<double>, max_norm) = std::nullopt;
  WICK_ARG(double, norm_type) = 2.0;
  WICK_ARG(bool, scale_grad_by_freq) = false;
  WICK_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode::Mean;
  /// Must stay false: wick has no sparse gradients (NotImplementedError at construction).
  WICK_ARG(bool, sparse) = false;
  /// As EmbeddingOptions::_weight: used as the weight (shared, not copied), at construction only.
  WICK_ARG(Tensor, _weight) = Tensor();
  WICK_ARG(bool, include_last_offset) = false;
  /// Indices equal to it are left out of their bag; the row is zeroed at initialization.
  WICK_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

/// EmbeddingBag::from_pretrained's options, as LibTorch's.
struct EmbeddingBagFromPretrainedOptions {
  WICK_ARG(bool, freeze) = true;
  WICK_ARG(std::optional<double>, max_norm) = std::nullopt;
  WICK_ARG(double, norm_type) = 2.0;
  WICK_ARG(bool, scale_grad_by_freq) = false;
  WICK_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode::Mean;
  WICK_ARG(bool, sparse) = false;
  WICK_ARG(bool, include_last_offset) = false;
  WICK_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

/// Sums, averages or takes the max of the embeddings of each bag of indices -> [B, embedding_dim]
/// (F::embedding_bag with the layer's options). weight as Embedding's. The constructor refuses
/// what Embedding's does, and scale_grad_by_freq with mode Max (ValueError).
class EmbeddingBagImpl : public Cloneable<EmbeddingBagImpl> {
 public:
  EmbeddingBagImpl(int64_t num_embeddings, int64_t embedding_dim, TensorOptions tensor_options = {})
      : EmbeddingBagImpl(EmbeddingBagOptions(num_embeddings, embedding_dim), tensor_options) {}
  explicit EmbeddingBagImpl(const EmbeddingBagOptions& options, TensorOptions tensor_options = {});
  /// input [B, L] (fixed-size bags, offsets undefined) or [N] with offsets; per_sample_weights
  /// (mode Sum only) of input's shape.
  Tensor forward(const Tensor& input, const Tensor& offsets = {}, const Tensor& per_sample_weights = {});
  /// forward_value({input}), ({input, offsets}) or ({input, offsets, per_sample_weights}); None
  /// for an omitted tensor.
  Value forward_value(const std::vector<Value>& args) override;
  void reset_parameters();
  /// PyTorch's: "10, 3", then max_norm, norm_type, scale_grad_by_freq where set, "mode=mean", then
  /// padding_idx where set.
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const EmbeddingBagOptions& options() const { return options_; }

 private:
  EmbeddingBagOptions options_;
  ParamSlot weight_;
};

/// The holder of EmbeddingBagImpl, with LibTorch's static from_pretrained.
class EmbeddingBag : public ModuleHolder<EmbeddingBagImpl> {
 public:
  using ModuleHolder<EmbeddingBagImpl>::ModuleHolder;
  /// As Embedding::from_pretrained: the weight shares embeddings' memory; freeze leaves it
  /// without grad.
  static EmbeddingBag from_pretrained(const Tensor& embeddings, const EmbeddingBagFromPretrainedOptions& options = {});
};

}  // namespace wick::nn
