#pragma once
// LSTM and GRU (torch.nn.LSTM, torch.nn.GRU): multi-layer, unidirectional.
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// The options of LSTM and GRU, as LibTorch's: `LSTMOptions(32, 64).num_layers(2).batch_first(true)`
/// (one struct under both names, as BatchNorm1dOptions and BatchNorm2dOptions). bidirectional
/// and proj_size are not offered (one direction only).
struct RNNOptionsBase {
  RNNOptionsBase(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  WICK_ARG(int64_t, input_size);
  WICK_ARG(int64_t, hidden_size);
  /// Stacked layers: layer l > 0 reads layer l - 1's output sequence.
  WICK_ARG(int64_t, num_layers) = 1;
  /// Whether to learn bias_ih_l* and bias_hh_l*.
  WICK_ARG(bool, bias) = true;
  /// input and output are [N, T, *] instead of [T, N, *] (the states stay [num_layers, N, H]).
  WICK_ARG(bool, batch_first) = false;
  /// Dropout on each layer's output except the last one's, in training mode.
  WICK_ARG(double, dropout) = 0.0;
};
using LSTMOptions = RNNOptionsBase;
using GRUOptions = RNNOptionsBase;

/// The shared parameters and checks. Per layer l, PyTorch's names and shapes: weight_ih_l{l}
/// [G * H, in_l], weight_hh_l{l} [G * H, H], bias_ih_l{l} and bias_hh_l{l} [G * H] (G gates:
/// 4 for LSTM, 3 for GRU, stacked in PyTorch's gate order), all ~ U(-1/sqrt(H), 1/sqrt(H)) as
/// PyTorch's. A PyTorch state_dict loads name for name. Each layer runs one GEMM for the input
/// projection of all time steps, then one hidden GEMM and the gate math per step (a composite
/// of differentiable ops, so every device and double backward come for free).
template <class Derived>
class RNNImplBase : public Cloneable<Derived> {
 public:
  RNNImplBase(const RNNOptionsBase& options, int64_t gates, TensorOptions tensor_options);
  void reset_parameters();
  std::string extra_repr() const override;
  const RNNOptionsBase& options() const { return options_; }
  /// The parameters of layer l: {weight_ih, weight_hh, bias_ih, bias_hh} (biases undefined
  /// without bias).
  std::vector<Tensor> layer_parameters(int64_t layer) const;

 protected:
  // input [T, N, in] / [N, T, in] / [T, in] -> time-major [T, N, in]; checks its features.
  Tensor time_major(const Tensor& input, bool batched) const;
  // A state given by the user: [num_layers, N, H] ([num_layers, H] unbatched); zeros if undefined.
  Tensor initial_state(const Tensor& state, const char* what, const Tensor& input, bool batched) const;
  bool is_batched(const Tensor& input) const;

  RNNOptionsBase options_;
  std::vector<ParamSlot> weights_;  // 4 per layer, in table order
};

/// Long short-term memory, PyTorch's gates i, f, g, o:
/// c' = sigmoid(f) * c + sigmoid(i) * tanh(g), h' = sigmoid(o) * tanh(c').
class LSTMImpl : public RNNImplBase<LSTMImpl> {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size, TensorOptions tensor_options = {})
      : LSTMImpl(LSTMOptions(input_size, hidden_size), tensor_options) {}
  explicit LSTMImpl(const LSTMOptions& options, TensorOptions tensor_options = {});
  /// input [T, N, input_size] ([N, T, input_size] with batch_first, or unbatched [T,
  /// input_size]), hx = (h_0, c_0) each [num_layers, N, hidden_size] (zeros when not given) ->
  /// (output [T, N, hidden_size] (batch_first: [N, T, H]), (h_n, c_n)), as LibTorch's.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                         std::optional<std::tuple<Tensor, Tensor>> hx = std::nullopt);
};
WICK_MODULE(LSTM);

/// Gated recurrent unit, PyTorch's gates r, z, n:
/// n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h.
class GRUImpl : public RNNImplBase<GRUImpl> {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size, TensorOptions tensor_options = {})
      : GRUImpl(GRUOptions(input_size, hidden_size), tensor_options) {}
  explicit GRUImpl(const GRUOptions& options, TensorOptions tensor_options = {});
  /// input as LSTM's, hx = h_0 [num_layers, N, hidden_size] (zeros when undefined) ->
  /// (output, h_n), as LibTorch's.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});
};
WICK_MODULE(GRU);

}  // namespace wick::nn
