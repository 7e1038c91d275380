// Bad input to RNN, RNNCell, LSTMCell and GRUCell (and the checks they share with LSTM and GRU):
// each call raises exactly its class (Note [Typed errors]), with a message that names the
// module, the shapes, dtypes or devices involved and what to do.
#include <wick/nn/nn.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "hostile_support.h"

using namespace wick;
using wick::test::hostile::check_rows;

namespace {

template <class E>
const char* class_name();
template <>
const char* class_name<ValueError>() {
  return "ValueError";
}
template <>
const char* class_name<TypeError>() {
  return "TypeError";
}

// `call` raises E (caught as E, and E is its exact class) with every one of `words` in its
// message.
template <class E>
void expect(const std::string& what, const std::function<void()>& call, std::vector<std::string> words) {
  INFO(what);
  REQUIRE_THROWS_AS(call(), E);
  check_rows({{what, class_name<E>(), call, std::move(words)}});
}

TensorOptions f32(Device d = Device("cpu:0")) { return TensorOptions(kFloat32).device(d); }
TensorOptions f64() { return TensorOptions(kFloat64); }
const Device kCpu1("cpu:1");

}  // namespace

TEST_CASE("recurrent errors: RNN options, input and state", "[errors]") {
  expect<ValueError>("RNN with a nonlinearity other than kTanh or kReLU",
                     [] { nn::RNN(nn::RNNOptions(3, 4).nonlinearity(static_cast<nn::RNNNonlinearity>(7))); },
                     {"RNN", "nonlinearity must be kTanh or kReLU", "RNNNonlinearity(7)"});
  expect<ValueError>("RNN with hidden_size 0", [] { nn::RNN(3, 0); }, {"RNN", "hidden_size (0)", "must be positive"});
  expect<ValueError>("RNN with a negative hidden_size", [] { nn::RNN(nn::RNNOptions(3, -2).num_layers(2)); },
                     {"RNN", "hidden_size (-2)", "must be positive"});
  expect<ValueError>("RNN with dropout above 1", [] { nn::RNN(nn::RNNOptions(3, 4).num_layers(2).dropout(1.5)); },
                     {"RNN", "dropout must be in [0, 1]", "1.5"});
  expect<ValueError>("RNN with a negative dropout", [] { nn::RNN(nn::RNNOptions(3, 4).dropout(-0.1)); },
                     {"RNN", "dropout must be in [0, 1]", "-0.1"});
  expect<ValueError>("RNN input of the wrong feature size",
                     [] {
                       nn::RNN(3, 4)(wick::zeros({5, 2, 6}, f32()));
                     },
                     {"RNN", "[5, 2, 6]", "input_size = 3", "give the layer input_size 6"});
  expect<ValueError>("RNN input of 4 dims",
                     [] {
                       nn::RNN(3, 4)(wick::zeros({5, 2, 1, 3}, f32()));
                     },
                     {"RNN", "[T, N, input_size]", "[5, 2, 1, 3]"});
  expect<ValueError>("RNN state of the wrong batch",
                     [] {
                       nn::RNN(3, 4)(wick::zeros({5, 2, 3}, f32()), wick::zeros({1, 3, 4}, f32()));
                     },
                     {"RNN", "h_0 [1, 3, 4]", "[num_layers, N, hidden_size] = [1, 2, 4]"});
  expect<ValueError>("bidirectional 2-layer RNN state with one direction's entries",
                     [] {
                       nn::RNN(nn::RNNOptions(3, 4).num_layers(2).bidirectional(true))(wick::zeros({5, 2, 3}, f32()),
                                                                                       wick::zeros({2, 2, 4}, f32()));
                     },
                     {"RNN", "h_0 [2, 2, 4]", "[2 * num_layers, N, hidden_size] = [4, 2, 4]"});
  expect<TypeError>("RNN state of another dtype than the input",
                    [] {
                      nn::RNN(3, 4)(wick::zeros({5, 2, 3}, f32()), wick::zeros({1, 2, 4}, f64()));
                    },
                    {"RNN", "h_0 is float64", "input is float32"});
  expect<ValueError>("RNN state on another device",
                     [] {
                       nn::RNN(3, 4)(wick::zeros({5, 2, 3}, f32()), wick::zeros({1, 2, 4}, f32(kCpu1)));
                     },
                     {"RNN", "h_0 is on cpu:1", "input is on cpu:0", ".to(device)"});
  expect<TypeError>("RNN input of another dtype than its parameters",
                    [] {
                      nn::RNN(nn::RNNOptions(3, 4), f64())(wick::zeros({5, 2, 3}, f32()));
                    },
                    {"RNN", "input is float32", "parameters are float64"});
  expect<ValueError>("RNN input on another device than its parameters",
                     [] {
                       nn::RNN(3, 4)(wick::zeros({5, 2, 3}, f32(kCpu1)));
                     },
                     {"RNN", "input is on cpu:1", "parameters are on cpu:0"});
  expect<ValueError>("LSTM input on another device than its parameters",
                     [] {
                       nn::LSTM(3, 4)(wick::zeros({5, 2, 3}, f32(kCpu1)));
                     },
                     {"LSTM", "input is on cpu:1", "parameters are on cpu:0"});
}

TEST_CASE("recurrent errors: RNNCell, LSTMCell and GRUCell options, input and state", "[errors]") {
  expect<ValueError>("RNNCell with a nonlinearity other than kTanh or kReLU",
                     [] { nn::RNNCell(nn::RNNCellOptions(3, 4).nonlinearity(static_cast<nn::RNNNonlinearity>(-1))); },
                     {"RNNCell", "nonlinearity must be kTanh or kReLU", "RNNNonlinearity(-1)"});
  expect<ValueError>("RNNCell with hidden_size 0", [] { nn::RNNCell(3, 0); },
                     {"RNNCell", "hidden_size (0)", "must be positive"});
  expect<ValueError>("LSTMCell with hidden_size 0", [] { nn::LSTMCell(3, 0); },
                     {"LSTMCell", "hidden_size (0)", "must be positive"});
  expect<ValueError>("GRUCell with input_size 0", [] { nn::GRUCell(0, 4); },
                     {"GRUCell", "input_size (0)", "must be positive"});

  // A sequence given to a cell.
  expect<ValueError>("RNNCell with a 3-d input",
                     [] {
                       nn::RNNCell(3, 4)(wick::zeros({5, 2, 3}, f32()));
                     },
                     {"RNNCell", "[5, 2, 3]", "[N, input_size] or unbatched [input_size]", "one time step", "nn::RNN"});
  expect<ValueError>("LSTMCell with a 3-d input",
                     [] {
                       nn::LSTMCell(3, 4)(wick::zeros({5, 2, 3}, f32()));
                     },
                     {"LSTMCell", "[5, 2, 3]", "nn::LSTM on the whole sequence"});
  expect<ValueError>("GRUCell with a 0-d input", [] { nn::GRUCell(3, 4)(wick::zeros({}, f32())); },
                     {"GRUCell", "got []", "nn::GRU"});

  // Input features, dtype and device.
  expect<ValueError>("RNNCell input of the wrong feature size",
                     [] {
                       nn::RNNCell(3, 4)(wick::zeros({2, 5}, f32()));
                     },
                     {"RNNCell", "[2, 5]", "input_size = 3", "give the cell input_size 5"});
  expect<ValueError>("GRUCell unbatched input of the wrong feature size",
                     [] { nn::GRUCell(3, 4)(wick::zeros({5}, f32())); }, {"GRUCell", "[5]", "input_size = 3"});
  expect<TypeError>("LSTMCell input of another dtype than its parameters",
                    [] {
                      nn::LSTMCell(nn::LSTMCellOptions(3, 4), f64())(wick::zeros({2, 3}, f32()));
                    },
                    {"LSTMCell", "input is float32", "parameters are float64", "convert"});
  expect<ValueError>("GRUCell input on another device than its parameters",
                     [] {
                       nn::GRUCell(3, 4)(wick::zeros({2, 3}, f32(kCpu1)));
                     },
                     {"GRUCell", "input is on cpu:1", "parameters are on cpu:0", ".to(device)"});

  // hx: shape, dtype, device.
  expect<ValueError>("RNNCell hx of another batch",
                     [] {
                       nn::RNNCell(3, 4)(wick::zeros({2, 3}, f32()), wick::zeros({3, 4}, f32()));
                     },
                     {"RNNCell", "hx [3, 4]", "[N, hidden_size] = [2, 4]", "input [2, 3]"});
  expect<ValueError>("GRUCell hx of the wrong hidden size",
                     [] {
                       nn::GRUCell(3, 4)(wick::zeros({2, 3}, f32()), wick::zeros({2, 5}, f32()));
                     },
                     {"GRUCell", "hx [2, 5]", "[N, hidden_size] = [2, 4]"});
  expect<ValueError>("RNNCell batched hx for an unbatched input",
                     [] {
                       nn::RNNCell(3, 4)(wick::zeros({3}, f32()), wick::zeros({2, 4}, f32()));
                     },
                     {"RNNCell", "hx [2, 4]", "[hidden_size] = [4]", "unbatched input [3]"});
  expect<ValueError>("LSTMCell c_0 of the wrong shape",
                     [] {
                       nn::LSTMCell(3, 4)(
                           wick::zeros({2, 3}, f32()),
                           std::tuple<Tensor, Tensor>{wick::zeros({2, 4}, f32()), wick::zeros({2, 3}, f32())});
                     },
                     {"LSTMCell", "c_0 [2, 3]", "[N, hidden_size] = [2, 4]"});
  expect<TypeError>("GRUCell hx of another dtype than the input",
                    [] {
                      nn::GRUCell(3, 4)(wick::zeros({2, 3}, f32()), wick::zeros({2, 4}, f64()));
                    },
                    {"GRUCell", "hx is float64", "input is float32"});
  expect<ValueError>("LSTMCell state on another device",
                     [] {
                       nn::LSTMCell(3, 4)(
                           wick::zeros({2, 3}, f32()),
                           std::tuple<Tensor, Tensor>{wick::zeros({2, 4}, f32(kCpu1)), wick::zeros({2, 4}, f32())});
                     },
                     {"LSTMCell", "h_0 is on cpu:1", "input is on cpu:0", ".to(device)"});
  expect<ValueError>("LSTMCell hx with h_0 and no c_0",
                     [] {
                       nn::LSTMCell(3, 4)(wick::zeros({2, 3}, f32()),
                                          std::tuple<Tensor, Tensor>{wick::zeros({2, 4}, f32()), Tensor()});
                     },
                     {"LSTMCell", "hx holds h_0 but not c_0", "std::nullopt"});
}
