// The recurrent layers of the PyTorch oracle (tests/data/ops.safetensors, generate.py's
// layer_cases and cell_cases): RNN, LSTM, GRU and their cells, forward and backward at relative
// error 1e-9 in float64, on every test device, with PyTorch's parameter names
// (support/layer_oracle.h). The attention, transformer and small layers: layers_oracle_test.cpp.
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

TEST_CASE(
    "layers: LSTM and GRU match PyTorch, 2 and 3 layers, with and without biases, batch_first both ways, "
    "initial states, bidirectional",
    "[nn][oracle]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "lstm" && c.op != "gru") continue;
    const bool batch_first = c.kw<bool>("batch_first", false), bidirectional = c.kw<bool>("bidirectional", false);
    const bool bias = c.kw<bool>("bias", true);
    const int64_t layers = c.kw<int64_t>("num_layers", 2);
    for (Device dev : wick::test::test_devices()) {
      if (c.op == "lstm") {
        LSTM m(LSTMOptions(3, 4).num_layers(layers).bias(bias).batch_first(batch_first).bidirectional(bidirectional),
               kF64);
        check_layer(c, *m, dev, [](Module& mod, const Inputs& in) -> std::vector<Tensor> {
          auto& lstm = static_cast<LSTMImpl&>(mod);
          auto hx =
              in.count("h0") ? std::optional<std::tuple<Tensor, Tensor>>({in.at("h0"), in.at("c0")}) : std::nullopt;
          auto [out, state] = lstm(in.at("input"), hx);
          return {out, std::get<0>(state), std::get<1>(state)};
        });
      } else {
        GRU m(GRUOptions(3, 4).num_layers(layers).bias(bias).batch_first(batch_first).bidirectional(bidirectional),
              kF64);
        check_layer(c, *m, dev, [](Module& mod, const Inputs& in) -> std::vector<Tensor> {
          auto [out, h] = static_cast<GRUImpl&>(mod)(in.at("input"), in.count("h0") ? in.at("h0") : Tensor());
          return {out, h};
        });
      }
    }
    ++seen[c.op];
  }
  CHECK(seen["lstm"] >= 4);
  CHECK(seen["gru"] >= 4);
}

namespace {
RNNNonlinearity nonlinearity_kw(const OracleCase& c) {
  const std::string nl = c.kw<std::string>("nonlinearity", "tanh");
  REQUIRE((nl == "tanh" || nl == "relu"));
  return nl == "relu" ? kReLU : kTanh;
}
}  // namespace

TEST_CASE(
    "layers: RNN matches PyTorch, tanh and relu, 1 to 3 layers, without biases, batch_first, initial states, "
    "bidirectional, unbatched",
    "[nn][oracle]") {
  int seen = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "rnn") continue;
    const auto options = RNNOptions(3, 4)
                             .num_layers(c.kw<int64_t>("num_layers", 1))
                             .nonlinearity(nonlinearity_kw(c))
                             .bias(c.kw<bool>("bias", true))
                             .batch_first(c.kw<bool>("batch_first", false))
                             .bidirectional(c.kw<bool>("bidirectional", false));
    for (Device dev : wick::test::test_devices()) {
      RNN m(options, kF64);
      check_layer(c, *m, dev, [](Module& mod, const Inputs& in) -> std::vector<Tensor> {
        auto [out, h] = static_cast<RNNImpl&>(mod)(in.at("input"), input_or_none(in, "h0"));
        return {out, h};
      });
    }
    ++seen;
  }
  CHECK(seen >= 5);
}

TEST_CASE("layers: RNNCell, LSTMCell and GRUCell match PyTorch, batched and unbatched, with and without hx and biases",
          "[nn][oracle]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "rnn_cell" && c.op != "lstm_cell" && c.op != "gru_cell") continue;
    const bool bias = c.kw<bool>("bias", true);
    for (Device dev : wick::test::test_devices()) {
      if (c.op == "rnn_cell") {
        RNNCell m(RNNCellOptions(3, 4).bias(bias).nonlinearity(nonlinearity_kw(c)), kF64);
        check_layer(c, *m, dev, [](Module& mod, const Inputs& in) -> std::vector<Tensor> {
          return {static_cast<RNNCellImpl&>(mod)(in.at("input"), input_or_none(in, "hx"))};
        });
      } else if (c.op == "lstm_cell") {
        LSTMCell m(LSTMCellOptions(3, 4).bias(bias), kF64);
        check_layer(c, *m, dev, [](Module& mod, const Inputs& in) -> std::vector<Tensor> {
          auto hx =
              in.count("h0") ? std::optional<std::tuple<Tensor, Tensor>>({in.at("h0"), in.at("c0")}) : std::nullopt;
          auto [h, cell] = static_cast<LSTMCellImpl&>(mod)(in.at("input"), hx);
          return {h, cell};
        });
      } else {
        GRUCell m(GRUCellOptions(3, 4).bias(bias), kF64);
        check_layer(c, *m, dev, [](Module& mod, const Inputs& in) -> std::vector<Tensor> {
          return {static_cast<GRUCellImpl&>(mod)(in.at("input"), input_or_none(in, "hx"))};
        });
      }
    }
    ++seen[c.op];
  }
  CHECK(seen["rnn_cell"] >= 4);
  CHECK(seen["lstm_cell"] >= 4);
  CHECK(seen["gru_cell"] >= 4);
}
