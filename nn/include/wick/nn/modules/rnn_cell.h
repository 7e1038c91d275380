#pragma once
// RNNCell, LSTMCell and GRUCell (torch.nn.RNNCell, LSTMCell, GRUCell): one time step of RNN,
// LSTM and GRU, for loops the caller writes (attention over the steps, decoders, ...).
#include <optional>
#include <string>
#include <tuple>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/modules/rnn.h"

namespace wick::nn {

/// The options of LSTMCell and GRUCell, as LibTorch's: `LSTMCellOptions(32, 64).bias(false)`.
struct RNNCellOptionsBase {
  RNNCellOptionsBase(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  WICK_ARG(int64_t, input_size);
  WICK_ARG(int64_t, hidden_size);
  /// Whether to learn bias_ih and bias_hh.
  WICK_ARG(bool, bias) = true;
};
using LSTMCellOptions = RNNCellOptionsBase;
using GRUCellOptions = RNNCellOptionsBase;

/// The options of RNNCell, as LibTorch's: `RNNCellOptions(32, 64).nonlinearity(kReLU)`.
struct RNNCellOptions {
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  WICK_ARG(int64_t, input_size);
  WICK_ARG(int64_t, hidden_size);
  WICK_ARG(bool, bias) = true;
  /// h' = tanh(...) (kTanh) or relu(...) (kReLU).
  WICK_ARG(RNNNonlinearity, nonlinearity) = kTanh;
};

/// The shared parameters and checks of the cells, with PyTorch's names and shapes: weight_ih
/// [G * H, input_size], weight_hh [G * H, H], bias_ih and bias_hh [G * H] (G gates: 1 for
/// RNNCell, 4 for LSTMCell, 3 for GRUCell, in PyTorch's gate order), all ~ U(-1/sqrt(H),
/// 1/sqrt(H)) as PyTorch's, so a PyTorch state_dict loads name for name. A step is the layers'
/// step (one definition of the math, nn/src/rnn_step.h): a cell and a one-layer RNN, LSTM or
/// GRU with the same weights compute the same values.
template <class Derived>
class RNNCellImplBase : public Cloneable<Derived> {
 public:
  /// Throws ValueError unless input_size and hidden_size are positive.
  RNNCellImplBase(const RNNCellOptionsBase& options, int64_t gates, TensorOptions tensor_options);
  /// Redraws every parameter from U(-1/sqrt(H), 1/sqrt(H)).
  void reset_parameters();
  /// "10, 20" and ", bias=False" without bias, as PyTorch 1.13 prints a cell.
  std::string extra_repr() const override;
  /// The options the cell was built with.
  const RNNCellOptionsBase& options() const { return options_; }
  /// The parameters, as LibTorch's members of these names (biases undefined without bias).
  const Tensor& weight_ih() const { return this->param(weight_ih_); }
  const Tensor& weight_hh() const { return this->param(weight_hh_); }
  const Tensor& bias_ih() const { return this->param(bias_ih_); }
  const Tensor& bias_hh() const { return this->param(bias_hh_); }

 protected:
  // Checks the input ([N, input_size] or unbatched [input_size], of the parameters' dtype and
  // device) and returns it as [N, input_size].
  Tensor batch_input(const Tensor& input) const;
  // A state given by the user ([N, H], or [H] for unbatched input, of x's dtype and device) as
  // [N, H]; zeros if undefined. x is batch_input's result.
  Tensor batch_state(const Tensor& state, const char* what, const Tensor& input, const Tensor& x) const;

  RNNCellOptionsBase options_;
  ParamSlot weight_ih_, weight_hh_, bias_ih_, bias_hh_;
};

/// Elman cell: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (relu with kReLU).
class RNNCellImpl : public RNNCellImplBase<RNNCellImpl> {
 public:
  RNNCellImpl(int64_t input_size, int64_t hidden_size, TensorOptions tensor_options = {})
      : RNNCellImpl(RNNCellOptions(input_size, hidden_size), tensor_options) {}
  /// Throws ValueError for a nonlinearity other than kTanh or kReLU, and as the base's.
  explicit RNNCellImpl(const RNNCellOptions& options, TensorOptions tensor_options = {});
  /// input [N, input_size] (or unbatched [input_size]), hx [N, hidden_size] ([hidden_size];
  /// zeros when undefined) -> h' of hx's shape, as LibTorch's.
  Tensor forward(const Tensor& input, const Tensor& hx = {});
  /// The base's, then ", nonlinearity=relu" for kReLU, as PyTorch 1.13's.
  std::string extra_repr() const override;
  /// The options the cell was built with (with the nonlinearity).
  const RNNCellOptions& options() const { return rnn_options_; }

 private:
  RNNCellOptions rnn_options_;
};
WICK_MODULE(RNNCell);

/// LSTM cell, LSTM's step: gates i, f, g, o; c' = sigmoid(f) * c + sigmoid(i) * tanh(g),
/// h' = sigmoid(o) * tanh(c').
class LSTMCellImpl : public RNNCellImplBase<LSTMCellImpl> {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size, TensorOptions tensor_options = {})
      : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size), tensor_options) {}
  explicit LSTMCellImpl(const LSTMCellOptions& options, TensorOptions tensor_options = {});
  /// input [N, input_size] (or unbatched [input_size]), hx = (h, c) each [N, hidden_size]
  /// ([hidden_size]; zeros when std::nullopt; both or neither) -> (h', c'), as LibTorch's.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx = std::nullopt);
};
WICK_MODULE(LSTMCell);

/// GRU cell, GRU's step: gates r, z, n; n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),
/// h' = (1 - z) * n + z * h.
class GRUCellImpl : public RNNCellImplBase<GRUCellImpl> {
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size, TensorOptions tensor_options = {})
      : GRUCellImpl(GRUCellOptions(input_size, hidden_size), tensor_options) {}
  explicit GRUCellImpl(const GRUCellOptions& options, TensorOptions tensor_options = {});
  /// input [N, input_size] (or unbatched [input_size]), hx [N, hidden_size] ([hidden_size];
  /// zeros when undefined) -> h' of hx's shape, as LibTorch's.
  Tensor forward(const Tensor& input, const Tensor& hx = {});
};
WICK_MODULE(GRUCell);

}  // namespace wick::nn
