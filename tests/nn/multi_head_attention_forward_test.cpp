// F::multi_head_attention_forward: PyTorch 1.13's values and gradients (generate.py's
// mha_forward_cases) on every device, float64 gradchecks, training dropout against the eval
// weights by hand, and the typed errors for bad input.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using TL = std::vector<Tensor>;
using Opts = F::MultiheadAttentionForwardFuncOptions;

namespace {
const TensorOptions kF64(kFloat64);
Tensor rnd(IntArrayRef shape) { return wick::randn(shape, kF64); }

// The output flattened, then the weights flattened (as generate.py stores them).
Tensor flat(const Tensor& out, const Tensor& weights) {
  return weights.defined() ? cat({out.reshape({-1}), weights.reshape({-1})}) : out.reshape({-1});
}

// Options with in_proj [3E, E] (+ bias) and out_proj [E, E] (+ bias), no bias_k / bias_v.
Opts plain_options(int64_t E, int64_t H) {
  return Opts(E, H, rnd({3 * E, E}), rnd({3 * E}), {}, {}, false, 0.0, rnd({E, E}), rnd({E}));
}
}  // namespace

TEST_CASE("multi_head_attention_forward: matches PyTorch 1.13 on every device", "[nn][oracle]") {
  const auto seen = wick::test::check_oracle_ops(
      {"multi_head_attention_forward"},
      [](const wick::test::OracleCase& c, const TL& x, Device) {
        const auto names = c.kwargs.at("inputs").get<std::vector<std::string>>();
        REQUIRE(names.size() == x.size());
        std::map<std::string, Tensor> a;
        for (size_t i = 0; i < names.size(); ++i) a[names[i]] = x[i];
        auto get = [&a](const char* n) { return a.count(n) ? a.at(n) : Tensor(); };
        const Tensor q = a.at("query");
        const bool self = c.kw<bool>("self", false);
        const Tensor k = self ? q : a.at("key"), v = self ? q : a.at("value");
        Opts o(wick::test::ikw(c, "E"), wick::test::ikw(c, "H"), get("in_proj_weight"), get("in_proj_bias"),
               get("bias_k"), get("bias_v"), c.kw<bool>("add_zero_attn", false), 0.0, get("out_proj_weight"),
               get("out_proj_bias"));
        o.training(false)
            .key_padding_mask(get("key_padding_mask"))
            .need_weights(c.kw<bool>("need_weights", true))
            .attn_mask(get("attn_mask"))
            .use_separate_proj_weight(c.kw<bool>("use_separate_proj_weight", false))
            .q_proj_weight(get("q_proj_weight"))
            .k_proj_weight(get("k_proj_weight"))
            .v_proj_weight(get("v_proj_weight"))
            .static_k(get("static_k"))
            .static_v(get("static_v"))
            .average_attn_weights(c.kw<bool>("average_attn_weights", true));
        Tensor out, weights;
        std::tie(out, weights) = F::multi_head_attention_forward(q, k, v, o);
        CHECK(weights.defined() == o.need_weights());
        return flat(out, weights);
      },
      {1e-9, 1e-8, 1e-12});
  CHECK(seen.total == 9);
}

TEST_CASE("multi_head_attention_forward: float64 gradchecks and the layer is the function", "[nn][gradcheck]") {
  wick::manual_seed(21);
  SECTION("separate kdim != vdim weights, bias_k / bias_v, add_zero_attn, float attn_mask, bool padding") {
    // query [L=2, N=2, E=4], key [S=3, N, kdim=3], value [S, N, vdim=5]; H = 2.
    const Tensor pad = wick::tensor({0.0, 1.0, 0.0, 0.0, 0.0, 1.0}, {2, 3}, kF64).to(kBool);
    auto fn = [pad](const TL& x) {
      Opts o(4, 2, {}, x[6], x[7], x[8], true, 0.0, x[9], x[10]);
      o.use_separate_proj_weight(true).q_proj_weight(x[3]).k_proj_weight(x[4]).v_proj_weight(x[5]);
      o.attn_mask(x[11]).key_padding_mask(pad).average_attn_weights(false);
      Tensor out, w;
      std::tie(out, w) = F::multi_head_attention_forward(x[0], x[1], x[2], o);
      return TL{out, w};
    };
    TL in = {rnd({2, 2, 4}), rnd({3, 2, 3}), rnd({3, 2, 5}), rnd({4, 4}), rnd({4, 3}), rnd({4, 5}),
             rnd({12}),      rnd({1, 1, 4}), rnd({1, 1, 4}), rnd({4, 4}), rnd({4}),    rnd({4, 2, 3})};
    for (Tensor& t : in) t.requires_grad_(true);
    CHECK_GRADCHECK(fn, in);
  }
  SECTION("unbatched, static_k and static_v, bool attn_mask, averaged weights") {
    const Tensor keep_out = wick::tensor({0.0, 1.0, 0.0, 0.0, 1.0, 1.0}, {2, 3}, kF64).to(kBool);
    auto fn = [keep_out](const TL& x) {
      Opts o(4, 2, x[3], x[4], {}, {}, true, 0.0, x[5], x[6]);
      o.static_k(x[7]).static_v(x[8]).attn_mask(keep_out);
      Tensor out, w;
      std::tie(out, w) = F::multi_head_attention_forward(x[0], x[1], x[2], o);
      return TL{out, w};
    };
    TL in = {rnd({2, 4}), rnd({3, 4}), rnd({3, 4}),    rnd({12, 4}),  rnd({12}),
             rnd({4, 4}), rnd({4}),    rnd({2, 3, 2}), rnd({2, 3, 2})};
    for (size_t i = 0; i < in.size(); ++i)
      if (i != 1 && i != 2) in[i].requires_grad_(true);  // key and value give way to static_k / static_v
    CHECK_GRADCHECK(fn, in);
  }
  SECTION("MultiheadAttention's forward is the function on its parameters") {
    for (bool batch_first : {false, true}) {
      INFO("batch_first " << batch_first);
      MultiheadAttention m(MultiheadAttentionOptions(6, 3).batch_first(batch_first), kF64);
      m->eval();
      const Tensor x = rnd({4, 2, 6}), kv = rnd({5, 2, 6});
      const Tensor mask = rnd({4, 5});
      Opts o(6, 3, m->in_proj_weight(), m->in_proj_bias(), {}, {}, false, 0.0, m->out_proj().weight(),
             m->out_proj().bias());
      o.training(false).attn_mask(mask).average_attn_weights(false);
      Tensor out, w, ref_out, ref_w;
      const Tensor xb = batch_first ? x.transpose(0, 1) : x, kvb = batch_first ? kv.transpose(0, 1) : kv;
      std::tie(out, w) = m->forward(xb, kvb, kvb, Tensor(), true, mask, false);
      std::tie(ref_out, ref_w) = F::multi_head_attention_forward(x, kv, kv, o);
      CHECK_ALLCLOSE(batch_first ? out.transpose(0, 1) : out, ref_out, 0, 0);
      CHECK_ALLCLOSE(w, ref_w, 0, 0);
    }
  }
}

TEST_CASE("multi_head_attention_forward: training dropout scales the kept weights and is seeded", "[nn]") {
  wick::manual_seed(22);
  const Tensor q = rnd({3, 2, 6}), k = rnd({5, 2, 6}), v = rnd({5, 2, 6});
  Opts o = plain_options(6, 2);
  o.dropout_p(0.5).average_attn_weights(false);
  Tensor eval_out, eval_w, out, w, again_out, again_w;
  std::tie(eval_out, eval_w) = F::multi_head_attention_forward(q, k, v, Opts(o).training(false));
  CHECK(eval_out.sizes() == IntArrayRef({3, 2, 6}));
  CHECK(eval_w.sizes() == IntArrayRef({2, 2, 3, 5}));
  wick::manual_seed(5);
  std::tie(out, w) = F::multi_head_attention_forward(q, k, v, o);
  wick::manual_seed(5);
  std::tie(again_out, again_w) = F::multi_head_attention_forward(q, k, v, o);
  CHECK_ALLCLOSE(again_out, out, 0, 0);
  CHECK_ALLCLOSE(again_w, w, 0, 0);
  // Each weight is dropped (0) or kept and scaled by 1 / (1 - p) = 2; some of each.
  const Tensor kept = w.ne(0.0);
  CHECK_ALLCLOSE(where(kept, w, 0.0), where(kept, eval_w * 2.0, 0.0), 1e-14, 0);
  const int64_t n_kept = kept.to(kInt64).sum().item<int64_t>();
  CHECK(n_kept > 0);
  CHECK(n_kept < w.numel());
  CHECK_FALSE(wick::test::allclose(out, eval_out, 1e-6, 1e-6).ok);
  // need_weights(false) returns no weights; unbatched input gives [L, E] and [H, L, S].
  o.training(false);
  CHECK_FALSE(std::get<1>(F::multi_head_attention_forward(q, k, v, Opts(o).need_weights(false))).defined());
  Tensor uo, uw;
  std::tie(uo, uw) = F::multi_head_attention_forward(q.select(1, 1), k.select(1, 1), v.select(1, 1), o);
  CHECK(uw.sizes() == IntArrayRef({2, 3, 5}));
  CHECK_ALLCLOSE(uo, eval_out.select(1, 1), 1e-12, 1e-12);
  CHECK_ALLCLOSE(uw, eval_w.select(0, 1), 1e-12, 1e-12);
}

TEST_CASE("multi_head_attention_forward: bad input raises typed errors naming the op and the shapes", "[nn]") {
  using wick::test::expect_error;
  wick::manual_seed(23);
  const Tensor q = rnd({3, 2, 6}), k = rnd({4, 2, 6});
  const Opts o = plain_options(6, 2);
  auto call = [&](const Tensor& query, const Tensor& key, const Tensor& value, const Opts& opts) {
    return [=] { F::multi_head_attention_forward(query, key, value, opts); };
  };
  const char* op = "multi_head_attention_forward";
  expect_error<ValueError>(call(q, k, k, Opts(o).embed_dim_to_check(8)), {op, "[3, 2, 6]", "embed_dim = 8"});
  expect_error<ValueError>(call(q, k, k, Opts(o).num_heads(4)), {op, "embed_dim (6)", "num_heads (4)", "divisible"});
  expect_error<ValueError>(call(rnd({1, 3, 2, 6}), k, k, o), {op, "[1, 3, 2, 6]", "all 3-d", "all 2-d"});
  expect_error<ValueError>(call(q, k, rnd({5, 2, 6}), o), {op, "key [4, 2, 6]", "[5, 2, 6]", "one length S"});
  expect_error<ValueError>(call(q, rnd({4, 2, 5}), rnd({4, 2, 5}), o), {op, "use_separate_proj_weight"});
  expect_error<ValueError>(call(q, k, k, Opts(o).attn_mask(wick::zeros({3, 5}, kBool))),
                           {op, "attn_mask [3, 5]", "[L, S] = [3, 4]", "[N * num_heads, L, S] = [4, 3, 4]"});
  expect_error<ValueError>(call(q, k, k, Opts(o).attn_mask(wick::zeros({2, 3, 4}, kBool))),
                           {op, "attn_mask [2, 3, 4]"});
  expect_error<ValueError>(call(q, k, k, Opts(o).key_padding_mask(wick::zeros({2, 5}, kBool))),
                           {op, "key_padding_mask [2, 5]", "[N, S] = [2, 4]"});
  expect_error<ValueError>(call(q, k, k, Opts(o).static_k(rnd({4, 4, 4}))), {op, "static_k [4, 4, 4]", "[4, S, 3]"});
  expect_error<ValueError>(call(q, k, k, Opts(o).static_k(rnd({4, 5, 3})).static_v(rnd({4, 6, 3}))),
                           {op, "5 keys but 6 values"});
  expect_error<ValueError>(
      call(q, k, k, Opts(o).static_k(rnd({4, 5, 3})).static_v(rnd({4, 5, 3})).attn_mask(wick::zeros({3, 4}, kBool))),
      {op, "attn_mask [3, 4]", "static_k [4, 5, 3]"});
  expect_error<ValueError>(call(q, k, k, Opts(o).bias_k(rnd({1, 1, 6}))), {op, "bias_k ([1, 1, 6])", "together"});
  expect_error<ValueError>(
      call(q, k, k, Opts(o).bias_k(rnd({1, 1, 6})).bias_v(rnd({1, 1, 6})).static_k(rnd({4, 4, 3}))),
      {op, "bias_k", "static_k"});
  expect_error<ValueError>(call(q, k, k, Opts(o).bias_k(rnd({1, 2, 6})).bias_v(rnd({1, 1, 6}))),
                           {op, "bias_k must be [1, 1, E] = [1, 1, 6]", "[1, 2, 6]"});
  expect_error<ValueError>(call(q, k, k, Opts(o).in_proj_weight(rnd({6, 6}))), {op, "in_proj_weight", "[18, 6]"});
  expect_error<ValueError>(call(q, rnd({4, 2, 5}), rnd({4, 2, 3}),
                                Opts(o)
                                    .use_separate_proj_weight(true)
                                    .q_proj_weight(rnd({6, 6}))
                                    .k_proj_weight(rnd({6, 6}))
                                    .v_proj_weight(rnd({6, 3}))),
                           {op, "k_proj_weight", "[6, 5]", "[6, 6]"});
  expect_error<ValueError>(call(q, k, k, Opts(o).out_proj_weight(rnd({6, 5}))), {op, "out_proj_weight", "[6, 5]"});
  expect_error<ValueError>(call(q, k, k, Opts(o).dropout_p(1.5)), {op, "dropout_p", "1.5"});
  expect_error<ValueError>(call(q, k, k, Opts(o).static_k(rnd({4, 4, 3}).to(Device("cpu:1")))),
                           {op, "static_k is on cpu:1", "query is on cpu:0"});
  expect_error<TypeError>(call(q, k, k, Opts(o).attn_mask(wick::zeros({3, 4}, kFloat32))),
                          {op, "attn_mask", "float64", "float32"});
  expect_error<TypeError>(call(q, k, k, Opts(o).out_proj_bias(wick::zeros({6}, kFloat32))),
                          {op, "out_proj_bias is float32", "query is float64"});
  // Unbatched: the masks lose N.
  expect_error<ValueError>(
      call(q.select(1, 0), k.select(1, 0), k.select(1, 0), Opts(o).key_padding_mask(wick::zeros({1, 4}, kBool))),
      {op, "key_padding_mask [1, 4]", "[S] unbatched"});
}
