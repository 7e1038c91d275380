// LSTM and GRU beyond the oracle: float64 gradchecks in the input, the states and every
// parameter (one and two directions); unbatched input; dropout between layers; parameter names.
#include <catch2/catch.hpp>
#include <cmath>

#include "nn_test_util.h"
#include "support/allclose.h"
#include "support/gradcheck.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using TL = std::vector<Tensor>;

namespace {
const TensorOptions kF64(kFloat64);
Tensor rnd(IntArrayRef shape) { return wick::randn(shape, TensorOptions(kFloat64).requires_grad()); }
}  // namespace
using test_util::set_params;
using test_util::with_params;

TEST_CASE("gradcheck: LSTM, 2 layers, in the input, the states and every parameter", "[nn][gradcheck]") {
  wick::manual_seed(8);
  LSTM m(LSTMOptions(2, 3).num_layers(2).batch_first(true), kF64);
  auto fn = [m](const TL& x) mutable {
    set_params(*m, x, 3);
    auto [out, s] = m(x[0], std::tuple<Tensor, Tensor>{x[1], x[2]});
    return TL{out, std::get<0>(s), std::get<1>(s)};
  };
  CHECK_GRADCHECK(fn, with_params(*m, {rnd({2, 3, 2}), rnd({2, 2, 3}), rnd({2, 2, 3})}));
}

TEST_CASE("gradcheck: GRU, 2 layers, in the input, the state and every parameter", "[nn][gradcheck]") {
  wick::manual_seed(9);
  GRU m(GRUOptions(2, 3).num_layers(2), kF64);
  auto fn = [m](const TL& x) mutable {
    set_params(*m, x, 2);
    auto [out, h] = m(x[0], x[1]);
    return TL{out, h};
  };
  CHECK_GRADCHECK(fn, with_params(*m, {rnd({3, 2, 2}), rnd({2, 2, 3})}));
}

TEST_CASE("gradcheck: bidirectional LSTM and GRU, 2 layers", "[nn][gradcheck]") {
  wick::manual_seed(11);
  LSTM lstm(LSTMOptions(2, 2).num_layers(2).bidirectional(true), kF64);
  auto f = [lstm](const TL& x) mutable {
    set_params(*lstm, x, 1);
    auto [out, s] = lstm(x[0]);
    return TL{out, std::get<0>(s), std::get<1>(s)};
  };
  CHECK_GRADCHECK(f, with_params(*lstm, {rnd({3, 2, 2})}));
  GRU gru(GRUOptions(2, 2).num_layers(2).bidirectional(true).batch_first(true), kF64);
  auto g = [gru](const TL& x) mutable {
    set_params(*gru, x, 2);
    auto [out, h] = gru(x[0], x[1]);
    return TL{out, h};
  };
  CHECK_GRADCHECK(g, with_params(*gru, {rnd({2, 3, 2}), rnd({4, 2, 2})}));
}

TEST_CASE("LSTM and GRU: PyTorch's parameter names, unbatched input, bias(false), dropout between layers", "[nn]") {
  wick::manual_seed(10);
  LSTM lstm(LSTMOptions(3, 4).num_layers(2), kF64);
  CHECK(lstm->named_parameters().keys() == std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0",
                                                                    "bias_hh_l0", "weight_ih_l1", "weight_hh_l1",
                                                                    "bias_ih_l1", "bias_hh_l1"});
  CHECK(lstm->named_parameters()["weight_ih_l0"].sizes() == IntArrayRef({16, 3}));
  CHECK(lstm->named_parameters()["weight_hh_l1"].sizes() == IntArrayRef({16, 4}));
  LSTM bi(LSTMOptions(3, 4).num_layers(2).bidirectional(true), kF64);
  CHECK(bi->named_parameters().keys() ==
        std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l0_reverse",
                                 "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse", "weight_ih_l1",
                                 "weight_hh_l1", "bias_ih_l1", "bias_hh_l1", "weight_ih_l1_reverse",
                                 "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse"});
  CHECK(bi->named_parameters()["weight_ih_l1_reverse"].sizes() == IntArrayRef({16, 8}));
  {
    auto [out, s] = bi(wick::randn({5, 2, 3}, kF64));
    CHECK(out.sizes() == IntArrayRef({5, 2, 8}));
    CHECK(std::get<1>(s).sizes() == IntArrayRef({4, 2, 4}));
  }
  GRU gru(GRUOptions(3, 4).bias(false), kF64);
  CHECK(gru->named_parameters().keys() == std::vector<std::string>{"weight_ih_l0", "weight_hh_l0"});
  CHECK(gru->named_parameters()["weight_ih_l0"].sizes() == IntArrayRef({12, 3}));

  // Unbatched [T, in] equals the batch of one.
  const Tensor x = wick::randn({5, 3}, kF64);
  auto [o1, s1] = lstm(x);
  auto [o2, s2] = lstm(x.unsqueeze(1));
  CHECK(o1.sizes() == IntArrayRef({5, 4}));
  CHECK(std::get<0>(s1).sizes() == IntArrayRef({2, 4}));
  CHECK_ALLCLOSE(o1, o2.squeeze(1), 0, 0);
  CHECK_ALLCLOSE(std::get<1>(s1), std::get<1>(s2).squeeze(1), 0, 0);
  auto [g1, h1] = gru(x);
  auto [g2, h2] = gru(x.unsqueeze(1));
  CHECK_ALLCLOSE(g1, g2.squeeze(1), 0, 0);
  CHECK_ALLCLOSE(h1, h2.squeeze(1), 0, 0);

  // Dropout acts between layers in training mode only.
  LSTM drop(LSTMOptions(3, 4).num_layers(2).dropout(0.5), kF64);
  const Tensor xb = wick::randn({4, 2, 3}, kF64);
  drop->eval();
  const Tensor eval_out = std::get<0>(drop(xb));
  CHECK_ALLCLOSE(std::get<0>(drop(xb)), eval_out, 0, 0);
  drop->train();
  CHECK_FALSE(wick::test::allclose(std::get<0>(drop(xb)), eval_out, 1e-6, 1e-6).ok);

  // Only between layers: one layer has nowhere to drop (not the input, not the output) ...
  LSTM one(LSTMOptions(3, 4).dropout(0.5), kF64);
  one->eval();
  const Tensor one_eval = std::get<0>(one(xb));
  one->train();
  CHECK_ALLCLOSE(std::get<0>(one(xb)), one_eval, 0, 0);
  // ... and with p = 1 the second layer reads zeros: its output no longer depends on the input,
  // and is not zero itself (nothing dropped after the last layer).
  GRU all(GRUOptions(3, 4).num_layers(2).dropout(1.0), kF64);
  all->train();
  const Tensor a = std::get<0>(all(xb)), b = std::get<0>(all(wick::randn({4, 2, 3}, kF64)));
  CHECK_ALLCLOSE(a, b, 0, 0);
  CHECK(a.abs().sum().item<double>() > 0.0);
}

TEST_CASE("LSTM and GRU initialise every parameter from U(-1/sqrt(H), 1/sqrt(H)), as PyTorch", "[nn]") {
  wick::manual_seed(16);
  LSTM lstm(LSTMOptions(8, 16).num_layers(2).bidirectional(true), kF64);
  GRU gru(GRUOptions(8, 16), kF64);
  const double bound = 1.0 / std::sqrt(16.0);
  for (const Module* m : {static_cast<const Module*>(lstm.get()), static_cast<const Module*>(gru.get())})
    for (const auto& [name, p] : m->named_parameters()) {
      INFO(name);
      CHECK(p.abs().max().item<double>() <= bound);
      if (p.numel() >= 256) CHECK(p.std().item<double>() == Approx(bound / std::sqrt(3.0)).epsilon(0.15));
    }
}

TEST_CASE("LSTM and GRU print as PyTorch 1.13 prints them", "[nn]") {
  // print(torch.nn.LSTM(3, 4, num_layers=2, bias=False, batch_first=True, dropout=0.5,
  // bidirectional=True)) and print(torch.nn.GRU(3, 4)).
  CHECK(LSTM(LSTMOptions(3, 4).num_layers(2).bias(false).batch_first(true).dropout(0.5).bidirectional(true))
            ->to_string() == "LSTM(3, 4, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)");
  CHECK(GRU(GRUOptions(3, 4))->to_string() == "GRU(3, 4)");
}
