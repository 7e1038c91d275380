// F::scaled_dot_product_attention.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn {

namespace {
std::string shape_str(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

void check_attention_inputs(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                            double dropout_p, bool is_causal) {
  WICK_CHECK(q.defined() && k.defined() && v.defined(), "{}: query, key and value must be defined", op);
  WICK_CHECK_TYPE(q.is_floating_point() && k.dtype() == q.dtype() && v.dtype() == q.dtype(),
                  "{}: query, key and value must share one floating dtype, got {}, {} and {}", op, q.dtype(), k.dtype(),
                  v.dtype());
  WICK_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2,
             "{}: query, key and value need at least 2 dims [..., L, E], got {}, {} and {}", op, shape_str(q),
             shape_str(k), shape_str(v));
  WICK_CHECK(q.size(-1) == k.size(-1),
             "{}: query {} and key {} must have the same last dim E (the embedding per head); project them to "
             "one size first",
             op, shape_str(q), shape_str(k));
  WICK_CHECK(k.size(-2) == v.size(-2),
             "{}: key {} and value {} must have the same number of keys S (dim -2); pass one value per key", op,
             shape_str(k), shape_str(v));
  // The batch dims (all but the last two) broadcast together, as matmul's do; checked here so the
  // error names the attention inputs rather than an inner matmul.
  auto batches_broadcast = [](const Tensor& a, const Tensor& b) {
    const int64_t na = a.dim() - 2, nb = b.dim() - 2;
    for (int64_t i = 1; i <= std::min(na, nb); ++i) {
      const int64_t x = a.size(na - i), y = b.size(nb - i);
      if (x != y && x != 1 && y != 1) return false;
    }
    return true;
  };
  WICK_CHECK(batches_broadcast(q, k) && batches_broadcast(q, v) && batches_broadcast(k, v),
             "{}: the batch dims (all but the last two) of query {}, key {} and value {} do not broadcast together", op,
             shape_str(q), shape_str(k), shape_str(v));
  WICK_CHECK(dropout_p >= 0.0 && dropout_p <= 1.0, "{}: dropout_p must be in [0, 1], got {}", op, dropout_p);
  if (mask.defined()) {
    WICK_CHECK(!is_causal,
               "{}: attn_mask and is_causal were both given; pass one of them (fold the causal mask into "
               "attn_mask, as PyTorch requires)",
               op);
    WICK_CHECK_TYPE(mask.dtype() == kBool || mask.dtype() == q.dtype(),
                    "{}: attn_mask must be bool (true = attend) or of the query's dtype {} (added to the scores), "
                    "got {}",
                    op, q.dtype(), mask.dtype());
    WICK_CHECK(mask.device() == q.device(), "{}: attn_mask is on {} but query is on {}", op, mask.device(), q.device());
  }
}
}  // namespace

namespace detail {

Tensor causal_keep_mask(int64_t L, int64_t S, Device device) {
  Tensor row = native::view(native::arange(0, L, 1, kInt64, device), {L, 1});
  Tensor col = native::arange(0, S, 1, kInt64, device);
  return native::binary(BinaryOp::Le, col, row);
}

AttentionResult attention(const char* op, const Tensor& query, const Tensor& key, const Tensor& value,
                          const Tensor& attn_mask, double dropout_p, bool is_causal, std::optional<double> scale) {
  check_attention_inputs(op, query, key, value, attn_mask, dropout_p, is_causal);
  const int64_t L = query.size(-2), S = key.size(-2);
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  // Scaling the query costs L*E multiplies, the scores L*S.
  Tensor scores = matmul(query * s, transpose(key, -2, -1));  // [..., L, S]
  if (attn_mask.defined()) {
    bool fits = attn_mask.dim() <= scores.dim();
    for (int64_t d = 1; fits && d <= attn_mask.dim(); ++d)
      fits = attn_mask.size(-d) == 1 || attn_mask.size(-d) == scores.size(-d);
    WICK_CHECK(fits,
               "{}: attn_mask {} does not broadcast to the scores' shape {} ([..., L, S] for query {} and key {}); "
               "give it shape [L, S] = [{}, {}] or one that broadcasts to it",
               op, shape_str(attn_mask), shape_str(scores), shape_str(query), shape_str(key), L, S);
  }
  const double neg_inf = -std::numeric_limits<double>::infinity();
  if (is_causal) scores = masked_fill(scores, logical_not(causal_keep_mask(L, S, query.device())), neg_inf);
  if (attn_mask.defined())
    scores = attn_mask.dtype() == kBool ? masked_fill(scores, logical_not(attn_mask), neg_inf) : scores + attn_mask;
  Tensor weights = softmax(scores, -1);
  if (dropout_p > 0.0) weights = functional::dropout(weights, dropout_p, true);
  return {matmul(weights, value), weights};
}

}  // namespace detail

namespace functional {

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  return detail::attention("scaled_dot_product_attention", query, key, value, attn_mask, dropout_p, is_causal, scale)
      .output;
}

}  // namespace functional
}  // namespace wick::nn
