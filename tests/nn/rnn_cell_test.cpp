// RNN and the cells (RNNCell, LSTMCell, GRUCell) beyond the oracle: a cell stepped over a
// sequence equals the one-layer layer with the same weights, both directions, values and
// gradients, on every test device; float64 gradchecks; parameter names, shapes and init;
// unbatched input; dropout between RNN layers; repr as PyTorch 1.13 prints.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>

#include "nn_test_util.h"
#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using TL = std::vector<Tensor>;
using test_util::set_params;
using test_util::with_params;

namespace {
const TensorOptions kF64(kFloat64);
constexpr int64_t kT = 5, kN = 3, kIn = 3, kH = 4;
Tensor rnd(IntArrayRef shape) { return wick::randn(shape, TensorOptions(kFloat64).requires_grad()); }

// One step of a cell: (x_t [N, in], state {h} or {h, c}) -> the new state.
using Step = std::function<TL(const Tensor&, const TL&)>;

// Copies the layer's layer-0 parameters of one direction (suffix "" or "_reverse") into the
// cell: weight_ih_l0 -> weight_ih, ...
void load_from_layer(Module& cell, const Module& layer, const std::string& suffix) {
  const auto from = layer.named_parameters();
  NoGradGuard no_grad;
  for (const auto& [name, p] : cell.named_parameters()) {
    Tensor t = p;
    t.copy_(from[name + "_l0" + suffix]);
  }
}

// Steps over x [T, N, in] from `state` (forwards, or from the end with `reverse`):
// {outputs [T, N, H] in time order, final state...}.
TL unroll(const Step& step, const Tensor& x, TL state, bool reverse) {
  const int64_t T = x.size(0);
  TL hs(static_cast<size_t>(T));
  for (int64_t i = 0; i < T; ++i) {
    const int64_t t = reverse ? T - 1 - i : i;
    state = step(x[t], state);
    hs[static_cast<size_t>(t)] = state[0];
  }
  TL r = {stack(hs, 0)};
  r.insert(r.end(), state.begin(), state.end());
  return r;
}

// The layer's results {output [T, N, D * H], h_n [D, N, H] (, c_n)} against the cells' (one
// per direction) stepped over x from the states s0 (each [D, N, H]): values, then the
// gradients of x, of the states and of every parameter under one random upstream gradient, to
// 1e-12.
void check_layer_equals_cells(const Module& layer, const TL& layer_results, const std::vector<Module*>& cells,
                              const std::vector<Step>& steps, const Tensor& x, const TL& s0) {
  const auto D = static_cast<int64_t>(steps.size());
  TL outs;
  std::vector<TL> finals(s0.size());
  for (int64_t d = 0; d < D; ++d) {
    TL s;
    for (const Tensor& t : s0) s.push_back(t[d]);
    const TL r = unroll(steps[static_cast<size_t>(d)], x, s, d == 1);
    outs.push_back(r[0]);
    for (size_t k = 0; k < s0.size(); ++k) finals[k].push_back(r[k + 1]);
  }
  TL cell_results = {D == 1 ? outs[0] : cat(outs, 2)};
  for (const TL& f : finals) cell_results.push_back(stack(f, 0));
  REQUIRE(cell_results.size() == layer_results.size());
  for (size_t i = 0; i < layer_results.size(); ++i) {
    INFO("result " << i);
    REQUIRE(cell_results[i].sizes() == layer_results[i].sizes());
    CHECK_ALLCLOSE(cell_results[i], layer_results[i], 1e-12, 1e-12);
  }

  // Gradients: x, the states, then per direction the cell's parameters and the layer's.
  Tensor layer_loss, cell_loss;
  for (size_t i = 0; i < layer_results.size(); ++i) {
    const Tensor g = wick::randn(layer_results[i].sizes(), kF64).to(x.device());
    layer_loss = i == 0 ? (layer_results[i] * g).sum() : layer_loss + (layer_results[i] * g).sum();
    cell_loss = i == 0 ? (cell_results[i] * g).sum() : cell_loss + (cell_results[i] * g).sum();
  }
  TL wrt_layer = {x}, wrt_cell = {x};
  for (const Tensor& t : s0) {
    wrt_layer.push_back(t);
    wrt_cell.push_back(t);
  }
  const auto layer_params = layer.named_parameters();
  for (int64_t d = 0; d < D; ++d)
    for (const auto& [name, p] : cells[static_cast<size_t>(d)]->named_parameters()) {
      wrt_cell.push_back(p);
      wrt_layer.push_back(layer_params[name + "_l0" + (d == 1 ? "_reverse" : "")]);
    }
  const TL gl = autograd::grad({layer_loss}, wrt_layer);
  const TL gc = autograd::grad({cell_loss}, wrt_cell);
  for (size_t i = 0; i < gl.size(); ++i) {
    INFO("gradient " << i);
    CHECK_ALLCLOSE(gc[i], gl[i], 1e-12, 1e-12);
  }
}

// x [T, N, in] and initial states [D, N, H] (count of them: n_states) on `dev`, requiring grad.
TL sequence_and_states(Device dev, int64_t D, size_t n_states) {
  TL r = {wick::randn({kT, kN, kIn}, kF64).to(dev).requires_grad_(true)};
  for (size_t k = 0; k < n_states; ++k) r.push_back(wick::randn({D, kN, kH}, kF64).to(dev).requires_grad_(true));
  return r;
}
}  // namespace

TEST_CASE("RNNCell stepped over a sequence equals a one-layer RNN, tanh and relu, both directions, on every device",
          "[nn]") {
  for (Device dev : wick::test::test_devices())
    for (RNNNonlinearity nl : {kTanh, kReLU})
      for (bool bias : {true, false})
        for (bool bidirectional : {false, true}) {
          INFO(dev.str() << (nl == kReLU ? " relu" : " tanh") << " bias " << bias << " bidirectional "
                         << bidirectional);
          wick::manual_seed(31);
          RNN layer(RNNOptions(kIn, kH).nonlinearity(nl).bias(bias).bidirectional(bidirectional), kF64);
          layer->to(dev);
          std::vector<RNNCell> cells;
          std::vector<Step> steps;
          std::vector<Module*> modules;
          for (int d = 0; d < (bidirectional ? 2 : 1); ++d) {
            cells.emplace_back(RNNCellOptions(kIn, kH).nonlinearity(nl).bias(bias), kF64);
            cells.back()->to(dev);
            load_from_layer(*cells.back(), *layer, d == 1 ? "_reverse" : "");
          }
          for (RNNCell& c : cells) {
            modules.push_back(c.get());
            steps.push_back([c](const Tensor& x, const TL& s) mutable { return TL{c(x, s[0])}; });
          }
          const TL in = sequence_and_states(dev, bidirectional ? 2 : 1, 1);
          auto [out, h_n] = layer(in[0], in[1]);
          check_layer_equals_cells(*layer, {out, h_n}, modules, steps, in[0], {in[1]});
        }
}

TEST_CASE("LSTMCell and GRUCell stepped over a sequence equal one-layer LSTM and GRU, both directions, on every device",
          "[nn]") {
  for (Device dev : wick::test::test_devices())
    for (bool bias : {true, false})
      for (bool bidirectional : {false, true}) {
        INFO(dev.str() << " bias " << bias << " bidirectional " << bidirectional);
        const int D = bidirectional ? 2 : 1;
        wick::manual_seed(32);
        {
          LSTM layer(LSTMOptions(kIn, kH).bias(bias).bidirectional(bidirectional), kF64);
          layer->to(dev);
          std::vector<LSTMCell> cells;
          std::vector<Step> steps;
          std::vector<Module*> modules;
          for (int d = 0; d < D; ++d) {
            cells.emplace_back(LSTMCellOptions(kIn, kH).bias(bias), kF64);
            cells.back()->to(dev);
            load_from_layer(*cells.back(), *layer, d == 1 ? "_reverse" : "");
          }
          for (LSTMCell& c : cells) {
            modules.push_back(c.get());
            steps.push_back([c](const Tensor& x, const TL& s) mutable {
              auto [h, cell] = c(x, std::tuple<Tensor, Tensor>{s[0], s[1]});
              return TL{h, cell};
            });
          }
          const TL in = sequence_and_states(dev, D, 2);
          auto [out, state] = layer(in[0], std::tuple<Tensor, Tensor>{in[1], in[2]});
          check_layer_equals_cells(*layer, {out, std::get<0>(state), std::get<1>(state)}, modules, steps, in[0],
                                   {in[1], in[2]});
        }
        {
          GRU layer(GRUOptions(kIn, kH).bias(bias).bidirectional(bidirectional), kF64);
          layer->to(dev);
          std::vector<GRUCell> cells;
          std::vector<Step> steps;
          std::vector<Module*> modules;
          for (int d = 0; d < D; ++d) {
            cells.emplace_back(GRUCellOptions(kIn, kH).bias(bias), kF64);
            cells.back()->to(dev);
            load_from_layer(*cells.back(), *layer, d == 1 ? "_reverse" : "");
          }
          for (GRUCell& c : cells) {
            modules.push_back(c.get());
            steps.push_back([c](const Tensor& x, const TL& s) mutable { return TL{c(x, s[0])}; });
          }
          const TL in = sequence_and_states(dev, D, 1);
          auto [out, h_n] = layer(in[0], in[1]);
          check_layer_equals_cells(*layer, {out, h_n}, modules, steps, in[0], {in[1]});
        }
      }
}

TEST_CASE(
    "gradcheck: RNN, 2 layers, tanh bidirectional and relu batch_first, in the input, the state and every "
    "parameter",
    "[nn][gradcheck]") {
  wick::manual_seed(33);
  RNN tanh_rnn(RNNOptions(2, 3).num_layers(2).bidirectional(true), kF64);
  auto f = [tanh_rnn](const TL& x) mutable {
    set_params(*tanh_rnn, x, 2);
    auto [out, h] = tanh_rnn(x[0], x[1]);
    return TL{out, h};
  };
  CHECK_GRADCHECK(f, with_params(*tanh_rnn, {rnd({3, 2, 2}), rnd({4, 2, 3})}));
  RNN relu_rnn(RNNOptions(2, 3).num_layers(2).nonlinearity(kReLU).batch_first(true), kF64);
  auto g = [relu_rnn](const TL& x) mutable {
    set_params(*relu_rnn, x, 2);
    auto [out, h] = relu_rnn(x[0], x[1]);
    return TL{out, h};
  };
  CHECK_GRADCHECK(g, with_params(*relu_rnn, {rnd({2, 3, 2}), rnd({2, 2, 3})}));
}

TEST_CASE("gradcheck: RNNCell, LSTMCell and GRUCell in the input, the state and every parameter", "[nn][gradcheck]") {
  wick::manual_seed(34);
  RNNCell rnn(RNNCellOptions(2, 3).nonlinearity(kTanh), kF64);
  auto f = [rnn](const TL& x) mutable {
    set_params(*rnn, x, 2);
    return TL{rnn(x[0], x[1])};
  };
  CHECK_GRADCHECK(f, with_params(*rnn, {rnd({4, 2}), rnd({4, 3})}));
  LSTMCell lstm(2, 3, kF64);
  auto g = [lstm](const TL& x) mutable {
    set_params(*lstm, x, 3);
    auto [h, c] = lstm(x[0], std::tuple<Tensor, Tensor>{x[1], x[2]});
    return TL{h, c};
  };
  CHECK_GRADCHECK(g, with_params(*lstm, {rnd({4, 2}), rnd({4, 3}), rnd({4, 3})}));
  GRUCell gru(2, 3, kF64);
  auto h = [gru](const TL& x) mutable {
    set_params(*gru, x, 2);
    return TL{gru(x[0], x[1])};
  };
  CHECK_GRADCHECK(h, with_params(*gru, {rnd({2}), rnd({3})}));
}

TEST_CASE("RNN and the cells: PyTorch's parameter names and shapes, U(-1/sqrt(H), 1/sqrt(H)), unbatched input, options",
          "[nn]") {
  wick::manual_seed(35);
  RNN rnn(RNNOptions(3, 4).num_layers(2).bidirectional(true).nonlinearity(kReLU), kF64);
  CHECK(rnn->named_parameters().keys() ==
        std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l0_reverse",
                                 "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse", "weight_ih_l1",
                                 "weight_hh_l1", "bias_ih_l1", "bias_hh_l1", "weight_ih_l1_reverse",
                                 "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse"});
  CHECK(rnn->named_parameters()["weight_ih_l0"].sizes() == IntArrayRef({4, 3}));
  CHECK(rnn->named_parameters()["weight_ih_l1_reverse"].sizes() == IntArrayRef({4, 8}));
  CHECK(rnn->named_parameters()["bias_hh_l1"].sizes() == IntArrayRef({4}));
  CHECK(rnn->options().nonlinearity() == kReLU);
  CHECK(rnn->options().num_layers() == 2);
  CHECK(RNN(RNNOptions(3, 4).bias(false), kF64)->named_parameters().keys() ==
        std::vector<std::string>{"weight_ih_l0", "weight_hh_l0"});

  const std::vector<std::string> cell_names = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
  RNNCell rc(RNNCellOptions(3, 4).nonlinearity(kReLU), kF64);
  LSTMCell lc(3, 4, kF64);
  GRUCell gc(GRUCellOptions(3, 4), kF64);
  CHECK(rc->named_parameters().keys() == cell_names);
  CHECK(lc->named_parameters().keys() == cell_names);
  CHECK(gc->named_parameters().keys() == cell_names);
  CHECK(rc->weight_ih().sizes() == IntArrayRef({4, 3}));
  CHECK(lc->weight_hh().sizes() == IntArrayRef({16, 4}));
  CHECK(gc->bias_hh().sizes() == IntArrayRef({12}));
  CHECK(rc->options().nonlinearity() == kReLU);
  CHECK(LSTMCell(LSTMCellOptions(3, 4).bias(false), kF64)->named_parameters().keys() ==
        std::vector<std::string>{"weight_ih", "weight_hh"});
  CHECK_FALSE(GRUCell(GRUCellOptions(3, 4).bias(false), kF64)->bias_ih().defined());

  // Every parameter from U(-1/sqrt(H), 1/sqrt(H)), as PyTorch's.
  RNN big(RNNOptions(8, 16).num_layers(2), kF64);
  LSTMCell big_cell(8, 16, kF64);
  const double bound = 1.0 / std::sqrt(16.0);
  for (const Module* m : {static_cast<const Module*>(big.get()), static_cast<const Module*>(big_cell.get())})
    for (const auto& [name, p] : m->named_parameters()) {
      INFO(m->name() << "." << name);
      CHECK(p.abs().max().item<double>() <= bound);
      if (p.numel() >= 256) CHECK(p.std().item<double>() == Approx(bound / std::sqrt(3.0)).epsilon(0.15));
    }

  // Unbatched input equals the batch of one: RNN [T, in] with h_0 [L * D, H]; a cell [in] with
  // hx [H].
  const Tensor x = wick::randn({5, 3}, kF64), h0 = wick::randn({4, 4}, kF64);
  auto [o1, h1] = rnn(x, h0);
  auto [o2, h2] = rnn(x.unsqueeze(1), h0.unsqueeze(1));
  CHECK(o1.sizes() == IntArrayRef({5, 8}));
  CHECK(h1.sizes() == IntArrayRef({4, 4}));
  CHECK_ALLCLOSE(o1, o2.squeeze(1), 0, 0);
  CHECK_ALLCLOSE(h1, h2.squeeze(1), 0, 0);
  const Tensor xt = x[0], ht = h0[0];
  CHECK(rc(xt, ht).sizes() == IntArrayRef({4}));
  CHECK_ALLCLOSE(rc(xt, ht), rc(xt.unsqueeze(0), ht.unsqueeze(0)).squeeze(0), 0, 0);
  CHECK_ALLCLOSE(gc(xt), gc(xt.unsqueeze(0)).squeeze(0), 0, 0);
  auto [lh1, lc1] = lc(xt, std::tuple<Tensor, Tensor>{ht, ht});
  auto [lh2, lc2] = lc(xt.unsqueeze(0), std::tuple<Tensor, Tensor>{ht.unsqueeze(0), ht.unsqueeze(0)});
  CHECK(lc1.sizes() == IntArrayRef({4}));
  CHECK_ALLCLOSE(lh1, lh2.squeeze(0), 0, 0);
  CHECK_ALLCLOSE(lc1, lc2.squeeze(0), 0, 0);

  // No hx means zeros.
  const Tensor xb = wick::randn({2, 3}, kF64);
  CHECK_ALLCLOSE(rc(xb), rc(xb, wick::zeros({2, 4}, kF64)), 0, 0);
  CHECK_ALLCLOSE(gc(xb), gc(xb, wick::zeros({2, 4}, kF64)), 0, 0);
  CHECK_ALLCLOSE(std::get<1>(lc(xb)),
                 std::get<1>(lc(xb, std::tuple<Tensor, Tensor>{wick::zeros({2, 4}, kF64), wick::zeros({2, 4}, kF64)})),
                 0, 0);
  // relu: h' = relu(W_ih x + b_ih + W_hh h + b_hh) is never negative.
  CHECK(rc(wick::randn({64, 3}, kF64)).min().item<double>() >= 0.0);
}

TEST_CASE("RNN dropout acts between layers in training mode only", "[nn]") {
  wick::manual_seed(36);
  RNN drop(RNNOptions(3, 4).num_layers(2).dropout(0.5), kF64);
  const Tensor x = wick::randn({4, 2, 3}, kF64);
  drop->eval();
  const Tensor eval_out = std::get<0>(drop(x));
  CHECK_ALLCLOSE(std::get<0>(drop(x)), eval_out, 0, 0);
  drop->train();
  CHECK_FALSE(wick::test::allclose(std::get<0>(drop(x)), eval_out, 1e-6, 1e-6).ok);
  // p = 1: the second layer reads zeros, so its output no longer depends on the input.
  RNN all(RNNOptions(3, 4).num_layers(2).dropout(1.0), kF64);
  all->train();
  CHECK_ALLCLOSE(std::get<0>(all(x)), std::get<0>(all(wick::randn({4, 2, 3}, kF64))), 0, 0);
}

TEST_CASE("RNN and the cells print as PyTorch 1.13 prints them", "[nn]") {
  // print() of torch.nn.RNN(10, 20, num_layers=2), torch.nn.RNN(10, 20, nonlinearity='relu'),
  // torch.nn.RNN(10, 20, 2, nonlinearity='relu', bias=False, batch_first=True, dropout=0.5,
  // bidirectional=True), torch.nn.RNNCell(10, 20), torch.nn.RNNCell(10, 20, bias=False,
  // nonlinearity='relu'), torch.nn.RNNCell(10, 20, nonlinearity='relu'), torch.nn.LSTMCell(10, 20),
  // torch.nn.LSTMCell(10, 20, bias=False), torch.nn.GRUCell(10, 20) and
  // torch.nn.GRUCell(10, 20, bias=False) in torch 1.13.
  CHECK(RNN(RNNOptions(10, 20).num_layers(2))->to_string() == "RNN(10, 20, num_layers=2)");
  CHECK(RNN(RNNOptions(10, 20).nonlinearity(kReLU))->to_string() == "RNN(10, 20)");
  CHECK(
      RNN(RNNOptions(10, 20).num_layers(2).nonlinearity(kReLU).bias(false).batch_first(true).dropout(0.5).bidirectional(
              true))
          ->to_string() == "RNN(10, 20, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)");
  CHECK(RNNCell(10, 20)->to_string() == "RNNCell(10, 20)");
  CHECK(RNNCell(RNNCellOptions(10, 20).bias(false).nonlinearity(kReLU))->to_string() ==
        "RNNCell(10, 20, bias=False, nonlinearity=relu)");
  CHECK(RNNCell(RNNCellOptions(10, 20).nonlinearity(kReLU))->to_string() == "RNNCell(10, 20, nonlinearity=relu)");
  CHECK(LSTMCell(10, 20)->to_string() == "LSTMCell(10, 20)");
  CHECK(LSTMCell(LSTMCellOptions(10, 20).bias(false))->to_string() == "LSTMCell(10, 20, bias=False)");
  CHECK(GRUCell(10, 20)->to_string() == "GRUCell(10, 20)");
  CHECK(GRUCell(GRUCellOptions(10, 20).bias(false))->to_string() == "GRUCell(10, 20, bias=False)");
}
