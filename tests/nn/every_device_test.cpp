// Every nn layer, loss and optimizer, one test body on every test device (tests/support/
// devices.h), compared with cpu:0: the layer's output, its parameters' and input's gradients and
// its buffers after a training forward; each loss and its gradient; three optimizer steps. The
// module is built on the CPU from one seed and moved, so every device starts from the same values.
// CPU devices run the same kernels and must agree bit for bit; a GPU agrees to rtol 1e-12 in
// float64.
#include <wick/nn/nn.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <functional>
#include <map>

#include "support/allclose.h"
#include "support/devices.h"

using namespace wick;

namespace {

Tensor data(IntArrayRef shape, uint64_t seed, Device d) {
  manual_seed(seed);
  return randn(shape, kFloat64).to(d);
}

// Output, input gradient, then each parameter's gradient and each buffer, in registration order.
template <typename Holder>
std::vector<Tensor> layer_run(std::function<Holder()> make, std::vector<int64_t> in_shape, Device d) {
  manual_seed(11);
  Holder m = make();
  m->to(d);
  m->train(true);
  Tensor x = data(in_shape, 12, d).requires_grad_(true);
  manual_seed(13);  // dropout draws from here, on every device
  Tensor y = m(x);
  Tensor up = data(y.sizes(), 14, d);
  autograd::backward({y}, {up});
  std::vector<Tensor> r = {y, x.grad()};
  for (const Tensor& p : m->parameters()) r.push_back(p.grad());
  for (const Tensor& b : m->buffers()) r.push_back(b);
  return r;
}

template <typename Holder>
std::function<std::vector<Tensor>(Device)> layer(std::function<Holder()> make, std::vector<int64_t> in_shape) {
  return [make, in_shape](Device d) { return layer_run<Holder>(make, in_shape, d); };
}

TensorOptions f64() { return TensorOptions(kFloat64); }
using Pads = std::vector<int64_t>;

// A loss of random logits and targets, and the logits' gradient.
std::function<std::vector<Tensor>(Device)> loss(std::function<Tensor(const Tensor&, const Tensor&)> f,
                                                bool class_target) {
  return [f, class_target](Device d) {
    Tensor x = data({6, 5}, 21, d).requires_grad_(true);
    Tensor t = class_target ? tensor(std::vector<int64_t>{0, 4, 2, 2, 1, 3}, {6}, TensorOptions(kInt64)).to(d)
                            : data({6, 5}, 22, d);
    Tensor l = f(x, t);
    autograd::backward({l});
    return std::vector<Tensor>{l, x.grad()};
  };
}

// Three steps of an optimizer on a Linear(4, 3) under an MSE loss; the parameters after each.
std::function<std::vector<Tensor>(Device)> optimizer(
    std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)> make) {
  return [make](Device d) {
    manual_seed(31);
    nn::Linear fc(nn::LinearOptions(4, 3), f64());
    fc->to(d);
    auto opt = make(fc->parameters());
    std::vector<Tensor> r;
    for (int s = 0; s < 3; ++s) {
      opt->zero_grad();
      Tensor l = nn::functional::mse_loss(fc(data({5, 4}, 32 + s, d)), data({5, 3}, 40 + s, d));
      autograd::backward({l});
      opt->step();
      for (const Tensor& p : fc->parameters()) r.push_back(p.detach().clone());
    }
    return r;
  };
}

const std::map<std::string, std::function<std::vector<Tensor>(Device)>>& cases() {
  namespace F = nn::functional;
  using namespace nn;
  static const std::map<std::string, std::function<std::vector<Tensor>(Device)>> c = {
      {"Linear", layer<Linear>([] { return Linear(LinearOptions(5, 3), f64()); }, {4, 5})},
      {"Conv2d",
       layer<Conv2d>([] { return Conv2d(Conv2dOptions(2, 4, 3).stride(2).padding(1), f64()); }, {2, 2, 7, 6})},
      {"ConvTranspose2d", layer<ConvTranspose2d>(
                              [] {
                                return ConvTranspose2d(
                                    ConvTranspose2dOptions(4, 2, 3).stride(2).padding(1).output_padding(1).groups(2),
                                    f64());
                              },
                              {2, 4, 5, 4})},
      {"ConvTranspose1d",
       layer<ConvTranspose1d>(
           [] { return ConvTranspose1d(ConvTranspose1dOptions(3, 4, 3).stride(2).dilation(2), f64()); }, {2, 3, 6})},
      {"BatchNorm1d", layer<BatchNorm1d>([] { return BatchNorm1d(BatchNorm1dOptions(3), f64()); }, {5, 3})},
      {"BatchNorm2d", layer<BatchNorm2d>([] { return BatchNorm2d(BatchNorm2dOptions(3), f64()); }, {2, 3, 4, 4})},
      {"LayerNorm", layer<LayerNorm>([] { return LayerNorm(LayerNormOptions({4}), f64()); }, {3, 4})},
      {"GroupNorm", layer<GroupNorm>([] { return GroupNorm(GroupNormOptions(2, 4), f64()); }, {3, 4, 5})},
      {"InstanceNorm1d",
       layer<InstanceNorm1d>([] { return InstanceNorm1d(InstanceNorm1dOptions(3), f64()); }, {2, 3, 5})},
      {"InstanceNorm2d tracking",
       layer<InstanceNorm2d>(
           [] { return InstanceNorm2d(InstanceNorm2dOptions(3).affine(true).track_running_stats(true), f64()); },
           {2, 3, 4, 4})},
      {"MaxPool2d", layer<MaxPool2d>([] { return MaxPool2d(MaxPool2dOptions(2).stride(1)); }, {2, 3, 5, 5})},
      {"AvgPool2d", layer<AvgPool2d>([] { return AvgPool2d(AvgPool2dOptions(3).stride(2).padding(1)); }, {2, 3, 6, 6})},
      {"AdaptiveAvgPool2d",
       layer<AdaptiveAvgPool2d>([] { return AdaptiveAvgPool2d(AdaptiveAvgPool2dOptions(3)); }, {2, 3, 7, 5})},
      {"Dropout", layer<Dropout>([] { return Dropout(DropoutOptions(0.3)); }, {4, 6})},
      {"AlphaDropout", layer<AlphaDropout>([] { return AlphaDropout(AlphaDropoutOptions(0.3)); }, {4, 6})},
      {"FeatureAlphaDropout",
       layer<FeatureAlphaDropout>([] { return FeatureAlphaDropout(FeatureAlphaDropoutOptions(0.3)); }, {4, 6, 3})},
      {"ChannelShuffle", layer<ChannelShuffle>([] { return ChannelShuffle(3); }, {2, 6, 2})},
      {"ReflectionPad2d", layer<ReflectionPad2d>([] { return ReflectionPad2d(Pads{2, 1, -1, 3}); }, {2, 3, 5, 4})},
      {"ReplicationPad3d", layer<ReplicationPad3d>([] { return ReplicationPad3d(Pads{1, 3, 0, 2, 2, -1}); }, {3, 2, 3, 2})},
      {"ConstantPad1d", layer<ConstantPad1d>([] { return ConstantPad1d(Pads{-1, 3}, 2.5); }, {2, 3, 4})},
      {"FractionalMaxPool2d",
       layer<FractionalMaxPool2d>(
           [] {
             return FractionalMaxPool2d(
                 FractionalMaxPool2dOptions(2).output_size(Int2(4, 3))._random_samples(rand({2, 3, 2}, f64())));
           },
           {2, 3, 7, 6})},
      {"FractionalMaxPool3d",
       layer<FractionalMaxPool3d>(
           [] {
             return FractionalMaxPool3d(
                 FractionalMaxPool3dOptions(2).output_ratio(0.5)._random_samples(rand({2, 2, 3}, f64())));
           },
           {2, 2, 5, 6, 4})},
      {"CrossMapLRN2d",
       layer<CrossMapLRN2d>([] { return CrossMapLRN2d(CrossMapLRN2dOptions(3).alpha(0.5)); }, {2, 5, 2, 3})},
      {"Functional", layer<Functional>([] { return Functional(F::channel_shuffle, int64_t{2}); }, {2, 4, 3})},
      {"gumbel_softmax hard",
       [](Device d) {
         Tensor x = data({4, 5}, 21, d).requires_grad_(true);
         manual_seed(13);
         Tensor y = F::gumbel_softmax(x, F::GumbelSoftmaxFuncOptions().tau(0.5).hard(true));
         autograd::backward({y}, {data(y.sizes(), 14, d)});
         return std::vector<Tensor>{y, x.grad()};
       }},
      {"GELU", layer<GELU>([] { return GELU(GELUOptions().approximate("tanh")); }, {4, 6})},
      {"Softmax", layer<Softmax>([] { return Softmax(SoftmaxOptions(1)); }, {4, 6})},
      {"Sequential", layer<Sequential>(
                         [] {
                           return Sequential(Linear(LinearOptions(6, 8), f64()), ReLU(), Tanh(),
                                             Linear(LinearOptions(8, 2), f64()), Sigmoid(), Flatten());
                         },
                         {4, 6})},
      {"Embedding",
       [](Device d) {
         manual_seed(11);
         Embedding e(EmbeddingOptions(7, 3).padding_idx(0), f64());
         e->to(d);
         Tensor i = tensor(std::vector<int64_t>{0, 3, 6, 3, 1}, {5}, TensorOptions(kInt64)).to(d);
         Tensor y = e(i);
         autograd::backward({y}, {data(y.sizes(), 14, d)});
         return std::vector<Tensor>{y, e->weight().grad()};
       }},
      {"SiLU", layer<SiLU>([] { return SiLU(); }, {4, 6})},
      {"LayerNorm without affine",
       layer<LayerNorm>([] { return LayerNorm(LayerNormOptions({4}).elementwise_affine(false), f64()); }, {3, 4})},
      {"MultiheadAttention",
       [](Device d) {
         manual_seed(11);
         MultiheadAttention m(MultiheadAttentionOptions(6, 2).dropout(0.2), f64());
         m->to(d);
         Tensor q = data({4, 2, 6}, 12, d).requires_grad_(true), kv = data({5, 2, 6}, 15, d).requires_grad_(true);
         Tensor pad = data({2, 5}, 16, d).gt(1.0);
         manual_seed(13);
         auto [y, w] = m(q, kv, kv, pad, true, Tensor(), false);
         autograd::backward({y, w}, {data(y.sizes(), 14, d), data(w.sizes(), 17, d)});
         std::vector<Tensor> r = {y, w, q.grad(), kv.grad()};
         for (const Tensor& p : m->parameters()) r.push_back(p.grad());
         return r;
       }},
      {"MultiheadAttention kdim, vdim, add_bias_kv, add_zero_attn",
       [](Device d) {
         manual_seed(11);
         MultiheadAttention m(
             MultiheadAttentionOptions(4, 2).kdim(3).vdim(5).add_bias_kv(true).add_zero_attn(true).dropout(0.3), f64());
         m->to(d);
         Tensor q = data({3, 2, 4}, 12, d).requires_grad_(true), k = data({5, 2, 3}, 15, d).requires_grad_(true);
         Tensor v = data({5, 2, 5}, 18, d).requires_grad_(true);
         manual_seed(13);
         Tensor y, w;
         std::tie(y, w) = m(q, k, v, data({2, 5}, 16, d).gt(1.0), true, Tensor(), false);
         autograd::backward({y, w}, {data(y.sizes(), 14, d), data(w.sizes(), 17, d)});
         std::vector<Tensor> r = {y, w, q.grad(), k.grad(), v.grad()};
         for (const Tensor& p : m->parameters()) r.push_back(p.grad());
         return r;
       }},
      {"F::multi_head_attention_forward",
       [](Device d) {
         // Separate kdim / vdim weights, bias_k / bias_v, add_zero_attn, a float attn_mask and
         // training dropout (drawn from one seed on every device).
         auto leaf = [d](IntArrayRef shape, uint64_t seed) { return data(shape, seed, d).requires_grad_(true); };
         const std::vector<Tensor> x = {leaf({3, 2, 4}, 21), leaf({5, 2, 3}, 22), leaf({5, 2, 5}, 23),
                                        leaf({4, 4}, 24),    leaf({4, 3}, 25),    leaf({4, 5}, 26),
                                        leaf({12}, 27),      leaf({1, 1, 4}, 28), leaf({1, 1, 4}, 29),
                                        leaf({4, 4}, 30),    leaf({4}, 31),       leaf({3, 5}, 32)};
         F::MultiheadAttentionForwardFuncOptions o(4, 2, {}, x[6], x[7], x[8], true, 0.3, x[9], x[10]);
         o.use_separate_proj_weight(true).q_proj_weight(x[3]).k_proj_weight(x[4]).v_proj_weight(x[5]);
         o.attn_mask(x[11]).average_attn_weights(false);
         manual_seed(13);
         Tensor y, w;
         std::tie(y, w) = F::multi_head_attention_forward(x[0], x[1], x[2], o);
         autograd::backward({y, w}, {data(y.sizes(), 14, d), data(w.sizes(), 17, d)});
         std::vector<Tensor> r = {y, w};
         for (const Tensor& t : x) r.push_back(t.grad());
         return r;
       }},
      {"TransformerEncoderLayer",
       [](Device d) {
         manual_seed(11);
         TransformerEncoderLayer m(
             TransformerEncoderLayerOptions(6, 2).dim_feedforward(8).dropout(0.2).activation("gelu").batch_first(true),
             f64());
         m->to(d);
         Tensor x = data({2, 5, 6}, 12, d).requires_grad_(true);
         manual_seed(13);
         Tensor y = m(x, Tensor(), Tensor(), true);
         autograd::backward({y}, {data(y.sizes(), 14, d)});
         std::vector<Tensor> r = {y, x.grad()};
         for (const Tensor& p : m->parameters()) r.push_back(p.grad());
         return r;
       }},
      {"TransformerDecoderLayer",
       [](Device d) {
         manual_seed(11);
         TransformerDecoderLayer m(TransformerDecoderLayerOptions(6, 2)
                                       .dim_feedforward(8)
                                       .dropout(0.2)
                                       .activation("gelu")
                                       .batch_first(true)
                                       .norm_first(true),
                                   f64());
         m->to(d);
         Tensor x = data({2, 4, 6}, 12, d).requires_grad_(true), mem = data({2, 5, 6}, 15, d).requires_grad_(true);
         Tensor pad = data({2, 5}, 16, d).gt(1.0);
         manual_seed(13);
         Tensor y = m(x, mem, Tensor(), Tensor(), Tensor(), pad, true);
         autograd::backward({y}, {data(y.sizes(), 14, d)});
         std::vector<Tensor> r = {y, x.grad(), mem.grad()};
         for (const Tensor& p : m->parameters()) r.push_back(p.grad());
         return r;
       }},
      {"Transformer",
       [](Device d) {
         manual_seed(11);
         Transformer m(TransformerOptions(6, 2, 1, 2).dim_feedforward(8).dropout(0.2), f64());
         m->to(d);
         Tensor src = data({5, 2, 6}, 12, d).requires_grad_(true), tgt = data({4, 2, 6}, 15, d).requires_grad_(true);
         Tensor pad = data({2, 5}, 16, d).gt(1.0);
         manual_seed(13);
         Tensor y = m(src, tgt, Tensor(), TransformerImpl::generate_square_subsequent_mask(4, f64().device(d)),
                      Tensor(), pad, Tensor(), pad);
         autograd::backward({y}, {data(y.sizes(), 14, d)});
         std::vector<Tensor> r = {y, src.grad(), tgt.grad()};
         for (const Tensor& p : m->parameters()) r.push_back(p.grad());
         return r;
       }},
      {"LSTM",
       [](Device d) {
         manual_seed(11);
         LSTM m(LSTMOptions(3, 4).num_layers(2).dropout(0.2).batch_first(true), f64());
         m->to(d);
         Tensor x = data({2, 5, 3}, 12, d).requires_grad_(true), h = data({2, 2, 4}, 15, d).requires_grad_(true);
         manual_seed(13);
         auto [y, s] = m(x, std::tuple<Tensor, Tensor>{h, data({2, 2, 4}, 16, d)});
         autograd::backward({y, std::get<1>(s)}, {data(y.sizes(), 14, d), data({2, 2, 4}, 17, d)});
         std::vector<Tensor> r = {y, std::get<0>(s), std::get<1>(s), x.grad(), h.grad()};
         for (const Tensor& p : m->parameters()) r.push_back(p.grad());
         return r;
       }},
      {"GRU",
       [](Device d) {
         manual_seed(11);
         GRU m(GRUOptions(3, 4).num_layers(2).dropout(0.2).bidirectional(true), f64());
         m->to(d);
         Tensor x = data({5, 2, 3}, 12, d).requires_grad_(true);
         manual_seed(13);
         auto [y, h] = m(x);
         autograd::backward({y, h}, {data(y.sizes(), 14, d), data(h.sizes(), 17, d)});
         std::vector<Tensor> r = {y, h, x.grad()};
         for (const Tensor& p : m->parameters()) r.push_back(p.grad());
         return r;
       }},
      {"RNN",
       [](Device d) {
         manual_seed(11);
         RNN m(RNNOptions(3, 4).num_layers(2).nonlinearity(kReLU).dropout(0.2).bidirectional(true), f64());
         m->to(d);
         Tensor x = data({5, 2, 3}, 12, d).requires_grad_(true), h = data({4, 2, 4}, 15, d).requires_grad_(true);
         manual_seed(13);
         auto [y, hn] = m(x, h);
         autograd::backward({y, hn}, {data(y.sizes(), 14, d), data(hn.sizes(), 17, d)});
         std::vector<Tensor> r = {y, hn, x.grad(), h.grad()};
         for (const Tensor& p : m->parameters()) r.push_back(p.grad());
         return r;
       }},
      {"RNNCell, LSTMCell and GRUCell",
       [](Device d) {
         manual_seed(11);
         RNNCell rnn(RNNCellOptions(3, 4).nonlinearity(kTanh), f64());
         LSTMCell lstm(3, 4, f64());
         GRUCell gru(GRUCellOptions(3, 4).bias(false), f64());
         rnn->to(d);
         lstm->to(d);
         gru->to(d);
         Tensor x = data({2, 3}, 12, d).requires_grad_(true), h = data({2, 4}, 15, d).requires_grad_(true);
         Tensor a = rnn(x, h);
         auto [b, c] = lstm(x, std::tuple<Tensor, Tensor>{h, data({2, 4}, 16, d)});
         Tensor g = gru(x[0], h[1]);  // unbatched
         autograd::backward({a, b, c, g}, {data(a.sizes(), 14, d), data(b.sizes(), 17, d), data(c.sizes(), 18, d),
                                           data(g.sizes(), 19, d)});
         std::vector<Tensor> r = {a, b, c, g, x.grad(), h.grad()};
         for (const Module* m : {static_cast<const Module*>(rnn.get()), static_cast<const Module*>(lstm.get()),
                                 static_cast<const Module*>(gru.get())})
           for (const Tensor& p : m->parameters()) r.push_back(p.grad());
         return r;
       }},
      {"cross_entropy", loss([](const Tensor& x, const Tensor& t) { return F::cross_entropy(x, t); }, true)},
      {"cross_entropy smoothed",
       loss([](const Tensor& x, const Tensor& t) { return F::cross_entropy(x, t, {}, nn::Reduction::Sum, -100, 0.1); },
            true)},
      {"nll_loss", loss([](const Tensor& x, const Tensor& t) { return F::nll_loss(F::log_softmax(x, 1), t); }, true)},
      {"mse_loss", loss([](const Tensor& x, const Tensor& t) { return F::mse_loss(x, t); }, false)},
      {"binary_cross_entropy_with_logits",
       loss([](const Tensor& x, const Tensor& t) { return F::binary_cross_entropy_with_logits(x, sigmoid(t)); },
            false)},
      {"SGD", optimizer([](std::vector<Tensor> p) {
         return std::make_unique<wick::optim::SGD>(
             p, wick::optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(0.01));
       })},
      {"Adam", optimizer([](std::vector<Tensor> p) {
         return std::make_unique<wick::optim::Adam>(p, wick::optim::AdamOptions(0.01).amsgrad(true).weight_decay(0.1));
       })},
      {"AdamW", optimizer([](std::vector<Tensor> p) {
         return std::make_unique<wick::optim::AdamW>(p, wick::optim::AdamWOptions(0.01));
       })},
  };
  return c;
}

}  // namespace

TEST_CASE("every device: each nn layer, loss and optimizer agrees with cpu:0") {
  for (const auto& [name, run] : cases()) {
    INFO(name << " on cpu:0");
    const std::vector<Tensor> reference = run(kCPU);
    for (const Device& d : test::test_devices()) {
      if (d == kCPU) continue;
      INFO(name << " on " << d);
      const std::vector<Tensor> got = run(d);
      REQUIRE(got.size() == reference.size());
      for (size_t k = 0; k < got.size(); ++k) {
        INFO("result " << k);
        REQUIRE(got[k].defined() == reference[k].defined());
        if (!got[k].defined()) continue;
        CHECK(got[k].device() == d);
        if (d.is_cpu()) {
          CHECK_ALLCLOSE(got[k], reference[k], 0.0, 0.0);
        } else {
          CHECK_ALLCLOSE(got[k], reference[k], 1e-12, 1e-14);
        }
      }
    }
  }
}
