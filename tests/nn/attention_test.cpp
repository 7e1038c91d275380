// Attention and the transformer layer beyond the oracle: float64 gradchecks, dropout in training
// and eval mode, and matmul on the strided views attention hands it.
#include <catch2/catch.hpp>
#include <cmath>

#include "support/allclose.h"
#include "support/gradcheck.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/allocator.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using TL = std::vector<Tensor>;

namespace {
const TensorOptions kF64(kFloat64);
Tensor rnd(IntArrayRef shape) { return wick::randn(shape, TensorOptions(kFloat64).requires_grad()); }

// fn of the module's own parameters (first `n` table entries) and data: gradcheck inputs are the
// data then those parameters, put into the module's table for each evaluation.
template <class M>
std::function<TL(const TL&)> with_params(std::shared_ptr<M> m, size_t n_data, std::function<TL(M&, const TL&)> run) {
  return [m, n_data, run](const TL& x) {
    for (size_t i = n_data; i < x.size(); ++i) m->set_parameter_entry(i - n_data, x[i]);
    return run(*m, TL(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n_data)));
  };
}
template <class M>
TL own_params(const M& m) {
  TL p;
  for (const auto& e : m.parameter_table())
    if (e.value.defined()) p.push_back(e.value.detach().clone().requires_grad_(true));
  return p;
}
}  // namespace

TEST_CASE("gradcheck: scaled_dot_product_attention plain, causal, bool and float masks", "[nn][gradcheck]") {
  wick::manual_seed(3);
  CHECK_GRADCHECK([](const TL& x) { return TL{F::scaled_dot_product_attention(x[0], x[1], x[2])}; },
                  TL{rnd({2, 3, 4}), rnd({2, 5, 4}), rnd({2, 5, 3})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true)}; },
                  TL{rnd({2, 4, 3}), rnd({2, 4, 3}), rnd({2, 4, 2})});
  const Tensor keep = wick::tensor({1, 0, 1, 1, 1, 1, 0, 0, 1}, {3, 3}).to(kBool);
  CHECK_GRADCHECK([keep](const TL& x) { return TL{F::scaled_dot_product_attention(x[0], x[1], x[2], keep)}; },
                  TL{rnd({1, 3, 2}), rnd({1, 3, 2}), rnd({1, 3, 2})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::scaled_dot_product_attention(x[0], x[1], x[2], x[3], 0.0, false)}; },
                  TL{rnd({2, 3, 2}), rnd({2, 4, 2}), rnd({2, 4, 3}), rnd({3, 4})});
}

TEST_CASE("gradcheck: MultiheadAttention in its inputs and in_proj parameters", "[nn][gradcheck]") {
  wick::manual_seed(4);
  auto m = std::make_shared<MultiheadAttentionImpl>(MultiheadAttentionOptions(4, 2).batch_first(true), kF64);
  const Tensor pad = wick::tensor({0, 0, 1, 0, 0, 0}, {2, 3}).to(kBool);
  auto cross = with_params<MultiheadAttentionImpl>(m, 3, [pad](MultiheadAttentionImpl& a, const TL& x) {
    auto [out, w] = a(x[0], x[1], x[2], pad);
    return TL{out, w};
  });
  TL in = {rnd({2, 2, 4}), rnd({2, 3, 4}), rnd({2, 3, 4})};
  for (const Tensor& p : own_params(*m)) in.push_back(p);
  CHECK_GRADCHECK(cross, in);
  // Self-attention (one fused projection), causal.
  auto self = [m](const TL& x) { return TL{std::get<0>(m->forward(x[0], x[0], x[0], {}, false, {}, true, true))}; };
  CHECK_GRADCHECK(self, TL{rnd({2, 3, 4})});
}

TEST_CASE("gradcheck: TransformerEncoderLayer, pre-norm gelu, causal", "[nn][gradcheck]") {
  wick::manual_seed(5);
  TransformerEncoderLayer layer(
      TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0).activation("gelu").norm_first(true), kF64);
  CHECK_GRADCHECK([layer](const TL& x) mutable { return TL{layer(x[0], Tensor(), Tensor(), true)}; },
                  TL{rnd({3, 2, 4})});
}

TEST_CASE("attention dropout: training mode drops, eval mode is deterministic", "[nn]") {
  wick::manual_seed(6);
  const Tensor q = wick::randn({2, 4, 3}, kF64), k = wick::randn({2, 5, 3}, kF64), v = wick::randn({2, 5, 3}, kF64);
  const Tensor plain = F::scaled_dot_product_attention(q, k, v);
  wick::manual_seed(1);
  const Tensor dropped = F::scaled_dot_product_attention(q, k, v, {}, 0.5);
  wick::manual_seed(1);
  CHECK_ALLCLOSE(F::scaled_dot_product_attention(q, k, v, {}, 0.5), dropped, 0, 0);  // seeded
  CHECK_FALSE(wick::test::allclose(dropped, plain, 1e-6, 1e-6).ok);

  SECTION("MultiheadAttention") {
    MultiheadAttention drop(MultiheadAttentionOptions(6, 2).dropout(0.5), kF64);
    MultiheadAttention none(MultiheadAttentionOptions(6, 2), kF64);
    none->load_state_dict(drop->state_dict());
    const Tensor x = wick::randn({4, 2, 6}, kF64);
    const Tensor reference = std::get<0>(none(x, x, x));
    drop->train(true);
    CHECK_FALSE(wick::test::allclose(std::get<0>(drop(x, x, x)), reference, 1e-6, 1e-6).ok);
    drop->eval();
    CHECK_ALLCLOSE(std::get<0>(drop(x, x, x)), reference, 0, 0);
    CHECK_ALLCLOSE(std::get<0>(drop(x, x, x)), reference, 0, 0);
  }
  SECTION("TransformerEncoderLayer") {
    TransformerEncoderLayer drop(TransformerEncoderLayerOptions(6, 2).dim_feedforward(8).dropout(0.3), kF64);
    TransformerEncoderLayer none(TransformerEncoderLayerOptions(6, 2).dim_feedforward(8).dropout(0.0), kF64);
    none->load_state_dict(drop->state_dict());
    const Tensor x = wick::randn({4, 2, 6}, kF64);
    const Tensor reference = none(x, Tensor(), Tensor(), true);
    drop->train(true);
    CHECK_FALSE(wick::test::allclose(drop(x, Tensor(), Tensor(), true), reference, 1e-6, 1e-6).ok);
    drop->eval();
    CHECK_ALLCLOSE(drop(x, Tensor(), Tensor(), true), reference, 0, 0);
  }
}

TEST_CASE("MultiheadAttention and TransformerEncoderLayer name their parameters as PyTorch", "[nn]") {
  MultiheadAttention mha(6, 3);
  CHECK(mha->named_parameters().keys() ==
        std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
  CHECK(mha->in_proj_bias().abs().sum().item<float>() == 0.0f);  // PyTorch's initialization
  CHECK(MultiheadAttention(MultiheadAttentionOptions(6, 3).bias(false))->named_parameters().keys() ==
        std::vector<std::string>{"in_proj_weight", "out_proj.weight"});
  TransformerEncoderLayer layer(TransformerEncoderLayerOptions(6, 3).dim_feedforward(8));
  std::vector<std::string> children;
  for (const auto& c : layer->child_table()) children.push_back(c.name);
  CHECK(children == std::vector<std::string>{"self_attn", "linear1", "dropout", "linear2", "norm1", "norm2", "dropout1",
                                             "dropout2"});
  CHECK(layer->named_parameters().size() == 12);
  // Unbatched input keeps its shape.
  CHECK(layer(wick::randn({5, 6})).sizes() == IntArrayRef({5, 6}));
}

TEST_CASE("matmul reads batched strided views in place and agrees with contiguous copies", "[nn]") {
  wick::manual_seed(7);
  auto same = [](const Tensor& a, const Tensor& b) {
    CHECK_ALLCLOSE(wick::matmul(a, b), wick::matmul(a.contiguous(), b.contiguous()), 1e-12, 1e-12);
  };
  // Heads split out of [N, L, H*D] (batch dims N, H that merge into no single stride), against
  // the transposed keys; [L, N, H, D] permuted; a broadcast batch next to a real one.
  const Tensor x = wick::randn({2, 5, 3 * 4}, kF64);
  const Tensor q = x.reshape({2, 5, 3, 4}).transpose(1, 2);
  same(q, q.transpose(-2, -1));
  const Tensor y = wick::randn({5, 2, 3 * 4}, kF64).reshape({5, 2, 3, 4}).permute({1, 2, 0, 3});
  same(y, q.transpose(-2, -1));
  same(wick::randn({2, 1, 5, 4}, kF64), wick::randn({3, 4, 2}, kF64));
  same(wick::randn({3, 1, 5, 4}, kF64).expand({3, 2, 5, 4}), wick::randn({2, 6, 4}, kF64).transpose(-1, -2));
  // No copies: on a device of its own, each product allocates its output and nothing else.
  {
    NoGradGuard no_grad;
    const Device dev("cpu:6");
    const Tensor qd = q.to(dev), yd = y.to(dev);
    const Tensor kt = qd.transpose(-2, -1);
    for (const auto& [a, b] : {std::pair{qd, kt}, std::pair{yd, kt}, std::pair{wick::matmul(qd, kt), yd}}) {
      const int64_t before = memory_stats(dev).total_allocations;
      const Tensor product = wick::matmul(a, b);
      CHECK(memory_stats(dev).total_allocations - before == 1);
    }
  }
  // An operand whose own matrix fits no GEMM layout (both strides > 1) is copied.
  same(wick::randn({2, 6, 8}, kF64).slice(1, 0, 6, 2).slice(2, 0, 8, 2), wick::randn({2, 4, 3}, kF64));
}

TEST_CASE("MultiheadAttention: unbatched input is the batch of one, for both layouts, masks and weights", "[nn]") {
  wick::manual_seed(12);
  for (bool batch_first : {false, true}) {
    INFO("batch_first " << batch_first);
    MultiheadAttention m(MultiheadAttentionOptions(6, 2).batch_first(batch_first), kF64);
    const Tensor q = wick::randn({4, 6}, kF64), kv = wick::randn({5, 6}, kF64);
    const Tensor mask = wick::randn({2, 4, 5}, kF64);                                 // [H, L, S]
    const Tensor kpm = wick::tensor({0.0, 1.0, 0.0, 0.0, 1.0}, {5}, kF64).to(kBool);  // [S]
    auto [out, w] = m(q, kv, kv, kpm, true, mask, false);
    const int64_t b = batch_first ? 0 : 1;
    auto [out_b, w_b] = m(q.unsqueeze(b), kv.unsqueeze(b), kv.unsqueeze(b), kpm.unsqueeze(0), true, mask, false);
    CHECK(out.sizes() == IntArrayRef({4, 6}));
    CHECK(w.sizes() == IntArrayRef({2, 4, 5}));
    CHECK_ALLCLOSE(out, out_b.squeeze(b), 0, 0);
    CHECK_ALLCLOSE(w, w_b.squeeze(0), 0, 0);
    // The padded keys get no weight in any head.
    CHECK(w.select(2, 1).abs().sum().item<double>() == 0.0);
    CHECK(w.select(2, 4).abs().sum().item<double>() == 0.0);
  }
}

TEST_CASE("MultiheadAttention: is_causal with a key_padding_mask is the explicit causal mask with it", "[nn]") {
  wick::manual_seed(13);
  MultiheadAttention m(MultiheadAttentionOptions(6, 3), kF64);
  const Tensor x = wick::randn({5, 2, 6}, kF64);
  const Tensor kpm = wick::zeros({2, 5}, kBool);
  kpm.select(0, 1).narrow(0, 3, 2).fill_(1.0);                       // batch 1 pads its last two keys
  const Tensor causal = wick::ones({5, 5}, kF64).triu(1).to(kBool);  // true = not allowed
  auto [a, wa] = m(x, x, x, kpm, true, Tensor(), true, /*is_causal=*/true);
  auto [b, wb] = m(x, x, x, kpm, true, causal, true);
  CHECK_ALLCLOSE(a, b, 0, 0);
  CHECK_ALLCLOSE(wa, wb, 0, 0);
  // Query 0 of batch 0 sees key 0 alone.
  CHECK(wa.select(0, 0).select(0, 0).select(0, 0).item<double>() == 1.0);
}

TEST_CASE("attention: a query whose keys are all masked gives NaN, the others are unchanged", "[nn]") {
  wick::manual_seed(14);
  const Tensor q = wick::randn({1, 2, 3}, kF64), k = wick::randn({1, 2, 3}, kF64), v = wick::randn({1, 2, 3}, kF64);
  const Tensor keep = wick::tensor({0.0, 0.0, 1.0, 1.0}, {2, 2}, kF64).to(kBool);  // row 0 keeps nothing
  const Tensor out = F::scaled_dot_product_attention(q, k, v, keep);
  CHECK(wick::isnan(out.select(1, 0)).all().item<bool>());
  CHECK_ALLCLOSE(out.select(1, 1), F::scaled_dot_product_attention(q, k, v).select(1, 1), 0, 0);
}

TEST_CASE("MultiheadAttention: in_proj_weight is xavier-uniform, the biases zero", "[nn]") {
  wick::manual_seed(15);
  MultiheadAttention m(MultiheadAttentionOptions(16, 4), kF64);
  const double bound = std::sqrt(6.0 / (16 + 48));  // fan_in E, fan_out 3E
  const Tensor w = m->in_proj_weight();
  CHECK(w.abs().max().item<double>() <= bound);
  CHECK(w.abs().max().item<double>() > 0.9 * bound);
  CHECK(w.std().item<double>() == Approx(bound / std::sqrt(3.0)).epsilon(0.1));
  CHECK(m->in_proj_bias().abs().sum().item<double>() == 0.0);
  CHECK(m->out_proj().bias().abs().sum().item<double>() == 0.0);
}

TEST_CASE("TransformerEncoderLayer prints its children as PyTorch 1.13, out_proj as a Linear", "[nn]") {
  // print(torch.nn.TransformerEncoderLayer(6, 2, dim_feedforward=8)); PyTorch's out_proj is a
  // NonDynamicallyQuantizableLinear (a Linear subclass for its quantizer), wick's a Linear.
  CHECK(TransformerEncoderLayer(TransformerEncoderLayerOptions(6, 2).dim_feedforward(8))->to_string() ==
        "TransformerEncoderLayer(\n"
        "  (self_attn): MultiheadAttention(\n"
        "    (out_proj): Linear(in_features=6, out_features=6, bias=True)\n"
        "  )\n"
        "  (linear1): Linear(in_features=6, out_features=8, bias=True)\n"
        "  (dropout): Dropout(p=0.1, inplace=False)\n"
        "  (linear2): Linear(in_features=8, out_features=6, bias=True)\n"
        "  (norm1): LayerNorm((6,), eps=1e-05, elementwise_affine=True)\n"
        "  (norm2): LayerNorm((6,), eps=1e-05, elementwise_affine=True)\n"
        "  (dropout1): Dropout(p=0.1, inplace=False)\n"
        "  (dropout2): Dropout(p=0.1, inplace=False)\n"
        ")");
}
