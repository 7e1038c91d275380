// MultiheadAttention's LibTorch options kdim, vdim, add_bias_kv and add_zero_attn: PyTorch 1.13's
// outputs, weights and input and parameter gradients (generate.py's mha_layer_cases) on every
// device with PyTorch's parameters loaded by name, PyTorch's state_dict keys and shapes,
// PyTorch's initialization, a saved checkpoint, clone, and the typed errors. Replication:
// tests/parallel/replicate_every_layer_table_test.cpp; devices agreeing under dropout:
// tests/nn/every_device_test.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "support/layer_oracle.h"
#include "support/oracle.h"
#include "support/temp_dir.h"
#include "wick/core/generator.h"
#include "wick/nn/checkpoint.h"
#include "wick/nn/nn.h"
#include "wick/nn/safetensors.h"

using namespace wick;
using namespace wick::nn;
using namespace wick::test::layer_oracle;
using wick::test::OracleCase;

namespace {
const TensorOptions kF64(kFloat64);

// The layer of a mha_layer_cases case.
MultiheadAttentionOptions options_of(const OracleCase& c) {
  return MultiheadAttentionOptions(wick::test::ikw(c, "E"), wick::test::ikw(c, "H"))
      .kdim(wick::test::ikw(c, "kdim"))
      .vdim(wick::test::ikw(c, "vdim"))
      .bias(c.kw<bool>("bias", true))
      .add_bias_kv(c.kw<bool>("add_bias_kv", false))
      .add_zero_attn(c.kw<bool>("add_zero_attn", false))
      .batch_first(c.kw<bool>("batch_first", false));
}

std::vector<std::vector<int64_t>> shapes_of(const StateDict& sd) {
  std::vector<std::vector<int64_t>> out;
  for (const auto& [name, t] : sd) out.emplace_back(t.sizes().begin(), t.sizes().end());
  return out;
}

// MultiheadAttention(16, 4, kdim=8, vdim=24, add_bias_kv=True, add_zero_attn=True) and its
// state_dict keys, as PyTorch 1.13 prints them.
MultiheadAttention kv_layer() {
  return MultiheadAttention(MultiheadAttentionOptions(16, 4).kdim(8).vdim(24).add_bias_kv(true).add_zero_attn(true),
                            kF64);
}
const std::vector<std::string> kKvLayerKeys = {"q_proj_weight", "k_proj_weight", "v_proj_weight",   "in_proj_bias",
                                               "bias_k",        "bias_v",        "out_proj.weight", "out_proj.bias"};

Tensor run(MultiheadAttentionImpl& m, const Tensor& q, const Tensor& k, const Tensor& v) {
  return std::get<0>(m.forward(q, k, v));
}
}  // namespace

TEST_CASE("MultiheadAttention options: kdim, vdim, add_bias_kv and add_zero_attn match PyTorch 1.13 (float64)",
          "[nn][oracle]") {
  int seen = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "multihead_attention_options") continue;
    INFO(c.label());
    auto m = std::make_shared<MultiheadAttentionImpl>(options_of(c), kF64);
    // PyTorch's state_dict: keys in order, shapes.
    const StateDict sd = m->state_dict();
    CHECK(sd.keys() == c.kwargs.at("state_dict_keys").get<std::vector<std::string>>());
    CHECK(shapes_of(sd) == c.kwargs.at("state_dict_shapes").get<std::vector<std::vector<int64_t>>>());
    const bool need_weights = c.kw<bool>("need_weights", true), average = c.kw<bool>("average_attn_weights", true);
    for (Device dev : wick::test::test_devices()) {
      // Loads PyTorch's parameters by name, compares output, weights and every gradient.
      check_layer(c, *m, dev, [&](Module& mod, const Inputs& in) -> std::vector<Tensor> {
        auto& mha = static_cast<MultiheadAttentionImpl&>(mod);
        const bool self = in.count("self");
        const Tensor q = self ? in.at("self") : in.at("query");
        const Tensor k = self ? q : in.at("key"), v = self ? q : in.at("value");
        Tensor out, w;
        std::tie(out, w) =
            mha(q, k, v, input_or_none(in, "key_padding_mask"), need_weights, input_or_none(in, "attn_mask"), average);
        CHECK(w.defined() == need_weights);
        return {out, w};
      });
    }
    ++seen;
  }
  CHECK(seen >= 5);
}

TEST_CASE("MultiheadAttention options: PyTorch's initialization, accessors, print, checkpoint and clone", "[nn]") {
  wick::manual_seed(21);
  MultiheadAttention m = kv_layer();
  CHECK_FALSE(m->in_proj_weight().defined());
  CHECK(m->named_parameters().keys() == kKvLayerKeys);
  // xavier_uniform: bound sqrt(6 / (fan_in + fan_out)) over [E, E], [E, kdim], [E, vdim].
  const std::vector<std::pair<Tensor, double>> weights = {{m->q_proj_weight(), std::sqrt(6.0 / 32)},
                                                          {m->k_proj_weight(), std::sqrt(6.0 / 24)},
                                                          {m->v_proj_weight(), std::sqrt(6.0 / 40)}};
  for (const auto& wb : weights) {
    const double max = wb.first.abs().max().item<double>();
    CHECK(max <= wb.second);
    CHECK(max > 0.9 * wb.second);
  }
  CHECK(m->in_proj_bias().abs().sum().item<double>() == 0.0);
  CHECK(m->out_proj().bias().abs().sum().item<double>() == 0.0);
  {
    // xavier_normal on bias_k / bias_v [1, 1, E]: std sqrt(2 / (E + E)), normal (beyond the
    // sqrt(3) std that a uniform of that std reaches).
    MultiheadAttention big(MultiheadAttentionOptions(512, 1).add_bias_kv(true), kF64);
    CHECK(big->bias_k().sizes() == IntArrayRef({1, 1, 512}));
    const Tensor b = cat({big->bias_k().reshape({-1}), big->bias_v().reshape({-1})});
    const double std = 1.0 / std::sqrt(512.0);
    CHECK(b.std().item<double>() == Approx(std).epsilon(0.15));
    CHECK(b.abs().max().item<double>() > 1.1 * std::sqrt(3.0) * std);
    CHECK(big->in_proj_weight().sizes() == IntArrayRef({1536, 512}));
    CHECK_FALSE(big->q_proj_weight().defined());
  }
  MultiheadAttention plain(4, 2);
  for (const Tensor* t :
       {&plain->q_proj_weight(), &plain->k_proj_weight(), &plain->v_proj_weight(), &plain->bias_k(), &plain->bias_v()})
    CHECK_FALSE(t->defined());
  CHECK(plain->options().kdim() == 4);
  CHECK(plain->options().vdim() == 4);
  // print(torch.nn.MultiheadAttention(16, 4, kdim=8, vdim=24, add_bias_kv=True)): the options do
  // not print (wick's out_proj is a Linear, PyTorch's a NonDynamicallyQuantizableLinear).
  CHECK(m->to_string() == "MultiheadAttention(\n  (out_proj): Linear(in_features=16, out_features=16, bias=True)\n)");

  const Tensor q = wick::randn({3, 2, 16}, kF64), k = wick::randn({5, 2, 8}, kF64), v = wick::randn({5, 2, 24}, kF64);
  const Tensor ref = run(*m, q, k, v);
  CHECK(ref.sizes() == IntArrayRef({3, 2, 16}));
  SECTION("a saved checkpoint holds PyTorch's keys in order and loads back") {
    wick::test::TempDir dir("wick-mha-options");
    const std::string path = dir.file("mha.safetensors");
    nn::save(m, path);
    std::vector<std::string> keys;
    for (const auto& nt : nn::load_safetensors(path).tensors) keys.push_back(nt.first);
    CHECK(keys == kKvLayerKeys);  // in PyTorch's state_dict order
    wick::manual_seed(22);
    MultiheadAttention other = kv_layer();
    CHECK_FALSE(wick::test::allclose(run(*other, q, k, v), ref, 1e-6, 1e-6).ok);
    nn::load(other, path);
    CHECK_ALLCLOSE(run(*other, q, k, v), ref, 0, 0);
  }
  SECTION("is_causal is the causal attn_mask over the given keys, the appended ones visible") {
    // Queries 0..4 over 5 keys, then bias_k and the zero key: the explicit [L, S] causal mask
    // (true = masked, key j > query i) gets a keeping column for each appended key.
    const Tensor q5 = wick::randn({5, 2, 16}, kF64);
    const Tensor causal = wick::ones({5, 5}, TensorOptions(kBool)).triu(1);
    Tensor by_flag, w_flag, by_mask, w_mask;
    std::tie(by_flag, w_flag) = m->forward(q5, k, v, {}, true, {}, true, /*is_causal=*/true);
    std::tie(by_mask, w_mask) = m->forward(q5, k, v, {}, true, causal);
    CHECK_ALLCLOSE(by_flag, by_mask, 1e-15, 0);
    CHECK_ALLCLOSE(w_flag, w_mask, 1e-15, 0);
    CHECK(w_flag.select(1, 0).select(1, 5).min().item<double>() > 0.0);   // query 0 sees bias_k
    CHECK(w_flag.select(1, 0).select(1, 1).max().item<double>() == 0.0);  // and not key 1
  }
  SECTION("clone copies every parameter, the copies are independent") {
    auto c = std::dynamic_pointer_cast<MultiheadAttentionImpl>(m->clone());
    REQUIRE(c);
    CHECK(c->named_parameters().keys() == kKvLayerKeys);
    CHECK(c->options().add_zero_attn());
    CHECK_ALLCLOSE(run(*c, q, k, v), ref, 0, 0);
    {
      NoGradGuard no_grad;
      Tensor bk = c->bias_k(), wk = c->k_proj_weight();
      bk.add_(1.0);
      wk.zero_();
    }
    CHECK_FALSE(wick::test::allclose(run(*c, q, k, v), ref, 1e-6, 1e-6).ok);
    CHECK_ALLCLOSE(run(*m, q, k, v), ref, 0, 0);
  }
}

TEST_CASE("MultiheadAttention options: bad kdim, vdim, inputs and checkpoints raise typed errors naming the layer",
          "[nn]") {
  using wick::test::expect_error;
  expect_error<ValueError>([] { MultiheadAttention(MultiheadAttentionOptions(4, 2).kdim(0)); },
                           {"MultiheadAttention", "kdim (0)", "positive"});
  expect_error<ValueError>([] { MultiheadAttention(MultiheadAttentionOptions(4, 2).vdim(-3)); },
                           {"MultiheadAttention", "vdim (-3)", "positive"});
  MultiheadAttention m(MultiheadAttentionOptions(4, 2).kdim(5).vdim(3).add_bias_kv(true), kF64);
  const Tensor q = wick::randn({3, 2, 4}, kF64);
  // The key with embed_dim features instead of kdim; the value with vdim's and kdim's swapped.
  expect_error<ValueError>(
      [&] {
        m(q, wick::randn({6, 2, 4}, kF64), wick::randn({6, 2, 3}, kF64));
      },
      {"MultiheadAttention", "kdim = 5", "[6, 2, 4]"});
  expect_error<ValueError>(
      [&] {
        m(q, wick::randn({6, 2, 5}, kF64), wick::randn({6, 2, 5}, kF64));
      },
      {"MultiheadAttention", "vdim = 3"});
  // Self-attention needs kdim = vdim = embed_dim.
  expect_error<ValueError>([&] { m(q, q, q); }, {"MultiheadAttention", "kdim = 5"});
  // A PyTorch state_dict of the layer without kdim / vdim and add_bias_kv does not fit.
  MultiheadAttention same(4, 2, kF64);
  expect_error<Error>([&] { m->load_state_dict(same->state_dict()); }, {"q_proj_weight", "in_proj_weight"});
  expect_error<Error>([&] { same->load_state_dict(m->state_dict()); }, {"bias_k", "in_proj_weight"});
  // Nothing was half loaded.
  CHECK_FALSE(m->in_proj_weight().defined());
  CHECK(m->k_proj_weight().sizes() == IntArrayRef({4, 5}));
}
