// LSTM and GRU beyond the oracle: float64 gradchecks in the input, the states and every
// parameter; unbatched input; dropout between layers; parameter names.
#include <catch2/catch.hpp>

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

// Gradcheck inputs: the data, then every parameter of m, put into m's table for each evaluation.
TL with_params(const Module& m, TL data) {
  for (const auto& e : m.parameter_table()) data.push_back(e.value.detach().clone().requires_grad_(true));
  return data;
}
void set_params(Module& m, const TL& x, size_t n_data) {
  for (size_t i = n_data; i < x.size(); ++i) m.set_parameter_entry(i - n_data, x[i]);
}
}  // namespace

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

TEST_CASE("LSTM and GRU: PyTorch's parameter names, unbatched input, bias(false), dropout between layers", "[nn]") {
  wick::manual_seed(10);
  LSTM lstm(LSTMOptions(3, 4).num_layers(2), kF64);
  CHECK(lstm->named_parameters().keys() == std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0",
                                                                    "bias_hh_l0", "weight_ih_l1", "weight_hh_l1",
                                                                    "bias_ih_l1", "bias_hh_l1"});
  CHECK(lstm->named_parameters()["weight_ih_l0"].sizes() == IntArrayRef({16, 3}));
  CHECK(lstm->named_parameters()["weight_hh_l1"].sizes() == IntArrayRef({16, 4}));
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
}
