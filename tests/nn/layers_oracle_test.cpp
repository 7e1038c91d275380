// The attention, transformer and small layers of the PyTorch oracle (tests/data/ops.safetensors,
// generate.py's layer_cases and decoder_cases), forward and backward at relative error 1e-9 in
// float64, on every test device. A layer case's inputs are its data tensors and then PyTorch's
// parameters, named in kwargs["inputs"]; the wick layer must have parameters of exactly those
// names (so a PyTorch state_dict loads name for name). Its outputs are compared flattened and
// concatenated (support/layer_oracle.h). The recurrent layers: layers_oracle_recurrent_test.cpp.
#include <catch2/catch.hpp>
#include <functional>
#include <map>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/layer_oracle.h"
#include "support/oracle.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using namespace wick::test::layer_oracle;
using wick::test::OracleCase;

namespace {
const TensorOptions kF64(kFloat64);
}  // namespace

TEST_CASE("layers: scaled_dot_product_attention matches PyTorch 2's formula (float64, rtol 1e-9)", "[nn][oracle]") {
  int seen = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "sdpa") continue;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      auto x = c.leaves(dev);
      const std::string mask = c.kw<std::string>("mask", "none");
      const std::optional<double> scale =
          c.kwargs.contains("scale") ? std::optional<double>(c.kwargs["scale"].get<double>()) : std::nullopt;
      Tensor out = F::scaled_dot_product_attention(x[0], x[1], x[2], x.size() > 3 ? x[3] : Tensor(), 0.0,
                                                   mask == "causal", scale);
      CHECK_ALLCLOSE(out, c.out, kRtol, kAtol);
      auto grads = c.backward(out, x);
      for (size_t j = 0; j < grads.size(); ++j)
        if (c.differentiable[j]) CHECK_ALLCLOSE(grads[j], c.gin[j], kRtol, kAtol);
    }
    ++seen;
  }
  CHECK(seen >= 5);
}

TEST_CASE("layers: MultiheadAttention matches PyTorch, batch_first both ways and masks (float64)", "[nn][oracle]") {
  int seen = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "multihead_attention") continue;
    for (Device dev : wick::test::test_devices()) {
      auto m = std::make_shared<MultiheadAttentionImpl>(
          MultiheadAttentionOptions(6, 2).bias(c.kw<bool>("bias", true)).batch_first(c.kw<bool>("batch_first", false)),
          kF64);
      const bool need_weights = c.kw<bool>("need_weights", true), average = c.kw<bool>("average_attn_weights", true);
      check_layer(c, *m, dev, [&](Module& mod, const Inputs& in) -> std::vector<Tensor> {
        auto& mha = static_cast<MultiheadAttentionImpl&>(mod);
        const bool self = in.count("self");
        const Tensor q = self ? in.at("self") : in.at("query");
        const Tensor k = self ? q : in.at("key"), v = self ? q : in.at("value");
        auto get = [&](const char* n) { return in.count(n) ? in.at(n) : Tensor(); };
        auto [out, w] = mha(q, k, v, get("key_padding_mask"), need_weights, get("attn_mask"), average);
        CHECK(w.defined() == need_weights);
        return {out, w};
      });
    }
    ++seen;
  }
  CHECK(seen >= 5);
}

TEST_CASE("layers: TransformerEncoderLayer matches PyTorch, pre- and post-norm, relu and gelu (float64)",
          "[nn][oracle]") {
  int seen = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "transformer_encoder_layer") continue;
    for (Device dev : wick::test::test_devices()) {
      auto m = std::make_shared<TransformerEncoderLayerImpl>(TransformerEncoderLayerOptions(6, 2)
                                                                 .dim_feedforward(8)
                                                                 .dropout(0.0)
                                                                 .activation(c.kw<std::string>("activation", "relu"))
                                                                 .batch_first(c.kw<bool>("batch_first", false))
                                                                 .norm_first(c.kw<bool>("norm_first", false)),
                                                             kF64);
      // The case marked is_causal runs with is_causal instead of its (causal) mask.
      const bool use_is_causal = c.kw<bool>("is_causal", false);
      check_layer(c, *m, dev, [&](Module& mod, const Inputs& in) -> std::vector<Tensor> {
        auto& layer = static_cast<TransformerEncoderLayerImpl&>(mod);
        auto get = [&](const char* n) { return in.count(n) ? in.at(n) : Tensor(); };
        if (use_is_causal) return {layer(in.at("src"), Tensor(), get("src_key_padding_mask"), true)};
        return {layer(in.at("src"), get("src_mask"), get("src_key_padding_mask"))};
      });
    }
    ++seen;
  }
  CHECK(seen >= 3);
}

namespace {

// The decoder layer options of a decoder_cases case (d_model, nhead, dim_feedforward,
// activation, batch_first, norm_first; dropout 0).
TransformerDecoderLayerOptions decoder_layer_options(const OracleCase& c) {
  return TransformerDecoderLayerOptions(c.kw<int64_t>("d_model", 6), c.kw<int64_t>("nhead", 2))
      .dim_feedforward(c.kw<int64_t>("dim_feedforward", 8))
      .dropout(0.0)
      .activation(c.kw<std::string>("activation", "relu"))
      .batch_first(c.kw<bool>("batch_first", false))
      .norm_first(c.kw<bool>("norm_first", false));
}

// The case's tgt_mask, or none when the case is marked tgt_is_causal (then wick runs with
// tgt_is_causal instead of PyTorch's causal tgt_mask).
Tensor tgt_mask_of(const OracleCase& c, const Inputs& in) {
  return c.kw<bool>("tgt_is_causal", false) ? Tensor() : input_or_none(in, "tgt_mask");
}
}  // namespace

TEST_CASE("layers: TransformerDecoderLayer matches PyTorch, pre- and post-norm, masks, batch_first both ways (float64)",
          "[nn][oracle]") {
  int seen = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "transformer_decoder_layer") continue;
    for (Device dev : wick::test::test_devices()) {
      auto m = std::make_shared<TransformerDecoderLayerImpl>(decoder_layer_options(c), kF64);
      const bool tgt_is_causal = c.kw<bool>("tgt_is_causal", false);
      check_layer(c, *m, dev, [&](Module& mod, const Inputs& in) -> std::vector<Tensor> {
        auto& layer = static_cast<TransformerDecoderLayerImpl&>(mod);
        return {layer(in.at("tgt"), in.at("memory"), tgt_mask_of(c, in), input_or_none(in, "memory_mask"),
                      input_or_none(in, "tgt_key_padding_mask"), input_or_none(in, "memory_key_padding_mask"),
                      tgt_is_causal)};
      });
    }
    ++seen;
  }
  CHECK(seen >= 4);
}

TEST_CASE("layers: TransformerDecoder with 2 layers and a norm matches PyTorch (float64)", "[nn][oracle]") {
  int seen = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "transformer_decoder") continue;
    for (Device dev : wick::test::test_devices()) {
      const int64_t E = c.kw<int64_t>("d_model", 6);
      auto options = TransformerDecoderOptions(TransformerDecoderLayer(decoder_layer_options(c), kF64),
                                               c.kw<int64_t>("num_layers", 2));
      if (c.kw<bool>("norm", false)) options.norm(LayerNorm(LayerNormOptions({E}), kF64).ptr());
      auto m = std::make_shared<TransformerDecoderImpl>(options);
      check_layer(c, *m, dev, [&](Module& mod, const Inputs& in) -> std::vector<Tensor> {
        auto& dec = static_cast<TransformerDecoderImpl&>(mod);
        return {dec(in.at("tgt"), in.at("memory"), tgt_mask_of(c, in), input_or_none(in, "memory_mask"),
                    input_or_none(in, "tgt_key_padding_mask"), input_or_none(in, "memory_key_padding_mask"),
                    c.kw<bool>("tgt_is_causal", false))};
      });
    }
    ++seen;
  }
  CHECK(seen >= 1);
}

TEST_CASE("layers: Transformer matches PyTorch, 1 and 2 layers each, pre- and post-norm, masks (float64)",
          "[nn][oracle]") {
  int seen = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "transformer") continue;
    const auto options = TransformerOptions(c.kw<int64_t>("d_model", 8), c.kw<int64_t>("nhead", 2))
                             .num_encoder_layers(c.kw<int64_t>("num_encoder_layers", 1))
                             .num_decoder_layers(c.kw<int64_t>("num_decoder_layers", 1))
                             .dim_feedforward(c.kw<int64_t>("dim_feedforward", 16))
                             .dropout(0.0)
                             .activation(c.kw<std::string>("activation", "relu"))
                             .batch_first(c.kw<bool>("batch_first", false))
                             .norm_first(c.kw<bool>("norm_first", false));
    for (Device dev : wick::test::test_devices()) {
      auto m = std::make_shared<TransformerImpl>(options, kF64);
      check_layer(c, *m, dev, [&](Module& mod, const Inputs& in) -> std::vector<Tensor> {
        auto get = [&](const char* n) { return input_or_none(in, n); };
        return {static_cast<TransformerImpl&>(mod)(in.at("src"), in.at("tgt"), get("src_mask"), get("tgt_mask"),
                                                   get("memory_mask"), get("src_key_padding_mask"),
                                                   get("tgt_key_padding_mask"), get("memory_key_padding_mask"))};
      });
    }
    ++seen;
  }
  CHECK(seen >= 2);
}

TEST_CASE("layers: Embedding padding_idx, GELU tanh, SiLU and LayerNorm without affine match PyTorch", "[nn][oracle]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    std::function<Tensor(const std::vector<Tensor>&)> module_fn, functional_fn;
    if (c.op == "embedding_padding_idx") {
      const int64_t pad = c.kw<int64_t>("padding_idx", 0);
      functional_fn = [pad](const std::vector<Tensor>& x) { return F::embedding(x[0], x[1], pad); };
      // The module (zeroed padding row, no gradient there): the test case below.
    } else if (c.op == "gelu_tanh") {
      functional_fn = [](const std::vector<Tensor>& x) { return F::gelu(x[0], "tanh"); };
      module_fn = [](const std::vector<Tensor>& x) { return GELU(GELUOptions().approximate("tanh"))(x[0]); };
    } else if (c.op == "silu") {
      functional_fn = [](const std::vector<Tensor>& x) { return F::silu(x[0]); };
      module_fn = [](const std::vector<Tensor>& x) { return SiLU()(x[0]); };
    } else if (c.op == "layer_norm_no_affine") {
      const auto shape = c.kwargs.at("normalized_shape").get<std::vector<int64_t>>();
      const double eps = c.kw<double>("eps", 1e-5);
      functional_fn = [=](const std::vector<Tensor>& x) { return F::layer_norm(x[0], shape, {}, {}, eps); };
      module_fn = [=](const std::vector<Tensor>& x) {
        LayerNorm ln(LayerNormOptions(shape).eps(eps).elementwise_affine(false), kF64);
        CHECK(ln->parameters().empty());
        return ln(x[0]);
      };
    } else {
      continue;
    }
    for (Device dev : wick::test::test_devices()) {
      for (const auto& fn : {functional_fn, module_fn}) {
        if (!fn) continue;
        INFO(c.label() << " on " << dev.str());
        auto x = c.leaves(dev);
        Tensor out = fn(x);
        CHECK_ALLCLOSE(out, c.out, kRtol, kAtol);
        auto grads = c.backward(out, x);
        for (size_t j = 0; j < grads.size(); ++j)
          if (c.differentiable[j]) CHECK_ALLCLOSE(grads[j], c.gin[j], kRtol, kAtol);
      }
    }
    ++seen[c.op];
  }
  for (const char* op : {"embedding_padding_idx", "gelu_tanh", "silu", "layer_norm_no_affine"}) {
    INFO(op);
    CHECK(seen[op] > 0);
  }
}

TEST_CASE("layers: the Embedding module's padding_idx row is zero and gets no gradient", "[nn]") {
  for (Device dev : wick::test::test_devices()) {
    Embedding e(EmbeddingOptions(5, 3).padding_idx(-2), kF64);
    e->to(dev);
    CHECK(e->weight()[3].abs().sum().item<double>() == 0.0);
    Tensor idx = tensor(std::vector<int64_t>{3, 0, 3, 4}, {4}, TensorOptions(kInt64)).to(dev);
    Tensor y = e(idx);
    autograd::backward({(y * y + y).sum()});
    const Tensor g = e->weight().grad().to(kCPU);
    CHECK(g[3].abs().sum().item<double>() == 0.0);
    CHECK(g[0].abs().sum().item<double>() > 0.0);
    CHECK(g[4].abs().sum().item<double>() > 0.0);
  }
}
