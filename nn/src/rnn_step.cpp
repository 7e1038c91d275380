// The step math of the recurrent layers and cells (rnn_step.h): one definition per recurrence.
#include "rnn_step.h"

#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"

namespace wick::nn::detail {

int64_t cell_gates(CellKind kind) {
  switch (kind) {
    case CellKind::LSTM:
      return 4;
    case CellKind::GRU:
      return 3;
    case CellKind::RNNTanh:
    case CellKind::RNNReLU:
      return 1;
  }
  WICK_FAIL("cell_gates: unknown cell kind {}", static_cast<int>(kind));
}

StepWeights step_weights(CellKind kind, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                         const Tensor& b_hh) {
  StepWeights w{w_ih, Tensor(), w_hh.t(), Tensor()};
  if (!b_ih.defined()) return w;
  if (kind != CellKind::GRU) {
    w.in_bias = b_ih + b_hh;
    return w;
  }
  // b_hr and b_hz join the input projection; b_hn stays inside r * (W_hn h + b_hn).
  const int64_t H = w_hh.size(1);
  w.in_bias = b_ih + cat({b_hh.narrow(0, 0, 2 * H), wick::zeros({H}, b_hh.options().requires_grad(false))}, 0);
  w.b_hn = b_hh.narrow(0, 2 * H, H);
  return w;
}

Tensor input_projection(const StepWeights& w, const Tensor& x) { return functional::linear(x, w.w_ih, w.in_bias); }

CellState cell_step(CellKind kind, const StepWeights& w, const Tensor& gi, const CellState& s) {
  switch (kind) {
    case CellKind::RNNTanh:
      return {wick::tanh(addmm(gi, s.h, w.w_hh_t)), Tensor()};
    case CellKind::RNNReLU:
      return {relu(addmm(gi, s.h, w.w_hh_t)), Tensor()};
    case CellKind::LSTM: {
      const auto g = addmm(gi, s.h, w.w_hh_t).chunk(4, 1);  // i, f, g, o
      const Tensor c = sigmoid(g[1]) * s.c + sigmoid(g[0]) * wick::tanh(g[2]);
      return {sigmoid(g[3]) * wick::tanh(c), c};
    }
    case CellKind::GRU: {
      const auto a = gi.chunk(3, 1);
      const auto b = matmul(s.h, w.w_hh_t).chunk(3, 1);
      const Tensor r = sigmoid(a[0] + b[0]), z = sigmoid(a[1] + b[1]);
      const Tensor n = wick::tanh(a[2] + r * (w.b_hn.defined() ? b[2] + w.b_hn : b[2]));
      return {n + z * (s.h - n), Tensor()};  // (1 - z) * n + z * h
    }
  }
  WICK_FAIL("cell_step: unknown cell kind {}", static_cast<int>(kind));
}

}  // namespace wick::nn::detail
