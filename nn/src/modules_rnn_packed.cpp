// RNN, LSTM and GRU on a PackedSequence (forward_with_packed_input): PyTorch's PackedLayer and
// ReversedPackedLayer (ATen's RNN.cpp) as a composite of differentiable ops. Step t runs the
// cell (rnn_step.h) on the batch_sizes[t] sequences still running; as the batch shrinks, the
// state rows of the sequences that ended are set aside as their final states.
#include <fmt/format.h>

#include <algorithm>

#include "rnn_step.h"
#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/checked_math.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/rnn.h"

namespace wick::nn {

using detail::CellState;
using detail::shape_str;
using utils::rnn::PackedSequence;

template <class Derived>
std::vector<int64_t> RNNImplBase<Derived>::packed_batch_sizes(const PackedSequence& input) const {
  const Tensor& data = input.data();
  WICK_CHECK(data.dim() == 2 && data.size(1) == options_.input_size(),
             "{}: packed input data {} must be [sum(batch_sizes), input_size = {}]; pack [T, B, {}] inputs with "
             "pack_padded_sequence",
             this->name(), shape_str(data), options_.input_size(), options_.input_size());
  const Tensor& w = this->param(weights_[0]);
  WICK_CHECK_TYPE(data.dtype() == w.dtype(), "{}: packed input is {} but the parameters are {}; convert one",
                  this->name(), data.dtype(), w.dtype());
  WICK_CHECK(data.device() == w.device(),
             "{}: packed input is on {} but the parameters are on {}; move one with .to(device)", this->name(),
             data.device(), w.device());
  // PackedSequence checked (and copied) them, but the tensor it hands out can be changed in
  // place: checked again, as the steps read data with them.
  const Tensor& given = input.batch_sizes();
  WICK_CHECK(given.defined() && given.dtype() == kInt64 && given.device().is_cpu() && given.dim() == 1,
             "{}: the PackedSequence's batch_sizes must be a 1-d CPU int64 tensor", this->name());
  const Tensor bs = given.contiguous();
  const int64_t* p = bs.template data_ptr<int64_t>();
  std::vector<int64_t> out(p, p + bs.numel());
  int64_t sum = 0;
  bool ok = !out.empty();
  for (size_t t = 0; ok && t < out.size(); ++t)
    ok = out[t] > 0 && (t == 0 || out[t] <= out[t - 1]) && !add_overflow(sum, out[t], &sum);
  WICK_CHECK(ok && sum == data.size(0),
             "{}: the PackedSequence's batch_sizes [{}] must be positive and non-increasing and sum to the {} rows "
             "of its data (were they changed in place?); build it with pack_padded_sequence",
             this->name(), fmt::join(out, ", "), data.size(0));
  return out;
}

template <class Derived>
Tensor RNNImplBase<Derived>::packed_initial_state(const Tensor& state, const char* what, const PackedSequence& input,
                                                  const std::vector<int64_t>& batch_sizes) const {
  // Step 0 holds every sequence: as time-major [1, B, in], it gives initial_state the batch.
  const Tensor first = input.data().narrow(0, 0, batch_sizes[0]).unsqueeze(0);
  const Tensor s = this->initial_state(state, what, first, true);
  const Tensor& order = input.sorted_indices();
  return state.defined() && order.defined() ? index_select(s, 1, order) : s;
}

namespace {

CellState rows(const CellState& s, int64_t start, int64_t n) {
  return {s.h.narrow(0, start, n), s.c.defined() ? s.c.narrow(0, start, n) : Tensor()};
}

CellState cat_rows(const std::vector<CellState>& parts) {
  std::vector<Tensor> h, c;
  for (const CellState& s : parts) {
    h.push_back(s.h);
    if (s.c.defined()) c.push_back(s.c);
  }
  return {cat(h, 0), c.empty() ? Tensor() : cat(c, 0)};
}

struct Pass {
  Tensor out;       // [S, H], in packed order
  CellState final;  // [B, H]: each sequence's state after its last step (sorted order)
};

// Forward in time: the batch shrinks; the rows that leave are final states.
Pass forward_pass(detail::CellKind kind, const detail::StepWeights& w, const std::vector<Tensor>& gi,
                  const std::vector<int64_t>& bs, CellState s) {
  std::vector<Tensor> outs;
  std::vector<CellState> finished;
  for (size_t t = 0; t < bs.size(); ++t) {
    const int64_t before = s.h.size(0);
    if (bs[t] < before) {
      finished.push_back(rows(s, bs[t], before - bs[t]));
      s = rows(s, 0, bs[t]);
    }
    s = detail::cell_step(kind, w, gi[t], s);
    outs.push_back(s.h);
  }
  finished.push_back(s);
  std::reverse(finished.begin(), finished.end());  // the longest sequences first
  return {cat(outs, 0), cat_rows(finished)};
}

// Backward in time: the batch grows; a sequence starts from its initial state at its last step.
Pass reverse_pass(detail::CellKind kind, const detail::StepWeights& w, const std::vector<Tensor>& gi,
                  const std::vector<int64_t>& bs, const CellState& s0) {
  std::vector<Tensor> outs;
  CellState s = rows(s0, 0, bs.back());
  for (size_t t = bs.size(); t-- > 0;) {
    const int64_t before = s.h.size(0);
    if (bs[t] > before) s = cat_rows({s, rows(s0, before, bs[t] - before)});
    s = detail::cell_step(kind, w, gi[t], s);
    outs.push_back(s.h);
  }
  std::reverse(outs.begin(), outs.end());
  return {cat(outs, 0), s};
}

}  // namespace

template <class Derived>
std::tuple<Tensor, Tensor, Tensor> RNNImplBase<Derived>::run_layers_packed(detail::CellKind kind, Tensor x,
                                                                           const std::vector<int64_t>& bs,
                                                                           const Tensor& h0, const Tensor& c0) const {
  const int64_t layers = options_.num_layers(), D = num_directions();
  const double p = this->is_training() ? options_.dropout() : 0.0;
  std::vector<Tensor> h_n, c_n;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < D; ++d) {
      const auto p4 = layer_parameters(l, d);  // weight_ih, weight_hh, bias_ih, bias_hh
      const detail::StepWeights w = detail::step_weights(kind, p4[0], p4[1], p4[2], p4[3]);
      // One GEMM projects every packed row; one split hands each step its rows.
      const auto gi = split_with_sizes(detail::input_projection(w, x), bs, 0);
      const CellState s0{h0[l * D + d], c0.defined() ? c0[l * D + d] : Tensor()};
      const Pass pass = d == 0 ? forward_pass(kind, w, gi, bs, s0) : reverse_pass(kind, w, gi, bs, s0);
      h_n.push_back(pass.final.h);
      if (pass.final.c.defined()) c_n.push_back(pass.final.c);
      outs.push_back(pass.out);
    }
    x = D == 1 ? outs[0] : cat(outs, 1);
    if (p > 0.0 && l + 1 < layers) x = F::dropout(x, p, true);
  }
  return {x, stack(h_n, 0), c_n.empty() ? Tensor() : stack(c_n, 0)};
}

template std::vector<int64_t> RNNImplBase<LSTMImpl>::packed_batch_sizes(const PackedSequence&) const;
template Tensor RNNImplBase<LSTMImpl>::packed_initial_state(const Tensor&, const char*, const PackedSequence&,
                                                            const std::vector<int64_t>&) const;
template std::tuple<Tensor, Tensor, Tensor> RNNImplBase<LSTMImpl>::run_layers_packed(detail::CellKind, Tensor,
                                                                                     const std::vector<int64_t>&,
                                                                                     const Tensor&,
                                                                                     const Tensor&) const;
template std::vector<int64_t> RNNImplBase<GRUImpl>::packed_batch_sizes(const PackedSequence&) const;
template Tensor RNNImplBase<GRUImpl>::packed_initial_state(const Tensor&, const char*, const PackedSequence&,
                                                           const std::vector<int64_t>&) const;
template std::tuple<Tensor, Tensor, Tensor> RNNImplBase<GRUImpl>::run_layers_packed(detail::CellKind, Tensor,
                                                                                    const std::vector<int64_t>&,
                                                                                    const Tensor&, const Tensor&) const;
template std::vector<int64_t> RNNImplBase<RNNImpl>::packed_batch_sizes(const PackedSequence&) const;
template Tensor RNNImplBase<RNNImpl>::packed_initial_state(const Tensor&, const char*, const PackedSequence&,
                                                           const std::vector<int64_t>&) const;
template std::tuple<Tensor, Tensor, Tensor> RNNImplBase<RNNImpl>::run_layers_packed(detail::CellKind, Tensor,
                                                                                    const std::vector<int64_t>&,
                                                                                    const Tensor&, const Tensor&) const;

namespace {
// The final states back in the batch's original order (PyTorch's permute_hidden).
Tensor unsorted(const Tensor& state, const PackedSequence& input) {
  const Tensor& order = input.unsorted_indices();
  return order.defined() ? index_select(state, 1, order) : state;
}

PackedSequence packed_like(const Tensor& data, const PackedSequence& input) {
  return PackedSequence(data, input.batch_sizes(), input.sorted_indices(), input.unsorted_indices());
}
}  // namespace

std::tuple<PackedSequence, std::tuple<Tensor, Tensor>> LSTMImpl::forward_with_packed_input(
    const PackedSequence& packed_input, std::optional<std::tuple<Tensor, Tensor>> hx) {
  const std::vector<int64_t> bs = packed_batch_sizes(packed_input);
  WICK_CHECK(!hx || std::get<0>(*hx).defined() == std::get<1>(*hx).defined(),
             "LSTM: hx holds {} but not {}; pass both states, or std::nullopt for zeros",
             std::get<0>(*hx).defined() ? "h_0" : "c_0", std::get<0>(*hx).defined() ? "c_0" : "h_0");
  const Tensor h0 = packed_initial_state(hx ? std::get<0>(*hx) : Tensor(), "h_0", packed_input, bs);
  const Tensor c0 = packed_initial_state(hx ? std::get<1>(*hx) : Tensor(), "c_0", packed_input, bs);
  auto [out, hs, cs] = run_layers_packed(detail::CellKind::LSTM, packed_input.data(), bs, h0, c0);
  return {packed_like(out, packed_input), {unsorted(hs, packed_input), unsorted(cs, packed_input)}};
}

std::tuple<PackedSequence, Tensor> GRUImpl::forward_with_packed_input(const PackedSequence& packed_input,
                                                                      const Tensor& hx) {
  const std::vector<int64_t> bs = packed_batch_sizes(packed_input);
  const Tensor h0 = packed_initial_state(hx, "h_0", packed_input, bs);
  auto [out, hs, cs] = run_layers_packed(detail::CellKind::GRU, packed_input.data(), bs, h0, Tensor());
  return {packed_like(out, packed_input), unsorted(hs, packed_input)};
}

std::tuple<PackedSequence, Tensor> RNNImpl::forward_with_packed_input(const PackedSequence& packed_input,
                                                                      const Tensor& hx) {
  const std::vector<int64_t> bs = packed_batch_sizes(packed_input);
  const Tensor h0 = packed_initial_state(hx, "h_0", packed_input, bs);
  const auto kind = rnn_options_.nonlinearity() == kReLU ? detail::CellKind::RNNReLU : detail::CellKind::RNNTanh;
  auto [out, hs, cs] = run_layers_packed(kind, packed_input.data(), bs, h0, Tensor());
  return {packed_like(out, packed_input), unsorted(hs, packed_input)};
}

}  // namespace wick::nn
