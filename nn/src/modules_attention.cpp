// MultiheadAttention.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "attention.h"
#include "repr.h"
#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/functional.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/attention.h"

namespace wick::nn {

namespace {
TensorOptions plain(TensorOptions o) { return o.requires_grad(false); }
using detail::shape_str;

// An MHA mask (bool true = masked, or float added) as an additive float mask or a bool keep mask
// that F::scaled_dot_product_attention's math accepts.
Tensor keep_or_add(const Tensor& mask) { return mask.dtype() == kBool ? logical_not(mask) : mask; }

// Two masks of the attention's convention combined into one (keep AND keep, add + add, or the
// bool one turned into 0 / -inf and added).
Tensor combine_masks(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  if (a.dtype() == kBool && b.dtype() == kBool) return logical_and(a, b);
  const double neg_inf = -std::numeric_limits<double>::infinity();
  auto additive = [&](const Tensor& m, const Tensor& other) {
    return m.dtype() == kBool ? where(m, 0.0, full({}, neg_inf, TensorOptions(other.dtype()).device(m.device()))) : m;
  };
  return additive(a, b) + additive(b, a);
}
}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options, TensorOptions tensor_options)
    : options_(options) {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  WICK_CHECK(E > 0 && H > 0, "MultiheadAttention: embed_dim ({}) and num_heads ({}) must be positive", E, H);
  WICK_CHECK(E % H == 0,
             "MultiheadAttention: embed_dim ({}) must be divisible by num_heads ({}); each head gets embed_dim / "
             "num_heads features",
             E, H);
  WICK_CHECK(options.dropout() >= 0.0 && options.dropout() <= 1.0,
             "MultiheadAttention: dropout must be in [0, 1], got {}", options.dropout());
  tensor_options = plain(tensor_options);
  in_proj_weight_ = register_parameter("in_proj_weight", wick::empty({3 * E, E}, tensor_options));
  in_proj_bias_ = register_parameter("in_proj_bias", options.bias() ? wick::empty({3 * E}, tensor_options) : Tensor());
  out_proj_ = register_module("out_proj",
                              std::make_shared<LinearImpl>(LinearOptions(E, E).bias(options.bias()), tensor_options));
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  init::xavier_uniform_(in_proj_weight());
  if (in_proj_bias().defined()) init::zeros_(in_proj_bias());
  if (out_proj().bias().defined()) init::zeros_(out_proj().bias());
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                           const Tensor& key_padding_mask, bool need_weights,
                                                           const Tensor& attn_mask, bool average_attn_weights,
                                                           bool is_causal) {
  const int64_t E = options_.embed_dim(), H = options_.num_heads(), Dh = E / H;
  const bool batch_first = options_.batch_first();
  WICK_CHECK(query.defined() && key.defined() && value.defined(),
             "MultiheadAttention: query, key and value must be defined");
  const bool batched = query.dim() == 3;
  WICK_CHECK((query.dim() == 2 || batched) && key.dim() == query.dim() && value.dim() == query.dim(),
             "MultiheadAttention: expected query, key and value all 3-d ({}) or all 2-d (unbatched [L, E]), got "
             "{}, {} and {}",
             batch_first ? "[N, L, E], batch_first" : "[L, N, E]", shape_str(query), shape_str(key), shape_str(value));
  WICK_CHECK(query.size(-1) == E && key.size(-1) == E && value.size(-1) == E,
             "MultiheadAttention: query {}, key {} and value {} must have embed_dim = {} features in the last dim",
             shape_str(query), shape_str(key), shape_str(value), E);
  const Tensor& w = in_proj_weight();
  WICK_CHECK_TYPE(query.dtype() == w.dtype() && key.dtype() == w.dtype() && value.dtype() == w.dtype(),
                  "MultiheadAttention: query, key and value are {}, {} and {} but the layer's parameters are {}; "
                  "convert the inputs (or the layer, with .to(dtype))",
                  query.dtype(), key.dtype(), value.dtype(), w.dtype());
  WICK_CHECK(key.device() == query.device() && value.device() == query.device() && w.device() == query.device(),
             "MultiheadAttention: query is on {}, key on {}, value on {} and the layer's parameters on {}; move "
             "them to one device with .to(device)",
             query.device(), key.device(), value.device(), w.device());
  for (const auto& [mask, name] :
       {std::pair{&attn_mask, "attn_mask"}, std::pair{&key_padding_mask, "key_padding_mask"}})
    WICK_CHECK(!mask->defined() || mask->device() == query.device(),
               "MultiheadAttention: {} is on {} but query is on {}; move it with .to(device)", name, mask->device(),
               query.device());
  // Everything below works on batched [N, L, E] (batch_first) or [L, N, E].
  auto batch = [&](const Tensor& t) { return batched ? t : t.unsqueeze(batch_first ? 0 : 1); };
  const Tensor q_in = batch(query), k_in = batch(key), v_in = batch(value);
  const int64_t bdim = batch_first ? 0 : 1, sdim = batch_first ? 1 : 0;
  const int64_t N = q_in.size(bdim), L = q_in.size(sdim), S = k_in.size(sdim);
  WICK_CHECK(k_in.size(bdim) == N && v_in.size(bdim) == N && v_in.size(sdim) == S,
             "MultiheadAttention: key {} and value {} must have query {}'s batch size {} and one length S",
             shape_str(key), shape_str(value), shape_str(query), N);
  // Projections: one GEMM for self-attention (query, key and value the same tensor), else three
  // over row blocks of in_proj_weight (views, no copies).
  const Tensor& b = in_proj_bias();
  auto rows = [&](const Tensor& t, int64_t i) { return t.defined() ? t.narrow(0, i * E, E) : Tensor(); };
  Tensor q, k, v;
  if (query.is_same(key) && key.is_same(value)) {
    auto qkv = F::linear(q_in, w, b).chunk(3, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    q = F::linear(q_in, rows(w, 0), rows(b, 0));
    k = F::linear(k_in, rows(w, 1), rows(b, 1));
    v = F::linear(v_in, rows(w, 2), rows(b, 2));
  }
  // [N, L, E] -> [N, L, H, Dh] -> [N, H, L, Dh] (or from [L, N, E]): views that the batched GEMM
  // reads in place (Note [Batched GEMM without copies]).
  auto heads = [&](const Tensor& t, int64_t len) {
    return batch_first ? t.reshape({N, len, H, Dh}).transpose(1, 2) : t.reshape({len, N, H, Dh}).permute({1, 2, 0, 3});
  };
  // Masks, as [N, H, L, S]-broadcastable tensors of the attention's convention.
  Tensor mask;
  if (attn_mask.defined()) {
    const bool ok =
        (attn_mask.dim() == 2 && attn_mask.size(0) == L && attn_mask.size(1) == S) ||
        (attn_mask.dim() == 3 && attn_mask.size(0) == N * H && attn_mask.size(1) == L && attn_mask.size(2) == S);
    WICK_CHECK(ok,
               "MultiheadAttention: attn_mask {} must be [L, S] = [{}, {}] or [N * num_heads, L, S] = [{}, {}, {}] "
               "for query {} and key {}",
               shape_str(attn_mask), L, S, N * H, L, S, shape_str(query), shape_str(key));
    WICK_CHECK_TYPE(
        attn_mask.dtype() == kBool || attn_mask.dtype() == query.dtype(),
        "MultiheadAttention: attn_mask must be bool (true = not allowed) or of the query's dtype {}, got {}",
        query.dtype(), attn_mask.dtype());
    mask = keep_or_add(attn_mask.dim() == 3 ? attn_mask.reshape({N, H, L, S}) : attn_mask);
  }
  if (key_padding_mask.defined()) {
    const bool ok = batched
                        ? key_padding_mask.dim() == 2 && key_padding_mask.size(0) == N && key_padding_mask.size(1) == S
                        : key_padding_mask.dim() == 1 && key_padding_mask.size(0) == S;
    WICK_CHECK(ok, "MultiheadAttention: key_padding_mask {} must be [N, S] = [{}, {}] ([S] unbatched) for key {}",
               shape_str(key_padding_mask), N, S, shape_str(key));
    WICK_CHECK_TYPE(key_padding_mask.dtype() == kBool || key_padding_mask.dtype() == query.dtype(),
                    "MultiheadAttention: key_padding_mask must be bool (true = ignore the key) or of the query's "
                    "dtype {}, got {}",
                    query.dtype(), key_padding_mask.dtype());
    mask = combine_masks(mask, keep_or_add(key_padding_mask.reshape({N, 1, 1, S})));
  }
  if (mask.defined() && is_causal) mask = combine_masks(mask, detail::causal_keep_mask(L, S, query.device()));
  const double p = is_training() ? options_.dropout() : 0.0;
  detail::AttentionResult r = detail::attention("MultiheadAttention", heads(q, L), heads(k, S), heads(v, S), mask, p,
                                                is_causal && !mask.defined(), std::nullopt);
  // [N, H, L, Dh] -> [N, L, E] or [L, N, E].
  Tensor merged =
      batch_first ? r.output.transpose(1, 2).reshape({N, L, E}) : r.output.permute({2, 0, 1, 3}).reshape({L, N, E});
  Tensor out = out_proj().forward(merged);
  Tensor weights;
  if (need_weights) {
    weights = average_attn_weights ? r.weights.mean({1}) : r.weights;
    if (!batched) weights = weights.squeeze(0);
  }
  if (!batched) out = out.squeeze(batch_first ? 0 : 1);
  return {out, weights};
}

std::string MultiheadAttentionImpl::extra_repr() const {
  // PyTorch prints out_proj as a child only.
  return "";
}

}  // namespace wick::nn
