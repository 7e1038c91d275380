#pragma once
// RNN, LSTM and GRU (torch.nn.RNN, torch.nn.LSTM, torch.nn.GRU): multi-layer, optionally
// bidirectional. Their cells (one time step) are in rnn_cell.h.
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/utils/rnn.h"

namespace wick::nn {

namespace detail {
enum class CellKind;  // which recurrence (nn/src/rnn_step.h)
}  // namespace detail

/// The nonlinearity of RNN and RNNCell, as LibTorch's torch::kTanh and torch::kReLU.
enum class RNNNonlinearity { Tanh, ReLU };
inline constexpr RNNNonlinearity kTanh = RNNNonlinearity::Tanh;
inline constexpr RNNNonlinearity kReLU = RNNNonlinearity::ReLU;

/// The options of LSTM and GRU, as LibTorch's: `LSTMOptions(32, 64).num_layers(2).batch_first(true)`
/// (one struct under both names, as BatchNorm1dOptions and BatchNorm2dOptions). LSTM's
/// proj_size is not offered.
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
  /// A second pass over the sequence from its end; outputs have 2 * hidden_size features (the
  /// forward direction's first) and states 2 * num_layers entries (layer l's forward then
  /// reverse direction).
  WICK_ARG(bool, bidirectional) = false;
};
using LSTMOptions = RNNOptionsBase;
using GRUOptions = RNNOptionsBase;

/// The options of RNN, as LibTorch's: RNNOptionsBase's fields and the nonlinearity,
/// `RNNOptions(32, 64).num_layers(2).nonlinearity(kReLU)`.
struct RNNOptions {
  RNNOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  WICK_ARG(int64_t, input_size);
  WICK_ARG(int64_t, hidden_size);
  WICK_ARG(int64_t, num_layers) = 1;
  /// h' = tanh(...) (kTanh) or relu(...) (kReLU).
  WICK_ARG(RNNNonlinearity, nonlinearity) = kTanh;
  WICK_ARG(bool, bias) = true;
  WICK_ARG(bool, batch_first) = false;
  WICK_ARG(double, dropout) = 0.0;
  WICK_ARG(bool, bidirectional) = false;
};

/// The shared parameters, checks and layer loop. Per layer l, PyTorch's names and shapes: weight_ih_l{l}
/// [G * H, in_l], weight_hh_l{l} [G * H, H], bias_ih_l{l} and bias_hh_l{l} [G * H] (G gates:
/// 4 for LSTM, 3 for GRU, 1 for RNN, stacked in PyTorch's gate order; in_l = input_size for l = 0, else
/// H times the number of directions), then the same with the suffix "_reverse" when
/// bidirectional, all ~ U(-1/sqrt(H), 1/sqrt(H)) as PyTorch's. A PyTorch state_dict loads name for name. Each layer
/// runs one GEMM for the input projection of all time steps, then one hidden GEMM and the gate math per step (a
/// composite of differentiable ops, so every device and double backward come for free). The step math is the
/// cells' (rnn_cell.h): one definition for both.
template <class Derived>
class RNNImplBase : public Cloneable<Derived> {
 public:
  RNNImplBase(const RNNOptionsBase& options, int64_t gates, TensorOptions tensor_options);
  void reset_parameters();
  std::string extra_repr() const override;
  const RNNOptionsBase& options() const { return options_; }
  /// The parameters of layer l in direction 0 (forward) or 1 (reverse): {weight_ih, weight_hh,
  /// bias_ih, bias_hh} (biases undefined without bias).
  std::vector<Tensor> layer_parameters(int64_t layer, int64_t direction = 0) const;
  int64_t num_directions() const { return options_.bidirectional() ? 2 : 1; }

 protected:
  // input [T, N, in] / [N, T, in] / [T, in] -> time-major [T, N, in]; checks its features.
  Tensor time_major(const Tensor& input, bool batched) const;
  // A state given by the user: [D * num_layers, N, H] ([D * num_layers, H] unbatched), D
  // directions; zeros if undefined.
  Tensor initial_state(const Tensor& state, const char* what, const Tensor& input, bool batched) const;
  bool is_batched(const Tensor& input) const;
  // Runs every layer and direction over x (time-major [T, N, in]) from the states h0 (and c0
  // for LSTM, else undefined), [D * num_layers, N, H], with dropout between layers in training
  // mode: (output [T, N, D * H], h_n, c_n), c_n undefined unless LSTM.
  std::tuple<Tensor, Tensor, Tensor> run_layers(detail::CellKind kind, Tensor x, const Tensor& h0,
                                                const Tensor& c0) const;
  // Packed input (nn/src/modules_rnn_packed.cpp): checks input.data() ([S, input_size] of the
  // parameters' dtype and device) and returns the batch sizes.
  std::vector<int64_t> packed_batch_sizes(const utils::rnn::PackedSequence& input) const;
  // A state given by the user for packed input, checked as initial_state's against the batch of
  // step 0 and put in sorted order (index_select by sorted_indices); zeros if undefined.
  Tensor packed_initial_state(const Tensor& state, const char* what, const utils::rnn::PackedSequence& input,
                              const std::vector<int64_t>& batch_sizes) const;
  // run_layers over packed data [S, in] in sorted order: (output data [S, D * H], h_n, c_n), where
  // each sequence's final state is taken at its own last step (PyTorch's PackedLayer).
  std::tuple<Tensor, Tensor, Tensor> run_layers_packed(detail::CellKind kind, Tensor data,
                                                       const std::vector<int64_t>& batch_sizes, const Tensor& h0,
                                                       const Tensor& c0) const;

  RNNOptionsBase options_;
  std::vector<ParamSlot> weights_;  // 4 per layer and direction, in table order
};

/// Long short-term memory, PyTorch's gates i, f, g, o:
/// c' = sigmoid(f) * c + sigmoid(i) * tanh(g), h' = sigmoid(o) * tanh(c').
class LSTMImpl : public RNNImplBase<LSTMImpl> {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size, TensorOptions tensor_options = {})
      : LSTMImpl(LSTMOptions(input_size, hidden_size), tensor_options) {}
  explicit LSTMImpl(const LSTMOptions& options, TensorOptions tensor_options = {});
  /// input [T, N, input_size] ([N, T, input_size] with batch_first, or unbatched [T,
  /// input_size]), hx = (h_0, c_0) each [D * num_layers, N, hidden_size] (D directions; zeros
  /// when not given) -> (output [T, N, D * hidden_size] (batch_first: [N, T, D * H]), (h_n,
  /// c_n)), as LibTorch's.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                         std::optional<std::tuple<Tensor, Tensor>> hx = std::nullopt);
  /// A batch of variable-length sequences (utils/rnn.h), as LibTorch's: hx = (h_0, c_0) each
  /// [D * num_layers, B, hidden_size] in the batch's original order (zeros when not given) ->
  /// (output PackedSequence with data [S, D * hidden_size] and the input's batch_sizes and
  /// indices, (h_n, c_n) in the original order), each sequence's final state taken at its own last
  /// step (the reverse direction's at its first), as PyTorch's.
  std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, std::optional<std::tuple<Tensor, Tensor>> hx = std::nullopt);
};
WICK_MODULE(LSTM);

/// Gated recurrent unit, PyTorch's gates r, z, n:
/// n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h.
class GRUImpl : public RNNImplBase<GRUImpl> {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size, TensorOptions tensor_options = {})
      : GRUImpl(GRUOptions(input_size, hidden_size), tensor_options) {}
  explicit GRUImpl(const GRUOptions& options, TensorOptions tensor_options = {});
  /// input as LSTM's, hx = h_0 [D * num_layers, N, hidden_size] (zeros when undefined) ->
  /// (output, h_n), as LibTorch's.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});
  /// Packed input, as LSTM's forward_with_packed_input: (output PackedSequence, h_n).
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, const Tensor& hx = {});
};
WICK_MODULE(GRU);

/// Elman RNN: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (relu with kReLU), as torch.nn.RNN.
/// Parameters as LSTM's with one gate (weight_ih_l0 [H, input_size], ...).
class RNNImpl : public RNNImplBase<RNNImpl> {
 public:
  RNNImpl(int64_t input_size, int64_t hidden_size, TensorOptions tensor_options = {})
      : RNNImpl(RNNOptions(input_size, hidden_size), tensor_options) {}
  /// Throws ValueError for a nonlinearity other than kTanh or kReLU, and as LSTM's for the rest.
  explicit RNNImpl(const RNNOptions& options, TensorOptions tensor_options = {});
  /// input as LSTM's, hx = h_0 [D * num_layers, N, hidden_size] (zeros when undefined) ->
  /// (output, h_n), as LibTorch's and GRU's.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});
  /// Packed input, as LSTM's forward_with_packed_input: (output PackedSequence, h_n).
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, const Tensor& hx = {});
  /// The options the layer was built with (with the nonlinearity).
  const RNNOptions& options() const { return rnn_options_; }

 private:
  RNNOptions rnn_options_;
};
WICK_MODULE(RNN);

}  // namespace wick::nn
