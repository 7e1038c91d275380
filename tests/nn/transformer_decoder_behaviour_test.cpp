// TransformerDecoderLayer, TransformerDecoder and Transformer beyond the PyTorch oracle
// (layers_oracle_test.cpp): generate_square_subsequent_mask, the decoder's layers applied in order
// then the norm, the Transformer as its encoder then its decoder, the causal flags against causal
// masks, deep-copied layers, PyTorch's initialization, replication, float64 gradchecks and the
// errors. State_dict keys and print(): transformer_decoder_test.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "nn_test_util.h"
#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/small_transformers.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using namespace wick::test::small_transformers;
using Catch::Matchers::Contains;
using TL = std::vector<Tensor>;

namespace {

const TensorOptions kF64(kFloat64);

// [L, S] bool, true above the diagonal: key j > query i is not allowed (MultiheadAttention's
// convention).
Tensor causal_mask(int64_t L, int64_t S, Device d = kCPU) {
  std::vector<double> v(static_cast<size_t>(L * S), 0.0);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = i + 1; j < S; ++j) v[static_cast<size_t>(i * S + j)] = 1;
  return wick::tensor(v, {L, S}, kF64).to(kBool).to(d);
}

}  // namespace

TEST_CASE("TransformerImpl::generate_square_subsequent_mask is 0 on and below the diagonal, -inf above",
          "[nn][transformer]") {
  const double inf = std::numeric_limits<double>::infinity();
  // PyTorch 1.13: Transformer.generate_square_subsequent_mask(3), float32.
  const Tensor m = TransformerImpl::generate_square_subsequent_mask(3);
  CHECK(m.dtype() == kFloat32);
  CHECK(m.device() == kCPU);
  CHECK_FALSE(m.requires_grad());
  CHECK_VALUES(m, {0, -inf, -inf, 0, 0, -inf, 0, 0, 0});
  CHECK_VALUES(TransformerImpl::generate_square_subsequent_mask(1), {0});
  CHECK(TransformerImpl::generate_square_subsequent_mask(0).sizes() == IntArrayRef({0, 0}));
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor d = TransformerImpl::generate_square_subsequent_mask(4, TensorOptions(kFloat64).device(dev));
    CHECK(d.dtype() == kFloat64);
    CHECK(d.device() == dev);
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 4; ++j) CHECK(d[i][j].item<double>() == (j > i ? -inf : 0.0));
  }
  // As a tgt_mask it equals the causal bool mask and tgt_is_causal.
  manual_seed(61);
  TransformerDecoderLayer layer = small_layer();
  const Tensor tgt = wick::randn({4, 2, 4}, kF64), memory = wick::randn({5, 2, 4}, kF64);
  const Tensor with_float = layer(tgt, memory, TransformerImpl::generate_square_subsequent_mask(4, kF64));
  CHECK_ALLCLOSE(with_float, layer(tgt, memory, causal_mask(4, 4)), 1e-12, 1e-14);
  CHECK_ALLCLOSE(with_float, layer(tgt, memory, Tensor(), Tensor(), Tensor(), Tensor(), true), 1e-12, 1e-14);
}

TEST_CASE("TransformerDecoderLayer: tgt_is_causal and memory_is_causal equal causal masks, both norm orders",
          "[nn][transformer]") {
  manual_seed(62);
  for (bool norm_first : {false, true}) {
    CAPTURE(norm_first);
    TransformerDecoderLayer layer = small_layer(norm_first);
    const Tensor tgt = wick::randn({4, 2, 4}, kF64), memory = wick::randn({6, 2, 4}, kF64);
    const Tensor pad = wick::tensor({0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1}, {2, 6}).to(kBool);
    CHECK_ALLCLOSE(layer(tgt, memory, Tensor(), Tensor(), Tensor(), pad, true),
                   layer(tgt, memory, causal_mask(4, 4), Tensor(), Tensor(), pad), 1e-12, 1e-14);
    CHECK_ALLCLOSE(layer(tgt, memory, Tensor(), Tensor(), Tensor(), pad, false, true),
                   layer(tgt, memory, Tensor(), causal_mask(4, 6), Tensor(), pad), 1e-12, 1e-14);
    // The masks matter (so the checks above can tell).
    CHECK_FALSE(test::allclose(layer(tgt, memory), layer(tgt, memory, causal_mask(4, 4)), 1e-6, 1e-6).ok);
    CHECK_FALSE(
        test::allclose(layer(tgt, memory), layer(tgt, memory, Tensor(), Tensor(), Tensor(), pad), 1e-6, 1e-6).ok);
    // Unbatched [T, E] and [S, E] give the batched result's column.
    const Tensor one = layer(tgt.select(1, 0), memory.select(1, 0), causal_mask(4, 4));
    CHECK(one.sizes() == IntArrayRef({4, 4}));
    CHECK_ALLCLOSE(one, layer(tgt, memory, causal_mask(4, 4)).select(1, 0), 1e-12, 1e-14);
  }
}

TEST_CASE("TransformerDecoder applies its layers in order, each with the memory and masks, then the norm",
          "[nn][transformer]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    manual_seed(63);
    TransformerDecoder dec(
        TransformerDecoderOptions(small_layer(true), 3).norm(LayerNorm(LayerNormOptions({4}), kF64).ptr()));
    {
      NoGradGuard no_grad;  // every layer and the norm weights of its own, so that the order matters
      for (Tensor p : dec->parameters()) p.copy_(wick::randn(p.sizes(), kF64) * 0.5);
    }
    dec->to(dev);
    const Tensor tgt = wick::randn({4, 2, 4}, kF64).to(dev), memory = wick::randn({5, 2, 4}, kF64).to(dev);
    const Tensor mask = causal_mask(4, 4, dev);
    const Tensor tgt_pad = wick::tensor({0, 0, 0, 1, 0, 1, 0, 0}, {2, 4}).to(kBool).to(dev);
    const Tensor mem_pad = wick::tensor({0, 0, 1, 0, 0, 0, 0, 0, 0, 1}, {2, 5}).to(kBool).to(dev);
    Tensor x = tgt;
    for (int64_t i = 0; i < 3; ++i) x = dec->layer(i).forward(x, memory, mask, Tensor(), tgt_pad, mem_pad);
    const Tensor want = dec->norm()->forward_tensor(x);
    const Tensor got = dec(tgt, memory, mask, Tensor(), tgt_pad, mem_pad);
    CHECK(got.device() == dev);
    CHECK_ALLCLOSE(got, want, 0, 0);
    Tensor r = tgt;
    for (int64_t i = 2; i >= 0; --i) r = dec->layer(i).forward(r, memory, mask, Tensor(), tgt_pad, mem_pad);
    CHECK_FALSE(test::allclose(dec->norm()->forward_tensor(r), want, 1e-6, 1e-6).ok);
    // tgt_is_causal reaches every layer.
    Tensor c = tgt;
    for (int64_t i = 0; i < 3; ++i) c = dec->layer(i).forward(c, memory, Tensor(), Tensor(), Tensor(), Tensor(), true);
    CHECK_ALLCLOSE(dec(tgt, memory, Tensor(), Tensor(), Tensor(), Tensor(), true), dec->norm()->forward_tensor(c), 0,
                   0);
  }
  // Without a norm the output is the last layer's.
  TransformerDecoder bare(small_layer(), 2);
  CHECK(bare->norm() == nullptr);
  const Tensor tgt = wick::randn({3, 4}, kF64), memory = wick::randn({5, 4}, kF64);
  CHECK_ALLCLOSE(bare(tgt, memory), bare->layer(1).forward(bare->layer(0).forward(tgt, memory), memory), 0, 0);
}

TEST_CASE("TransformerDecoder's layers are deep copies: equal at the start, sharing nothing", "[nn][transformer]") {
  TransformerDecoderLayer proto = small_layer();
  TransformerDecoder dec(proto, 3);
  const StateDict start = proto->state_dict();
  for (int64_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    TransformerDecoderLayerImpl& layer = dec->layer(i);
    CHECK(&layer != proto.get());
    CHECK(layer.options().dim_feedforward() == 6);
    for (const auto& [key, value] : layer.state_dict()) {
      CAPTURE(key);
      CHECK_ALLCLOSE(value, start[key], 0, 0);
      CHECK(value.data_ptr() != start[key].data_ptr());  // own storage
    }
  }
  {
    NoGradGuard no_grad;
    Tensor w = dec->layer(0).multihead_attn().in_proj_weight();
    w.fill_(3.0);
  }
  CHECK(dec->layer(0).multihead_attn().in_proj_weight().max().item<double>() == 3.0);
  CHECK_ALLCLOSE(dec->layer(1).multihead_attn().in_proj_weight(), start["multihead_attn.in_proj_weight"], 0, 0);
  CHECK_ALLCLOSE(proto->multihead_attn().in_proj_weight(), start["multihead_attn.in_proj_weight"], 0, 0);
  CHECK(dec->parameters().size() == 3 * proto->parameters().size());
  // The Transformer's layers are copies too.
  Transformer t = small_transformer(2, 2);
  CHECK(t->decoder().layer(0).linear1().weight().data_ptr() != t->decoder().layer(1).linear1().weight().data_ptr());
  CHECK(t->encoder().layer(0).linear1().weight().data_ptr() != t->encoder().layer(1).linear1().weight().data_ptr());
}

TEST_CASE("Transformer is its encoder then its decoder, batch_first both ways and unbatched", "[nn][transformer]") {
  for (Device dev : wick::test::test_devices()) {
    for (bool batch_first : {false, true}) {
      INFO(dev.str() << " batch_first " << batch_first);
      manual_seed(64);
      Transformer t = small_transformer(2, 2, batch_first);
      t->to(dev);
      auto shape = [&](int64_t len) {
        return batch_first ? std::vector<int64_t>{2, len, 4} : std::vector<int64_t>{len, 2, 4};
      };
      const Tensor src = wick::randn(shape(5), kF64).to(dev), tgt = wick::randn(shape(3), kF64).to(dev);
      const Tensor tgt_mask = TransformerImpl::generate_square_subsequent_mask(3, TensorOptions(kF64).device(dev));
      const Tensor src_pad = wick::tensor({0, 0, 0, 1, 1, 0, 1, 0, 0, 0}, {2, 5}).to(kBool).to(dev);
      const Tensor memory = t->encoder()(src, Tensor(), src_pad);
      const Tensor want = t->decoder()(tgt, memory, tgt_mask, Tensor(), Tensor(), src_pad);
      const Tensor got = t(src, tgt, Tensor(), tgt_mask, Tensor(), src_pad, Tensor(), src_pad);
      CHECK(got.device() == dev);
      CHECK(got.sizes() == tgt.sizes());
      CHECK_ALLCLOSE(got, want, 0, 0);
      // The causal flags are the causal masks.
      CHECK_ALLCLOSE(t(src, tgt, Tensor(), Tensor(), Tensor(), src_pad, Tensor(), src_pad, false, true), got, 1e-12,
                     1e-14);
      // Unbatched [S, E] and [T, E]: the batched result's first sequence.
      const int64_t bdim = batch_first ? 0 : 1;
      const Tensor one = t(src.select(bdim, 0), tgt.select(bdim, 0), Tensor(), tgt_mask);
      CHECK_ALLCLOSE(one, t(src, tgt, Tensor(), tgt_mask).select(bdim, 0), 1e-12, 1e-14);
    }
  }
}

TEST_CASE("Transformer initializes every matrix xavier-uniform, as PyTorch's _reset_parameters", "[nn][transformer]") {
  manual_seed(65);
  Transformer t(TransformerOptions(16, 4, 1, 1).dim_feedforward(32), kF64);
  int matrices = 0;
  for (const auto& [name, p] : t->named_parameters()) {
    CAPTURE(name);
    if (p.dim() < 2) continue;
    ++matrices;
    const double bound = std::sqrt(6.0 / static_cast<double>(p.size(0) + p.size(1)));
    CHECK(p.abs().max().item<double>() <= bound);
    CHECK(p.abs().max().item<double>() > 0.8 * bound);
  }
  CHECK(matrices == 10);  // encoder: in_proj, out_proj, linear1, linear2; decoder: two attentions' and linear1, 2
  // The vectors keep their layers' initialization: zero attention biases, unit norm weights.
  CHECK(t->decoder().layer(0).multihead_attn().in_proj_bias().abs().sum().item<double>() == 0.0);
  CHECK(t->encoder().norm()->named_parameters()["weight"].eq(1.0).all().item<bool>());
  CHECK(t->decoder().norm()->named_parameters()["bias"].eq(0.0).all().item<bool>());
  // PyTorch's defaults.
  const TransformerOptions d;
  CHECK(d.d_model() == 512);
  CHECK(d.nhead() == 8);
  CHECK(d.num_encoder_layers() == 6);
  CHECK(d.num_decoder_layers() == 6);
  CHECK(d.dim_feedforward() == 2048);
  CHECK(d.dropout() == 0.1);
  CHECK(d.activation() == "relu");
  CHECK(d.layer_norm_eps() == 1e-5);
  CHECK_FALSE(d.batch_first());
  CHECK_FALSE(d.norm_first());
}

TEST_CASE("TransformerDecoder and Transformer replicate: a rewired copy computes with its own tensors",
          "[nn][transformer]") {
  manual_seed(66);
  const Device other("cpu:1");
  auto dec =
      TransformerDecoder(TransformerDecoderOptions(small_layer(), 2).norm(LayerNorm(LayerNormOptions({4}), kF64).ptr()))
          .ptr();
  const Tensor tgt = wick::randn({3, 2, 4}, kF64), memory = wick::randn({4, 2, 4}, kF64);
  const Tensor want = dec->forward(tgt, memory);
  auto copy = test_util::rewire_copy(dec, [&](const Tensor& t) { return test_util::moved(t, other); });
  auto& moved = dynamic_cast<TransformerDecoderImpl&>(*copy);
  for (const Tensor& p : moved.parameters()) CHECK(p.device() == other);
  CHECK_ALLCLOSE(moved.forward(tgt.to(other), memory.to(other)), want, 0, 0);
  CHECK_ALLCLOSE(dec->forward(tgt, memory), want, 0, 0);

  auto t = small_transformer(1, 2).ptr();
  const Tensor out = t->forward(memory, tgt);
  auto tcopy = test_util::rewire_copy(t, [&](const Tensor& x) { return test_util::moved(x, other); });
  CHECK_ALLCLOSE(dynamic_cast<TransformerImpl&>(*tcopy).forward(memory.to(other), tgt.to(other)), out, 0, 0);
}

TEST_CASE("gradcheck: TransformerDecoderLayer post- and pre-norm in tgt, memory and a parameter of each block",
          "[nn][gradcheck][transformer]") {
  manual_seed(67);
  const Tensor mem_pad = wick::tensor({0, 0, 1, 0, 0, 0, 0, 0}, {2, 4}).to(kBool);
  for (bool norm_first : {false, true}) {
    CAPTURE(norm_first);
    auto layer = small_layer(norm_first).ptr();
    auto run = [layer, mem_pad](const TL& x) {
      layer->multihead_attn().set_parameter_entry(0, x[2]);  // in_proj_weight
      layer->linear2().set_parameter_entry(0, x[3]);         // weight
      layer->norm3().set_parameter_entry(0, x[4]);           // weight
      return TL{layer->forward(x[0], x[1], causal_mask(3, 3), Tensor(), Tensor(), mem_pad)};
    };
    auto leaf = [](const Tensor& t) { return t.detach().clone().requires_grad_(true); };
    TL in = {wick::randn({3, 2, 4}, TensorOptions(kFloat64).requires_grad()),
             wick::randn({4, 2, 4}, TensorOptions(kFloat64).requires_grad()),
             leaf(layer->multihead_attn().in_proj_weight()), leaf(layer->linear2().weight()),
             leaf(layer->norm3().weight())};
    CHECK_GRADCHECK(run, in);
  }
  // One backward through a Transformer reaches every parameter.
  Transformer t = small_transformer(1, 1);
  const Tensor out = t(wick::randn({5, 2, 4}, kF64), wick::randn({3, 2, 4}, kF64), Tensor(),
                       TransformerImpl::generate_square_subsequent_mask(3, kF64));
  (out * wick::randn(out.sizes(), kF64)).sum().backward();
  for (const auto& [name, p] : t->named_parameters()) {
    CAPTURE(name);
    REQUIRE(p.grad().defined());
    CHECK(p.grad().abs().sum().item<double>() > 0);
  }
}

TEST_CASE("TransformerDecoderLayer, TransformerDecoder and Transformer refuse bad options and shapes",
          "[nn][transformer][errors]") {
  // Shapes: PyTorch's Transformer checks, as ValueErrors naming the shapes.
  Transformer t = small_transformer(1, 1);
  const Tensor src = wick::zeros({5, 2, 4}, kF64);
  REQUIRE_THROWS_AS(t(src, wick::zeros({3, 3, 4}, kF64)), ValueError);
  CHECK_THROWS_WITH(t(src, wick::zeros({3, 3, 4}, kF64)), Contains("Transformer") && Contains("[5, 2, 4]") &&
                                                              Contains("[3, 3, 4]") && Contains("same batch size"));
  Transformer bf = small_transformer(1, 1, true);
  REQUIRE_THROWS_AS(bf(wick::zeros({2, 5, 4}, kF64), wick::zeros({3, 5, 4}, kF64)), ValueError);
  CHECK_THROWS_WITH(bf(wick::zeros({2, 5, 4}, kF64), wick::zeros({3, 5, 4}, kF64)),
                    Contains("[2, 5, 4]") && Contains("[3, 5, 4]") && Contains("batch_first"));
  REQUIRE_THROWS_AS(t(src, wick::zeros({3, 2, 6}, kF64)), ValueError);
  CHECK_THROWS_WITH(t(src, wick::zeros({3, 2, 6}, kF64)), Contains("[3, 2, 6]") && Contains("d_model = 4"));
  REQUIRE_THROWS_AS(t(src, wick::zeros({3, 4}, kF64)), ValueError);
  CHECK_THROWS_WITH(t(src, wick::zeros({3, 4}, kF64)), Contains("[5, 2, 4]") && Contains("[3, 4]") && Contains("3-d"));
  // The decoder layer's inputs.
  TransformerDecoderLayer layer = small_layer();
  REQUIRE_THROWS_AS(layer(wick::zeros({3, 2, 4}, kF64), wick::zeros({5, 2, 6}, kF64)), ValueError);
  CHECK_THROWS_WITH(
      layer(wick::zeros({3, 2, 4}, kF64), wick::zeros({5, 2, 6}, kF64)),
      Contains("TransformerDecoderLayer") && Contains("memory") && Contains("[5, 2, 6]") && Contains("d_model = 4"));
  REQUIRE_THROWS_AS(layer(wick::zeros({3, 2, 4}, kF64), Tensor()), ValueError);
  CHECK_THROWS_WITH(layer(wick::zeros({3, 2, 4}, kF64), Tensor()), Contains("memory") && Contains("undefined"));
  // Options.
  REQUIRE_THROWS_AS(TransformerDecoderLayer(TransformerDecoderLayerOptions(4, 2).activation("swish")), ValueError);
  CHECK_THROWS_WITH(TransformerDecoderLayer(TransformerDecoderLayerOptions(4, 2).activation("swish")),
                    Contains("TransformerDecoderLayer") && Contains("activation") && Contains("swish"));
  REQUIRE_THROWS_AS(TransformerDecoderLayer(TransformerDecoderLayerOptions(4, 2).dim_feedforward(0)), ValueError);
  CHECK_THROWS_WITH(TransformerDecoderLayer(TransformerDecoderLayerOptions(4, 2).dim_feedforward(0)),
                    Contains("TransformerDecoderLayer") && Contains("dim_feedforward"));
  REQUIRE_THROWS_AS(TransformerDecoderLayer(TransformerDecoderLayerOptions(6, 4)), ValueError);  // 4 heads, 6 dims
  CHECK_THROWS_WITH(TransformerDecoderLayer(TransformerDecoderLayerOptions(6, 4)), Contains("divisible"));
  for (int64_t n : {0, -1}) {
    CAPTURE(n);
    REQUIRE_THROWS_AS(TransformerDecoder(small_layer(), n), ValueError);
    CHECK_THROWS_WITH(TransformerDecoder(small_layer(), n), Contains("TransformerDecoder") &&
                                                                Contains("num_layers must be at least 1") &&
                                                                Contains(std::to_string(n)));
  }
  REQUIRE_THROWS_AS(TransformerDecoder(TransformerDecoderLayer(nullptr), 2), ValueError);
  CHECK_THROWS_WITH(TransformerDecoder(TransformerDecoderLayer(nullptr), 2), Contains("decoder_layer"));
  REQUIRE_THROWS_AS(Transformer(TransformerOptions(4, 2, 1, 0)), ValueError);
  CHECK_THROWS_WITH(Transformer(TransformerOptions(4, 2, 1, 0)),
                    Contains("TransformerDecoder") && Contains("num_layers must be at least 1"));
  REQUIRE_THROWS_AS(Transformer(TransformerOptions(4, 2).activation("tanh")), ValueError);
  CHECK_THROWS_WITH(Transformer(TransformerOptions(4, 2).activation("tanh")),
                    Contains("TransformerEncoderLayer") && Contains("tanh"));
  REQUIRE_THROWS_AS(TransformerImpl::generate_square_subsequent_mask(-1), ValueError);
  CHECK_THROWS_WITH(TransformerImpl::generate_square_subsequent_mask(-1),
                    Contains("generate_square_subsequent_mask") && Contains("-1"));
}
