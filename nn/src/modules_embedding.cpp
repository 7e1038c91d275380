// Embedding and EmbeddingBag: the lookup-table layers (F::embedding, F::embedding_bag), their
// weights (drawn, or given as _weight / from_pretrained) and their PyTorch prints.
#include <fmt/format.h>

#include <cmath>

#include "repr.h"
#include "shape_text.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/embedding.h"
#include "wick/nn/modules/embedding_bag.h"

namespace wick::nn {

namespace {
// Checks the options both layers share and wraps a negative padding_idx; returns the tensor to
// register as the weight: options._weight's memory under a new leaf (then cleared from the
// options, which the layer keeps), or an empty one to be drawn by reset_parameters.
template <class Options>
Tensor checked_table(const char* layer, Options& o, TensorOptions tensor_options) {
  const int64_t num = o.num_embeddings(), dim = o.embedding_dim();
  WICK_CHECK(num > 0 && dim >= 0, "{}: num_embeddings ({}) must be positive and embedding_dim ({}) non-negative", layer,
             num, dim);
  if (const auto p = o.padding_idx()) {
    WICK_CHECK_INDEX(*p < num && *p >= -num, "{}: padding_idx {} must be within num_embeddings ({}): {}..{}", layer, *p,
                     num, -num, num - 1);
    if (*p < 0) o.padding_idx(*p + num);
  }
  WICK_CHECK_NOT_IMPLEMENTED(!o.sparse(),
                             "{}: sparse = true asks for sparse gradients, but wick has no sparse tensors; use "
                             "sparse = false (the default): the weight's gradient is dense",
                             layer);
  WICK_CHECK(!o.max_norm() || *o.max_norm() >= 0.0,
             "{}: max_norm must be a non-negative number, got {}; leave it unset for no renormalization", layer,
             o.max_norm() ? *o.max_norm() : 0.0);
  WICK_CHECK(!std::isnan(o.norm_type()), "{}: norm_type is NaN; give the order of the norm (2, 1, inf, ...)", layer);
  const Tensor given = o._weight();
  if (!given.defined()) return wick::empty({num, dim}, tensor_options.requires_grad(false));
  WICK_CHECK(given.dim() == 2 && given.size(0) == num && given.size(1) == dim,
             "{}: _weight {} does not match num_embeddings ({}) and embedding_dim ({})", layer,
             detail::shape_str(given), num, dim);
  o._weight(Tensor());
  return given.detach();
}

void reset_table(const Tensor& weight, std::optional<int64_t> padding_idx) {
  init::normal_(weight);
  if (padding_idx) {
    NoGradGuard no_grad;
    native::fill_(native::select(weight, 0, *padding_idx), 0);
  }
}

// ", max_norm=1.0, norm_type=3.0, scale_grad_by_freq=True" for what is set.
template <class Options>
std::string renorm_repr(const Options& o) {
  std::string s;
  if (const auto m = o.max_norm()) s += ", max_norm=" + detail::py_float(*m);
  if (o.norm_type() != 2.0) s += ", norm_type=" + detail::py_float(o.norm_type());
  if (o.scale_grad_by_freq()) s += ", scale_grad_by_freq=True";
  return s;
}
}  // namespace

// ---- Embedding ----

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options, TensorOptions tensor_options) : options_(options) {
  const Tensor w = checked_table("Embedding", options_, tensor_options);
  const bool drawn = !options._weight().defined();
  weight_ = register_parameter("weight", w, is_floating(w.dtype()));
  if (drawn) reset_parameters();
}

void EmbeddingImpl::reset_parameters() { reset_table(weight(), options_.padding_idx()); }

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return F::embedding(indices, weight(),
                      F::EmbeddingFuncOptions()
                          .padding_idx(options_.padding_idx())
                          .max_norm(options_.max_norm())
                          .norm_type(options_.norm_type())
                          .scale_grad_by_freq(options_.scale_grad_by_freq()));
}

std::string EmbeddingImpl::extra_repr() const {
  std::string s = fmt::format("{}, {}", options_.num_embeddings(), options_.embedding_dim());
  if (const auto padding_idx = options_.padding_idx()) s += fmt::format(", padding_idx={}", *padding_idx);
  return s + renorm_repr(options_);
}

Embedding Embedding::from_pretrained(const Tensor& embeddings, const EmbeddingFromPretrainedOptions& options) {
  WICK_CHECK(embeddings.defined() && embeddings.dim() == 2,
             "Embedding::from_pretrained: embeddings must be 2-d [num_embeddings, embedding_dim], got {}",
             detail::shape_str(embeddings));
  Embedding e(EmbeddingOptions(embeddings.size(0), embeddings.size(1))
                  ._weight(embeddings)
                  .padding_idx(options.padding_idx())
                  .max_norm(options.max_norm())
                  .norm_type(options.norm_type())
                  .scale_grad_by_freq(options.scale_grad_by_freq())
                  .sparse(options.sparse()));
  Tensor w = e->weight();
  w.requires_grad_(!options.freeze());
  return e;
}

// ---- EmbeddingBag ----

EmbeddingBagImpl::EmbeddingBagImpl(const EmbeddingBagOptions& options, TensorOptions tensor_options)
    : options_(options) {
  const Tensor w = checked_table("EmbeddingBag", options_, tensor_options);
  WICK_CHECK(!(options_.mode() == EmbeddingBagMode::Max && options_.scale_grad_by_freq()),
             "EmbeddingBag: max mode does not support scaling the gradient by the frequency; use mode sum or mean, "
             "or scale_grad_by_freq = false");
  const bool drawn = !options._weight().defined();
  weight_ = register_parameter("weight", w, is_floating(w.dtype()));
  if (drawn) reset_parameters();
}

void EmbeddingBagImpl::reset_parameters() { reset_table(weight(), options_.padding_idx()); }

Tensor EmbeddingBagImpl::forward(const Tensor& input, const Tensor& offsets, const Tensor& per_sample_weights) {
  return F::embedding_bag(input, weight(),
                          F::EmbeddingBagFuncOptions()
                              .offsets(offsets)
                              .max_norm(options_.max_norm())
                              .norm_type(options_.norm_type())
                              .scale_grad_by_freq(options_.scale_grad_by_freq())
                              .mode(options_.mode())
                              .per_sample_weights(per_sample_weights)
                              .include_last_offset(options_.include_last_offset())
                              .padding_idx(options_.padding_idx()));
}

Value EmbeddingBagImpl::forward_value(const std::vector<Value>& args) {
  WICK_CHECK(!args.empty() && args.size() <= 3,
             "EmbeddingBag.forward_value: forward takes input, and optionally offsets and per_sample_weights, but "
             "{} arguments were given",
             args.size());
  Tensor t[3];
  for (size_t i = 0; i < args.size(); ++i) {
    WICK_CHECK_TYPE(args[i].is_none() || args[i].is_tensor(),
                    "EmbeddingBag.forward_value: argument {} must be a tensor or None, got {}", i, args[i].describe());
    if (args[i].is_tensor()) t[i] = args[i].tensor();
  }
  return Value(forward(t[0], t[1], t[2]));
}

std::string EmbeddingBagImpl::extra_repr() const {
  std::string s = fmt::format("{}, {}", options_.num_embeddings(), options_.embedding_dim()) + renorm_repr(options_);
  s += fmt::format(", mode={}", embedding_bag_mode_name(options_.mode()));
  if (const auto padding_idx = options_.padding_idx()) s += fmt::format(", padding_idx={}", *padding_idx);
  return s;
}

EmbeddingBag EmbeddingBag::from_pretrained(const Tensor& embeddings, const EmbeddingBagFromPretrainedOptions& options) {
  WICK_CHECK(embeddings.defined() && embeddings.dim() == 2,
             "EmbeddingBag::from_pretrained: embeddings must be 2-d [num_embeddings, embedding_dim], got {}",
             detail::shape_str(embeddings));
  EmbeddingBag e(EmbeddingBagOptions(embeddings.size(0), embeddings.size(1))
                     ._weight(embeddings)
                     .max_norm(options.max_norm())
                     .norm_type(options.norm_type())
                     .scale_grad_by_freq(options.scale_grad_by_freq())
                     .mode(options.mode())
                     .sparse(options.sparse())
                     .include_last_offset(options.include_last_offset())
                     .padding_idx(options.padding_idx()));
  Tensor w = e->weight();
  w.requires_grad_(!options.freeze());
  return e;
}

}  // namespace wick::nn
