// F::multi_head_attention_forward, which MultiheadAttention's forward is.
#include "wick/nn/functional_mha.h"

#include <fmt/format.h>

#include <limits>
#include <vector>

#include "attention.h"
#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"

namespace wick::nn {

namespace {
using detail::shape_str;
using Options = functional::MultiheadAttentionForwardFuncOptions;

// Note [MHA mask combination]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// multi_head_attention_forward takes masks in MultiheadAttention's convention (bool true = not
// allowed, float added) and hands detail::attention one mask in scaled_dot_product_attention's
// (bool true = keep, float added). Two masks combine as PyTorch 2's _canonical_mask does: two
// bool ones keep where both keep, otherwise the bool one becomes 0 / -inf and they add. PyTorch
// 1.13 refused two float masks and treated a float key_padding_mask next to a bool attn_mask as
// bool (nonzero = masked); wick keeps the one rule (docs/attention.md).
Tensor keep_or_add(const Tensor& mask) { return mask.dtype() == kBool ? logical_not(mask) : mask; }

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

// A MultiheadAttention-convention mask with one more key column that every query may attend:
// false (bool) or 0 (float).
Tensor pad_key(const Tensor& mask) {
  if (!mask.defined()) return mask;
  std::vector<int64_t> shape(mask.sizes().begin(), mask.sizes().end());
  shape.back() = 1;
  return cat({mask, wick::zeros(shape, TensorOptions(mask.dtype()).device(mask.device()))}, -1);
}

// Every tensor argument but query: of query's dtype (the masks: or bool) and on its device.
void check_dtypes_devices(const char* op, const Tensor& query, const Tensor& key, const Tensor& value,
                          const Options& o) {
  WICK_CHECK_TYPE(query.is_floating_point(), "{}: query must be floating, got {}", op, query.dtype());
  const std::pair<const Tensor*, const char*> same_dtype[] = {{&key, "key"},
                                                              {&value, "value"},
                                                              {&o.in_proj_weight(), "in_proj_weight"},
                                                              {&o.in_proj_bias(), "in_proj_bias"},
                                                              {&o.bias_k(), "bias_k"},
                                                              {&o.bias_v(), "bias_v"},
                                                              {&o.out_proj_weight(), "out_proj_weight"},
                                                              {&o.out_proj_bias(), "out_proj_bias"},
                                                              {&o.q_proj_weight(), "q_proj_weight"},
                                                              {&o.k_proj_weight(), "k_proj_weight"},
                                                              {&o.v_proj_weight(), "v_proj_weight"},
                                                              {&o.static_k(), "static_k"},
                                                              {&o.static_v(), "static_v"}};
  for (const auto& [t, name] : same_dtype) {
    if (!t->defined()) continue;
    WICK_CHECK_TYPE(t->dtype() == query.dtype(), "{}: {} is {} but query is {}; convert it with .to(dtype)", op, name,
                    t->dtype(), query.dtype());
    WICK_CHECK(t->device() == query.device(), "{}: {} is on {} but query is on {}; move it with .to(device)", op, name,
               t->device(), query.device());
  }
  for (const auto& [t, name] :
       {std::pair{&o.attn_mask(), "attn_mask"}, std::pair{&o.key_padding_mask(), "key_padding_mask"}}) {
    if (!t->defined()) continue;
    WICK_CHECK(t->device() == query.device(), "{}: {} is on {} but query is on {}; move it with .to(device)", op, name,
               t->device(), query.device());
    WICK_CHECK_TYPE(t->dtype() == kBool || t->dtype() == query.dtype(),
                    "{}: {} must be bool (true = masked) or of the query's dtype {} (added to the scores), got {}", op,
                    name, query.dtype(), t->dtype());
  }
}

// `t` is undefined (when `optional`) or of shape `want`.
void check_shape(const char* op, const Tensor& t, const std::vector<int64_t>& want, const char* name, bool optional) {
  WICK_CHECK((optional && !t.defined()) || (t.defined() && t.sizes() == IntArrayRef(want)),
             "{}: {} must be [{}]{}, got {}", op, name, fmt::join(want, ", "), optional ? " or undefined" : "",
             shape_str(t));
}

// bias_k / bias_v hold E values in a [E], [1, E] or [1, 1, E] tensor.
void check_bias_kv(const char* op, const Tensor& t, const char* name, int64_t E) {
  bool ok = t.dim() >= 1 && t.dim() <= 3 && t.size(-1) == E;
  for (int64_t d = 0; ok && d + 1 < t.dim(); ++d) ok = t.size(d) == 1;
  WICK_CHECK(ok, "{}: {} must be [1, 1, E] = [1, 1, {}], got {}", op, name, E, shape_str(t));
}

// static_k / static_v: [N * num_heads, S', head_dim].
void check_static(const char* op, const Tensor& t, const char* name, int64_t NH, int64_t Dh) {
  WICK_CHECK(!t.defined() || (t.dim() == 3 && t.size(0) == NH && t.size(2) == Dh),
             "{}: {} {} must be [N * num_heads, S, embed_dim / num_heads] = [{}, S, {}]", op, name, shape_str(t), NH,
             Dh);
}
}  // namespace

namespace detail {

std::tuple<Tensor, Tensor> multi_head_attention(const char* op, const Tensor& query_in, const Tensor& key_in,
                                                const Tensor& value_in, const Options& o, bool is_causal) {
  WICK_CHECK(query_in.defined() && key_in.defined() && value_in.defined(), "{}: query, key and value must be defined",
             op);
  const bool batched = query_in.dim() == 3;
  WICK_CHECK((batched || query_in.dim() == 2) && key_in.dim() == query_in.dim() && value_in.dim() == query_in.dim(),
             "{}: expected query, key and value all 3-d (batched: [L, N, E], [S, N, kdim], [S, N, vdim]) or all 2-d "
             "(unbatched [L, E]), got {}, {} and {}",
             op, shape_str(query_in), shape_str(key_in), shape_str(value_in));
  check_dtypes_devices(op, query_in, key_in, value_in, o);
  const Tensor query = batched ? query_in : query_in.unsqueeze(1);
  const Tensor key = batched ? key_in : key_in.unsqueeze(1);
  const Tensor value = batched ? value_in : value_in.unsqueeze(1);
  const int64_t L = query.size(0), N = query.size(1), E = query.size(2), S = key.size(0), H = o.num_heads();
  WICK_CHECK(E == o.embed_dim_to_check(),
             "{}: query {} must have embed_dim = {} features in the last dim (embed_dim_to_check), got {}", op,
             shape_str(query_in), o.embed_dim_to_check(), E);
  WICK_CHECK(H > 0 && E % H == 0,
             "{}: embed_dim ({}) must be divisible by num_heads ({}); each head gets embed_dim / num_heads features",
             op, E, H);
  const int64_t Dh = E / H;
  const bool separate = o.use_separate_proj_weight();
  WICK_CHECK(key.size(0) == value.size(0) && key.size(1) == N && value.size(1) == N &&
                 (separate || (key.size(2) == E && value.size(2) == E)),
             "{}: key {} and value {} must have query {}'s batch size {}, one length S{}", op, shape_str(key_in),
             shape_str(value_in), shape_str(query_in), N,
             separate ? "" : " and embed_dim features (other kdim / vdim need use_separate_proj_weight)");
  const Tensor& b = o.in_proj_bias();
  check_shape(op, b, {3 * E}, "in_proj_bias", true);
  if (separate) {
    check_shape(op, o.q_proj_weight(), {E, E}, "q_proj_weight (use_separate_proj_weight)", false);
    check_shape(op, o.k_proj_weight(), {E, key.size(2)}, "k_proj_weight [E, kdim] (use_separate_proj_weight)", false);
    check_shape(op, o.v_proj_weight(), {E, value.size(2)}, "v_proj_weight [E, vdim] (use_separate_proj_weight)", false);
  } else {
    check_shape(op, o.in_proj_weight(), {3 * E, E}, "in_proj_weight (without use_separate_proj_weight)", false);
  }
  const Tensor& wo = o.out_proj_weight();
  WICK_CHECK(wo.defined() && wo.dim() == 2 && wo.size(1) == E,
             "{}: out_proj_weight must be [E_out, E] = [E_out, {}], got {}", op, E, shape_str(wo));
  check_shape(op, o.out_proj_bias(), {wo.size(0)}, "out_proj_bias [E_out]", true);
  WICK_CHECK(o.dropout_p() >= 0.0 && o.dropout_p() <= 1.0, "{}: dropout_p must be in [0, 1], got {}", op,
             o.dropout_p());
  const Tensor &bk = o.bias_k(), &bv = o.bias_v(), &sk = o.static_k(), &sv = o.static_v();
  WICK_CHECK(bk.defined() == bv.defined(), "{}: bias_k ({}) and bias_v ({}) must be given together", op, shape_str(bk),
             shape_str(bv));
  if (bk.defined()) {
    WICK_CHECK(!sk.defined() && !sv.defined(),
               "{}: bias_k and bias_v cannot be added to static_k / static_v; fold them into the static tensors", op);
    check_bias_kv(op, bk, "bias_k", E);
    check_bias_kv(op, bv, "bias_v", E);
  }
  check_static(op, sk, "static_k", N * H, Dh);
  check_static(op, sv, "static_v", N * H, Dh);
  // The keys before add_zero_attn: key's S (+ bias_k), or static_k's.
  const int64_t keys = sk.defined() ? sk.size(1) : S + (bk.defined() ? 1 : 0);
  const int64_t values = sv.defined() ? sv.size(1) : S + (bv.defined() ? 1 : 0);
  WICK_CHECK(keys == values, "{}: {} keys but {} values (key {}, static_k {}, value {}, static_v {})", op, keys, values,
             shape_str(key_in), shape_str(sk), shape_str(value_in), shape_str(sv));
  // Masks, checked as given (PyTorch's shapes: attn_mask against key's S).
  Tensor attn_mask = o.attn_mask();
  if (attn_mask.defined()) {
    const bool ok =
        (attn_mask.dim() == 2 && attn_mask.size(0) == L && attn_mask.size(1) == S) ||
        (attn_mask.dim() == 3 && attn_mask.size(0) == N * H && attn_mask.size(1) == L && attn_mask.size(2) == S);
    WICK_CHECK(ok,
               "{}: attn_mask {} must be [L, S] = [{}, {}] or [N * num_heads, L, S] = [{}, {}, {}] for query {} and "
               "key {}",
               op, shape_str(attn_mask), L, S, N * H, L, S, shape_str(query_in), shape_str(key_in));
    WICK_CHECK(!sk.defined() || sk.size(1) == S,
               "{}: attn_mask {} covers key {}'s {} keys but static_k {} has {}; give key static_k's length", op,
               shape_str(attn_mask), shape_str(key_in), S, shape_str(sk), sk.size(1));
  }
  Tensor kpm = o.key_padding_mask();
  if (kpm.defined()) {
    const int64_t given = sk.defined() ? keys : S;
    const bool ok =
        batched ? kpm.dim() == 2 && kpm.size(0) == N && kpm.size(1) == given : kpm.dim() == 1 && kpm.size(0) == given;
    WICK_CHECK(ok, "{}: key_padding_mask {} must be [N, S] = [{}, {}] ([S] unbatched) for key {}{}", op, shape_str(kpm),
               N, given, shape_str(key_in), sk.defined() ? " and static_k" : "");
    if (!batched) kpm = kpm.unsqueeze(0);
  }

  // In-projection: one GEMM for self-attention with in_proj_weight, else one per input (row
  // blocks of in_proj_weight / in_proj_bias are views); a static key or value is not projected.
  auto rows = [&](const Tensor& t, int64_t i) { return t.defined() ? t.narrow(0, i * E, E) : Tensor(); };
  Tensor q, k, v;
  if (!separate && query_in.is_same(key_in) && key_in.is_same(value_in)) {
    std::vector<Tensor> qkv = F::linear(query, o.in_proj_weight(), b).chunk(3, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    const Tensor& wq = separate ? o.q_proj_weight() : rows(o.in_proj_weight(), 0);
    q = F::linear(query, wq, rows(b, 0));
    if (!sk.defined()) k = F::linear(key, separate ? o.k_proj_weight() : rows(o.in_proj_weight(), 1), rows(b, 1));
    if (!sv.defined()) v = F::linear(value, separate ? o.v_proj_weight() : rows(o.in_proj_weight(), 2), rows(b, 2));
  }
  if (bk.defined()) {
    k = cat({k, bk.reshape({1, 1, E}).expand({1, N, E})}, 0);
    v = cat({v, bv.reshape({1, 1, E}).expand({1, N, E})}, 0);
    attn_mask = pad_key(attn_mask);
    kpm = pad_key(kpm);
  }
  // [len, N, E] -> [N, H, len, Dh], views the batched GEMM reads in place (Note [Batched GEMM
  // without copies]); static ones [N * H, len, Dh] -> [N, H, len, Dh].
  auto heads = [&](const Tensor& t) { return t.reshape({t.size(0), N, H, Dh}).permute({1, 2, 0, 3}); };
  Tensor k4 = sk.defined() ? sk.reshape({N, H, keys, Dh}) : heads(k);
  Tensor v4 = sv.defined() ? sv.reshape({N, H, keys, Dh}) : heads(v);
  if (o.add_zero_attn()) {
    auto zero = [&](const Tensor& t) {
      return cat({t, wick::zeros({N, H, 1, Dh}, TensorOptions(t.dtype()).device(t.device()))}, 2);
    };
    k4 = zero(k4);
    v4 = zero(v4);
    attn_mask = pad_key(attn_mask);
    kpm = pad_key(kpm);
  }
  const int64_t S_all = k4.size(2);
  // One mask of scaled_dot_product_attention's convention, broadcasting to [N, H, L, S_all].
  Tensor mask;
  if (attn_mask.defined()) mask = keep_or_add(attn_mask.dim() == 3 ? attn_mask.reshape({N, H, L, S_all}) : attn_mask);
  if (kpm.defined()) mask = combine_masks(mask, keep_or_add(kpm.reshape({N, 1, 1, S_all})));
  // is_causal is the causal attn_mask over the given keys (key j > query i masked); the keys
  // bias_k and add_zero_attn append stay visible to every query, as that mask's padded column
  // keeps them. Without appended keys or other masks, attention applies it without a mask tensor.
  const int64_t given_keys = sk.defined() ? keys : S;
  const bool causal_mask = is_causal && (mask.defined() || S_all > given_keys);
  if (causal_mask) {
    Tensor keep = causal_keep_mask(L, given_keys, query.device());
    if (S_all > given_keys)
      keep = cat({keep, wick::ones({L, S_all - given_keys}, TensorOptions(kBool).device(query.device()))}, 1);
    mask = combine_masks(mask, keep);
  }
  const double p = o.training() ? o.dropout_p() : 0.0;
  AttentionResult r = attention(op, heads(q), k4, v4, mask, p, is_causal && !causal_mask, std::nullopt);
  // [N, H, L, Dh] -> [L, N, E] -> out_proj.
  Tensor out = F::linear(r.output.permute({2, 0, 1, 3}).reshape({L, N, E}), wo, o.out_proj_bias());
  Tensor weights;
  if (o.need_weights()) {
    weights = o.average_attn_weights() ? r.weights.mean({1}) : r.weights;
    if (!batched) weights = weights.squeeze(0);
  }
  if (!batched) out = out.squeeze(1);
  return {out, weights};
}

}  // namespace detail

namespace functional {

std::tuple<Tensor, Tensor> multi_head_attention_forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                        const MultiheadAttentionForwardFuncOptions& options) {
  return detail::multi_head_attention("multi_head_attention_forward", query, key, value, options, false);
}

}  // namespace functional
}  // namespace wick::nn
