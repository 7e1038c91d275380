// RNN, LSTM and GRU: a composite of differentiable ops per time step (the step math: rnn_step.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "repr.h"
#include "rnn_step.h"
#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/nn/functional.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/rnn.h"

namespace wick::nn {

using detail::shape_str;

template <class Derived>
RNNImplBase<Derived>::RNNImplBase(const RNNOptionsBase& options, int64_t gates, TensorOptions tensor_options)
    : options_(options) {
  const std::string name = detail::module_type_name(typeid(Derived));
  const int64_t in = options.input_size(), H = options.hidden_size(), layers = options.num_layers();
  WICK_CHECK(in > 0 && H > 0 && layers > 0,
             "{}: input_size ({}), hidden_size ({}) and num_layers ({}) must be positive", name, in, H, layers);
  WICK_CHECK(options.dropout() >= 0.0 && options.dropout() <= 1.0, "{}: dropout must be in [0, 1], got {}", name,
             options.dropout());
  tensor_options = tensor_options.requires_grad(false);
  const int64_t directions = options.bidirectional() ? 2 : 1;
  for (int64_t l = 0; l < layers; ++l) {
    const int64_t in_l = l == 0 ? in : directions * H;
    for (int64_t d = 0; d < directions; ++d) {
      const char* suffix = d == 0 ? "" : "_reverse";
      auto add = [&](const char* kind, IntArrayRef shape, bool defined) {
        weights_.push_back(this->register_parameter(fmt::format("{}_l{}{}", kind, l, suffix),
                                                    defined ? wick::empty(shape, tensor_options) : Tensor()));
      };
      add("weight_ih", {gates * H, in_l}, true);
      add("weight_hh", {gates * H, H}, true);
      add("bias_ih", {gates * H}, options.bias());
      add("bias_hh", {gates * H}, options.bias());
    }
  }
  reset_parameters();
}

template <class Derived>
void RNNImplBase<Derived>::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(options_.hidden_size()));
  for (ParamSlot s : weights_)
    if (this->param(s).defined()) init::uniform_(this->param(s), -bound, bound);
}

template <class Derived>
std::vector<Tensor> RNNImplBase<Derived>::layer_parameters(int64_t layer, int64_t direction) const {
  const auto first = static_cast<size_t>((layer * num_directions() + direction) * 4);
  std::vector<Tensor> p;
  for (size_t i = 0; i < 4; ++i) p.push_back(this->param(weights_[first + i]));
  return p;
}

template <class Derived>
std::string RNNImplBase<Derived>::extra_repr() const {
  const auto& o = options_;
  std::string s = fmt::format("{}, {}", o.input_size(), o.hidden_size());
  if (o.num_layers() != 1) s += fmt::format(", num_layers={}", o.num_layers());
  if (!o.bias()) s += ", bias=False";
  if (o.batch_first()) s += ", batch_first=True";
  if (o.dropout() != 0.0) s += fmt::format(", dropout={}", detail::py_float(o.dropout()));
  if (o.bidirectional()) s += ", bidirectional=True";
  return s;
}

template <class Derived>
bool RNNImplBase<Derived>::is_batched(const Tensor& input) const {
  const std::string name = this->name();
  WICK_CHECK(input.defined() && (input.dim() == 2 || input.dim() == 3),
             "{}: expected input {} (or unbatched [T, input_size]), got {}", name,
             options_.batch_first() ? "[N, T, input_size]" : "[T, N, input_size]", shape_str(input));
  return input.dim() == 3;
}

template <class Derived>
Tensor RNNImplBase<Derived>::time_major(const Tensor& input, bool batched) const {
  WICK_CHECK(input.size(-1) == options_.input_size(),
             "{}: input {} must have input_size = {} features in its last dim; give the layer input_size {} or "
             "reshape the input",
             this->name(), shape_str(input), options_.input_size(), input.size(-1));
  const Tensor& w = this->param(weights_[0]);
  WICK_CHECK_TYPE(input.dtype() == w.dtype(), "{}: input is {} but the parameters are {}; convert one to the other",
                  this->name(), input.dtype(), w.dtype());
  WICK_CHECK(input.device() == w.device(), "{}: input is on {} but the parameters are on {}; move one with .to(device)",
             this->name(), input.device(), w.device());
  const int64_t steps = batched && options_.batch_first() ? input.size(1) : input.size(0);
  WICK_CHECK(steps > 0,
             "{}: input {} has no time steps; a sequence needs at least one (PyTorch: \"Expected "
             "sequence length to be larger than 0\")",
             this->name(), shape_str(input));
  if (!batched) return input.unsqueeze(1);
  return options_.batch_first() ? input.transpose(0, 1) : input;
}

template <class Derived>
Tensor RNNImplBase<Derived>::initial_state(const Tensor& state, const char* what, const Tensor& x, bool batched) const {
  const int64_t L = num_directions() * options_.num_layers(), N = x.size(1), H = options_.hidden_size();
  if (!state.defined()) return wick::zeros({L, N, H}, TensorOptions(x.dtype()).device(x.device()));
  const bool ok = batched ? state.dim() == 3 && state.size(0) == L && state.size(1) == N && state.size(2) == H
                          : state.dim() == 2 && state.size(0) == L && state.size(1) == H;
  WICK_CHECK(ok,
             "{}: {} {} must be [{}num_layers, N, hidden_size] = [{}, {}, {}] (unbatched: [{}, {}]) for input of "
             "batch {}",
             this->name(), what, shape_str(state), num_directions() == 2 ? "2 * " : "", L, N, H, L, H, N);
  WICK_CHECK_TYPE(state.dtype() == x.dtype(), "{}: {} is {} but input is {}", this->name(), what, state.dtype(),
                  x.dtype());
  WICK_CHECK(state.device() == x.device(), "{}: {} is on {} but input is on {}; move it with .to(device)", this->name(),
             what, state.device(), x.device());
  return batched ? state : state.unsqueeze(1);
}

namespace {
// Time-major [T, N, F] -> the caller's layout.
Tensor output_layout(const Tensor& out, bool batched, bool batch_first) {
  if (!batched) return out.squeeze(1);
  return batch_first ? out.transpose(0, 1) : out;
}

// The step order of one direction.
int64_t step_time(int64_t i, int64_t T, bool reverse) { return reverse ? T - 1 - i : i; }

// Stacks per-step outputs, collected in step order, back into time order [T, N, H].
Tensor in_time_order(std::vector<Tensor> steps, bool reverse) {
  if (reverse) std::reverse(steps.begin(), steps.end());
  return stack(steps, 0);
}
}  // namespace

template <class Derived>
std::tuple<Tensor, Tensor, Tensor> RNNImplBase<Derived>::run_layers(detail::CellKind kind, Tensor x, const Tensor& h0,
                                                                    const Tensor& c0) const {
  const int64_t T = x.size(0), layers = options_.num_layers(), D = num_directions();
  const double p = this->is_training() ? options_.dropout() : 0.0;
  std::vector<Tensor> h_n, c_n;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < D; ++d) {
      const auto p4 = layer_parameters(l, d);  // weight_ih, weight_hh, bias_ih, bias_hh
      const detail::StepWeights w = detail::step_weights(kind, p4[0], p4[1], p4[2], p4[3]);
      // The input projection of all steps is one GEMM; the steps are one split of it (one
      // backward node that concatenates the step gradients), not T selects (each of whose
      // backward would write a whole [T, N, G * H] zero tensor).
      const auto gi = detail::input_projection(w, x).split(1, 0);  // T x [1, N, G * H]
      detail::CellState s{h0[l * D + d], c0.defined() ? c0[l * D + d] : Tensor()};
      std::vector<Tensor> steps;
      for (int64_t i = 0; i < T; ++i) {
        s = detail::cell_step(kind, w, gi[step_time(i, T, d == 1)].squeeze(0), s);
        steps.push_back(s.h);
      }
      h_n.push_back(s.h);
      if (s.c.defined()) c_n.push_back(s.c);
      outs.push_back(in_time_order(std::move(steps), d == 1));
    }
    x = D == 1 ? outs[0] : cat(outs, 2);
    if (p > 0.0 && l + 1 < layers) x = F::dropout(x, p, true);
  }
  return {x, stack(h_n, 0), c_n.empty() ? Tensor() : stack(c_n, 0)};
}

template class RNNImplBase<LSTMImpl>;
template class RNNImplBase<GRUImpl>;
template class RNNImplBase<RNNImpl>;

LSTMImpl::LSTMImpl(const LSTMOptions& options, TensorOptions tensor_options)
    : RNNImplBase<LSTMImpl>(options, detail::cell_gates(detail::CellKind::LSTM), tensor_options) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                 std::optional<std::tuple<Tensor, Tensor>> hx) {
  const bool batched = is_batched(input);
  const Tensor x = time_major(input, batched);
  // PyTorch refuses (h_0, None); zeros for a lost c_0 would silently restart the cell state.
  WICK_CHECK(!hx || std::get<0>(*hx).defined() == std::get<1>(*hx).defined(),
             "LSTM: hx holds {} but not {}; pass both states, or std::nullopt for zeros",
             std::get<0>(*hx).defined() ? "h_0" : "c_0", std::get<0>(*hx).defined() ? "c_0" : "h_0");
  const Tensor h0 = initial_state(hx ? std::get<0>(*hx) : Tensor(), "h_0", x, batched);
  const Tensor c0 = initial_state(hx ? std::get<1>(*hx) : Tensor(), "c_0", x, batched);
  auto [out, hs, cs] = run_layers(detail::CellKind::LSTM, x, h0, c0);
  if (!batched) {
    hs = hs.squeeze(1);
    cs = cs.squeeze(1);
  }
  return {output_layout(out, batched, options_.batch_first()), {hs, cs}};
}

GRUImpl::GRUImpl(const GRUOptions& options, TensorOptions tensor_options)
    : RNNImplBase<GRUImpl>(options, detail::cell_gates(detail::CellKind::GRU), tensor_options) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, const Tensor& hx) {
  const bool batched = is_batched(input);
  const Tensor x = time_major(input, batched);
  const Tensor h0 = initial_state(hx, "h_0", x, batched);
  const auto r = run_layers(detail::CellKind::GRU, x, h0, Tensor());
  const Tensor& hs = std::get<1>(r);
  return {output_layout(std::get<0>(r), batched, options_.batch_first()), batched ? hs : hs.squeeze(1)};
}

namespace {
// RNNOptions -> the fields the layers share, after checking the nonlinearity.
RNNOptionsBase rnn_base_options(const RNNOptions& o) {
  WICK_CHECK(o.nonlinearity() == kTanh || o.nonlinearity() == kReLU,
             "RNN: nonlinearity must be kTanh or kReLU, got RNNNonlinearity({}); PyTorch's \"tanh\" is kTanh and "
             "\"relu\" is kReLU",
             static_cast<int>(o.nonlinearity()));
  return RNNOptionsBase(o.input_size(), o.hidden_size())
      .num_layers(o.num_layers())
      .bias(o.bias())
      .batch_first(o.batch_first())
      .dropout(o.dropout())
      .bidirectional(o.bidirectional());
}
}  // namespace

RNNImpl::RNNImpl(const RNNOptions& options, TensorOptions tensor_options)
    : RNNImplBase<RNNImpl>(rnn_base_options(options), detail::cell_gates(detail::CellKind::RNNTanh), tensor_options),
      rnn_options_(options) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, const Tensor& hx) {
  const bool batched = is_batched(input);
  const Tensor x = time_major(input, batched);
  const Tensor h0 = initial_state(hx, "h_0", x, batched);
  const auto kind = rnn_options_.nonlinearity() == kReLU ? detail::CellKind::RNNReLU : detail::CellKind::RNNTanh;
  const auto r = run_layers(kind, x, h0, Tensor());
  const Tensor& hs = std::get<1>(r);
  return {output_layout(std::get<0>(r), batched, options_.batch_first()), batched ? hs : hs.squeeze(1)};
}

}  // namespace wick::nn
