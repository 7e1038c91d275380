#pragma once
// Internal: the recurrences of nn::RNN, LSTM, GRU and their cells, each written once. The layers
// (modules_rnn.cpp) and the cells (modules_rnn_cell.cpp) both step through cell_step, so a cell
// and a one-layer layer with the same weights compute the same ops.
#include "wick/core/tensor.h"

namespace wick::nn::detail {

/// Which recurrence: Elman with tanh or relu, LSTM (gates i, f, g, o) or GRU (gates r, z, n).
enum class CellKind : int { RNNTanh, RNNReLU, LSTM, GRU };

/// The gate count G: the weights are [G * H, in] and [G * H, H].
int64_t cell_gates(CellKind kind);

/// One direction's (or one cell's) weights, prepared for stepping.
struct StepWeights {
  Tensor w_ih;     ///< [G * H, in]
  Tensor in_bias;  ///< the biases folded into the input projection (undefined without bias)
  Tensor w_hh_t;   ///< weight_hh transposed, [H, G * H]
  Tensor b_hn;     ///< GRU only: the part of bias_hh that stays inside r * (W_hn h + b_hn)
};

/// Prepares weight_ih, weight_hh, bias_ih, bias_hh (both biases undefined, or both defined) for
/// cell_step: LSTM and RNN fold both biases into the input projection; GRU folds all of them but
/// b_hn.
StepWeights step_weights(CellKind kind, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh);

/// x [..., in] -> its input projection x W_ih^T + in_bias [..., G * H]. The layers project all
/// time steps at once; a cell projects its one step.
Tensor input_projection(const StepWeights& w, const Tensor& x);

/// A recurrent state: h [N, H], and c [N, H] for LSTM (undefined otherwise).
struct CellState {
  Tensor h, c;
};

/// One step: gi, this step's input projection [N, G * H], and the state before it -> the state
/// after it.
///  RNN:  h' = act(gi + h W_hh^T)
///  LSTM: i, f, g, o = gi + h W_hh^T; c' = sigmoid(f) * c + sigmoid(i) * tanh(g),
///        h' = sigmoid(o) * tanh(c')
///  GRU:  a = gi, b = h W_hh^T; r = sigmoid(a_r + b_r), z = sigmoid(a_z + b_z),
///        n = tanh(a_n + r * (b_n + b_hn)), h' = (1 - z) * n + z * h
CellState cell_step(CellKind kind, const StepWeights& w, const Tensor& gi, const CellState& state);

}  // namespace wick::nn::detail
