// LSTM, GRU and RNN on packed input beyond the oracle (packed_sequence_test.cpp): each sequence
// of a packed batch gives what the layer gives on that sequence alone (outputs, final states and
// parameter gradients, on every test device, bidirectional and stacked, with initial states in
// the batch's original order); float64 gradchecks of the utilities and of the layers in the
// padded input, the states and every parameter, and double backward; the layers' typed errors.
#include <catch2/catch.hpp>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "nn_test_util.h"
#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "support/gradcheck.h"
#include "wick/autograd/grad.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using namespace wick::nn::utils::rnn;
using wick::test::expect_error;
using TL = std::vector<Tensor>;
using test_util::set_params;
using test_util::with_params;

namespace {
const TensorOptions kF64(kFloat64);
Tensor rnd(IntArrayRef shape) { return wick::randn(shape, TensorOptions(kFloat64).requires_grad()); }

// One recurrent layer under test: runs a padded [T, B, in] batch packed with `lengths`
// (enforce_sorted false) -> {padded output [T, B, D * H], h_n, c_n (LSTM only)}, or one sequence
// [L, in] unbatched -> {output [L, D * H], h_n [D * layers, H], c_n}.
struct Layer {
  std::shared_ptr<Module> module;
  std::function<TL(const PackedSequence&, const Tensor&, const Tensor&)> packed;
  std::function<TL(const Tensor&, const Tensor&, const Tensor&)> plain;
};

Layer make_layer(const std::string& kind, int64_t layers, bool bidirectional) {
  const auto o = RNNOptionsBase(3, 4).num_layers(layers).bidirectional(bidirectional);
  if (kind == "lstm") {
    LSTM m(o, kF64);
    auto pair = [](const Tensor& h, const Tensor& c) { return std::optional<std::tuple<Tensor, Tensor>>({h, c}); };
    return {m.ptr(),
            [m, pair](const PackedSequence& p, const Tensor& h, const Tensor& c) mutable {
              auto [out, s] = m->forward_with_packed_input(p, pair(h, c));
              return TL{std::get<0>(pad_packed_sequence(out)), std::get<0>(s), std::get<1>(s)};
            },
            [m, pair](const Tensor& x, const Tensor& h, const Tensor& c) mutable {
              auto [out, s] = m(x, pair(h, c));
              return TL{out, std::get<0>(s), std::get<1>(s)};
            }};
  }
  if (kind == "gru") {
    GRU m(o, kF64);
    return {m.ptr(),
            [m](const PackedSequence& p, const Tensor& h, const Tensor&) mutable {
              auto [out, hn] = m->forward_with_packed_input(p, h);
              return TL{std::get<0>(pad_packed_sequence(out)), hn};
            },
            [m](const Tensor& x, const Tensor& h, const Tensor&) mutable {
              auto [out, hn] = m(x, h);
              return TL{out, hn};
            }};
  }
  RNN m(RNNOptions(3, 4).num_layers(layers).bidirectional(bidirectional).nonlinearity(kReLU), kF64);
  return {m.ptr(),
          [m](const PackedSequence& p, const Tensor& h, const Tensor&) mutable {
            auto [out, hn] = m->forward_with_packed_input(p, h);
            return TL{std::get<0>(pad_packed_sequence(out)), hn};
          },
          [m](const Tensor& x, const Tensor& h, const Tensor&) mutable {
            auto [out, hn] = m(x, h);
            return TL{out, hn};
          }};
}

// sum(out * w) over every output: a loss that weighs each element differently.
Tensor weighted(const TL& outs, const TL& weights) {
  Tensor loss = wick::scalar_tensor(0.0, TensorOptions(kFloat64).device(outs[0].device()));
  for (size_t i = 0; i < outs.size(); ++i) loss = loss + sum(outs[i] * weights[i]);
  return loss;
}
}  // namespace

TEST_CASE("packed rnn: each packed sequence equals the layer run on it alone with values and gradients",
          "[nn][packed_sequence]") {
  const std::vector<int64_t> lengths{2, 5, 1, 3};  // unsorted: the states are permuted both ways
  const int64_t T = 5, B = 4;
  for (const std::string kind : {"lstm", "gru", "rnn"}) {
    for (Device dev : wick::test::test_devices()) {
      INFO(kind << " on " << dev.str());
      wick::manual_seed(21);
      Layer layer = make_layer(kind, 2, true);
      layer.module->to(dev);
      const TensorOptions o = TensorOptions(kFloat64).device(dev);
      const Tensor x = wick::randn({T, B, 3}, o), h0 = wick::randn({4, B, 4}, o), c0 = wick::randn({4, B, 4}, o);
      const bool lstm = kind == "lstm";
      const TL packed = layer.packed(pack_padded_sequence(x, lengths, false, false), h0, lstm ? c0 : Tensor());
      const TL w_out{wick::randn({T, B, 8}, o), wick::randn({4, B, 4}, o), wick::randn({4, B, 4}, o)};
      const TL params = layer.module->parameters();
      const TL g_packed = autograd::grad({weighted(packed, w_out)}, params);
      Tensor loss_alone = wick::scalar_tensor(0.0, o);
      for (int64_t b = 0; b < B; ++b) {
        const int64_t L = lengths[static_cast<size_t>(b)];
        const TL alone =
            layer.plain(x.select(1, b).narrow(0, 0, L), h0.select(1, b), lstm ? c0.select(1, b) : Tensor());
        CHECK_ALLCLOSE(packed[0].select(1, b).narrow(0, 0, L), alone[0], 1e-12, 1e-14);
        if (L < T) CHECK_ALLCLOSE(packed[0].select(1, b).narrow(0, L, T - L), wick::zeros({T - L, 8}, o), 0, 0);
        for (size_t s = 1; s < packed.size(); ++s) CHECK_ALLCLOSE(packed[s].select(1, b), alone[s], 1e-12, 1e-14);
        TL w_b{w_out[0].select(1, b).narrow(0, 0, L)};
        for (size_t s = 1; s < packed.size(); ++s) w_b.push_back(w_out[s].select(1, b));
        loss_alone = loss_alone + weighted(alone, w_b);
      }
      const TL g_alone = autograd::grad({loss_alone}, params);
      for (size_t i = 0; i < params.size(); ++i) CHECK_ALLCLOSE(g_packed[i], g_alone[i], 1e-11, 1e-13);
    }
  }
}

TEST_CASE("packed rnn: gradcheck and double backward of packing and padding", "[nn][packed_sequence][gradcheck]") {
  wick::manual_seed(22);
  const std::vector<int64_t> lengths{2, 4, 1};
  auto round_trip = [lengths](const TL& x) {
    const PackedSequence p = pack_padded_sequence(x[0], lengths, true, false);
    return TL{p.data(), std::get<0>(pad_packed_sequence(p, true, 0.5, 5))};
  };
  CHECK_GRADCHECKS(round_trip, TL{rnd({3, 4, 2})});
  auto sequences = [](const TL& s) { return TL{pad_sequence(s, true, -1.0), pack_sequence(s, false).data()}; };
  CHECK_GRADCHECKS(sequences, TL{rnd({2, 3}), rnd({4, 3}), rnd({1, 3})});
}

TEST_CASE("packed rnn: gradcheck of LSTM GRU and RNN on packed input in the input the states and every parameter",
          "[nn][packed_sequence][gradcheck]") {
  wick::manual_seed(23);
  const std::vector<int64_t> lengths{2, 3, 1};
  auto pack = [lengths](const Tensor& x) { return pack_padded_sequence(x, lengths, false, false); };
  LSTM lstm(LSTMOptions(2, 2).num_layers(2).bidirectional(true), kF64);
  auto f = [lstm, pack](const TL& x) mutable {
    set_params(*lstm, x, 3);
    auto [out, s] = lstm->forward_with_packed_input(pack(x[0]), std::tuple<Tensor, Tensor>{x[1], x[2]});
    return TL{out.data(), std::get<0>(s), std::get<1>(s)};
  };
  CHECK_GRADCHECK(f, with_params(*lstm, {rnd({3, 3, 2}), rnd({4, 3, 2}), rnd({4, 3, 2})}));
  GRU gru(GRUOptions(2, 2).num_layers(2), kF64);
  auto g = [gru, pack](const TL& x) mutable {
    set_params(*gru, x, 2);
    auto [out, h] = gru->forward_with_packed_input(pack(x[0]), x[1]);
    return TL{out.data(), h};
  };
  CHECK_GRADCHECK(g, with_params(*gru, {rnd({3, 3, 2}), rnd({2, 3, 2})}));
  RNN rnn(RNNOptions(2, 3).bidirectional(true), kF64);
  auto r = [rnn, pack](const TL& x) mutable {
    set_params(*rnn, x, 2);
    auto [out, h] = rnn->forward_with_packed_input(pack(x[0]), x[1]);
    return TL{out.data(), h};
  };
  CHECK_GRADCHECK(r, with_params(*rnn, {rnd({3, 3, 2}), rnd({2, 3, 3})}));
}

TEST_CASE("packed rnn: double backward of a packed bidirectional GRU", "[nn][packed_sequence][gradcheck]") {
  wick::manual_seed(24);
  GRU gru(GRUOptions(2, 2).bidirectional(true), kF64);
  auto fn = [gru](const TL& x) mutable {
    set_params(*gru, x, 2);
    auto [out, h] = gru->forward_with_packed_input(pack_padded_sequence(x[0], {1, 3}, false, false), x[1]);
    return TL{out.data(), h};
  };
  wick::test::check_double_backward(fn, with_params(*gru, {rnd({3, 2, 2}), rnd({2, 2, 2})}));
}

TEST_CASE("packed rnn: dropout between layers acts on packed data in training mode only", "[nn][packed_sequence]") {
  wick::manual_seed(25);
  LSTM m(LSTMOptions(3, 4).num_layers(2).dropout(0.5), kF64);
  const PackedSequence p = pack_padded_sequence(wick::randn({4, 2, 3}, kF64), {4, 2});
  m->eval();
  const Tensor a = std::get<0>(m->forward_with_packed_input(p)).data();
  const Tensor b = std::get<0>(m->forward_with_packed_input(p)).data();
  CHECK_ALLCLOSE(a, b, 0, 0);
  m->train();
  const Tensor c = std::get<0>(m->forward_with_packed_input(p)).data();
  CHECK(c.sizes() == a.sizes());
  CHECK_FALSE(wick::allclose(a, c, 1e-6, 0));
}

TEST_CASE("packed rnn: bad packed input and states give typed errors naming the layer",
          "[nn][packed_sequence][errors]") {
  LSTM lstm(LSTMOptions(3, 4), kF64);
  GRU gru(GRUOptions(3, 4), kF64);
  const PackedSequence p = pack_padded_sequence(wick::zeros({3, 2, 3}, kF64), {3, 1});
  expect_error<ValueError>(
      [&] {
        gru->forward_with_packed_input(pack_padded_sequence(wick::zeros({3, 2, 5}, kF64), {3, 1}));
      },
      {"GRU", "packed input data [4, 5]", "input_size = 3"});
  expect_error<TypeError>([&] { gru->forward_with_packed_input(p.to(kFloat32)); },
                          {"GRU", "packed input is float32", "parameters are float64"});
  expect_error<ValueError>([&] { gru->forward_with_packed_input(p.to(Device("cpu:1"))); },
                           {"GRU", "cpu:1", "cpu:0", ".to(device)"});
  expect_error<ValueError>(
      [&] {
        gru->forward_with_packed_input(p, wick::zeros({1, 3, 4}, kF64));
      },
      {"GRU", "h_0 [1, 3, 4]", "[1, 2, 4]"});
  expect_error<ValueError>(
      [&] {
        lstm->forward_with_packed_input(p, std::tuple<Tensor, Tensor>{wick::zeros({1, 2, 4}, kF64), Tensor()});
      },
      {"LSTM", "holds h_0 but not c_0"});
  expect_error<ValueError>(
      [&] {
        lstm->forward_with_packed_input(
            p, std::tuple<Tensor, Tensor>{wick::zeros({1, 2, 4}, kF64), wick::zeros({2, 2, 4}, kF64)});
      },
      {"LSTM", "c_0 [2, 2, 4]"});
}
