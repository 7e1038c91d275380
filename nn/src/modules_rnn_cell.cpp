// RNNCell, LSTMCell and GRUCell: one step of the layers' recurrences (rnn_step.h).
#include <fmt/format.h>

#include <cmath>

#include "repr.h"
#include "rnn_step.h"
#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/rnn_cell.h"

namespace wick::nn {

namespace {
using detail::shape_str;

// "RNNCell" -> "RNN": the layer that runs the cell over a sequence.
std::string layer_of(const std::string& cell) { return cell.substr(0, cell.size() - 4); }
}  // namespace

template <class Derived>
RNNCellImplBase<Derived>::RNNCellImplBase(const RNNCellOptionsBase& options, int64_t gates,
                                          TensorOptions tensor_options)
    : options_(options) {
  const std::string name = detail::module_type_name(typeid(Derived));
  const int64_t in = options.input_size(), H = options.hidden_size();
  WICK_CHECK(in > 0 && H > 0, "{}: input_size ({}) and hidden_size ({}) must be positive", name, in, H);
  tensor_options = tensor_options.requires_grad(false);
  auto add = [&](const char* kind, IntArrayRef shape, bool defined) {
    return this->register_parameter(kind, defined ? wick::empty(shape, tensor_options) : Tensor());
  };
  weight_ih_ = add("weight_ih", {gates * H, in}, true);
  weight_hh_ = add("weight_hh", {gates * H, H}, true);
  bias_ih_ = add("bias_ih", {gates * H}, options.bias());
  bias_hh_ = add("bias_hh", {gates * H}, options.bias());
  reset_parameters();
}

template <class Derived>
void RNNCellImplBase<Derived>::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(options_.hidden_size()));
  for (ParamSlot s : {weight_ih_, weight_hh_, bias_ih_, bias_hh_})
    if (this->param(s).defined()) init::uniform_(this->param(s), -bound, bound);
}

template <class Derived>
std::string RNNCellImplBase<Derived>::extra_repr() const {
  std::string s = fmt::format("{}, {}", options_.input_size(), options_.hidden_size());
  if (!options_.bias()) s += ", bias=False";
  return s;
}

template <class Derived>
Tensor RNNCellImplBase<Derived>::batch_input(const Tensor& input) const {
  const std::string name = this->name();
  WICK_CHECK(input.defined() && (input.dim() == 1 || input.dim() == 2),
             "{}: expected input [N, input_size] or unbatched [input_size], got {}; a cell takes one time step: "
             "step it over the sequence, or run nn::{} on the whole sequence",
             name, shape_str(input), layer_of(name));
  WICK_CHECK(input.size(-1) == options_.input_size(),
             "{}: input {} must have input_size = {} features in its last dim; give the cell input_size {} or "
             "reshape the input",
             name, shape_str(input), options_.input_size(), input.size(-1));
  const Tensor& w = weight_ih();
  WICK_CHECK_TYPE(input.dtype() == w.dtype(), "{}: input is {} but the parameters are {}; convert one to the other",
                  name, input.dtype(), w.dtype());
  WICK_CHECK(input.device() == w.device(), "{}: input is on {} but the parameters are on {}; move one with .to(device)",
             name, input.device(), w.device());
  return input.dim() == 2 ? input : input.unsqueeze(0);
}

template <class Derived>
Tensor RNNCellImplBase<Derived>::batch_state(const Tensor& state, const char* what, const Tensor& input,
                                             const Tensor& x) const {
  const int64_t N = x.size(0), H = options_.hidden_size();
  if (!state.defined()) return wick::zeros({N, H}, TensorOptions(x.dtype()).device(x.device()));
  const bool batched = input.dim() == 2;
  const bool ok =
      batched ? state.dim() == 2 && state.size(0) == N && state.size(1) == H : state.dim() == 1 && state.size(0) == H;
  if (batched) {
    WICK_CHECK(ok, "{}: {} {} must be [N, hidden_size] = [{}, {}] for input {}", this->name(), what, shape_str(state),
               N, H, shape_str(input));
  } else {
    WICK_CHECK(ok, "{}: {} {} must be [hidden_size] = [{}] for unbatched input {}", this->name(), what,
               shape_str(state), H, shape_str(input));
  }
  WICK_CHECK_TYPE(state.dtype() == x.dtype(), "{}: {} is {} but input is {}; convert one to the other", this->name(),
                  what, state.dtype(), x.dtype());
  WICK_CHECK(state.device() == x.device(), "{}: {} is on {} but input is on {}; move it with .to(device)", this->name(),
             what, state.device(), x.device());
  return batched ? state : state.unsqueeze(0);
}

template class RNNCellImplBase<RNNCellImpl>;
template class RNNCellImplBase<LSTMCellImpl>;
template class RNNCellImplBase<GRUCellImpl>;

namespace {
// One step of `kind` with the cell's parameters, from the state s ([N, H] each).
detail::CellState step(detail::CellKind kind, const std::vector<Tensor>& p, const Tensor& x,
                       const detail::CellState& s) {
  const detail::StepWeights w = detail::step_weights(kind, p[0], p[1], p[2], p[3]);
  return detail::cell_step(kind, w, detail::input_projection(w, x), s);
}

// [N, H] -> [H] for unbatched input.
Tensor unbatch(const Tensor& t, const Tensor& input) { return input.dim() == 2 ? t : t.squeeze(0); }

// RNNCellOptions -> the fields the cells share, after checking the nonlinearity.
RNNCellOptionsBase cell_base_options(const RNNCellOptions& o) {
  WICK_CHECK(o.nonlinearity() == kTanh || o.nonlinearity() == kReLU,
             "RNNCell: nonlinearity must be kTanh or kReLU, got RNNNonlinearity({}); PyTorch's \"tanh\" is kTanh "
             "and \"relu\" is kReLU",
             static_cast<int>(o.nonlinearity()));
  return RNNCellOptionsBase(o.input_size(), o.hidden_size()).bias(o.bias());
}
}  // namespace

RNNCellImpl::RNNCellImpl(const RNNCellOptions& options, TensorOptions tensor_options)
    : RNNCellImplBase<RNNCellImpl>(cell_base_options(options), detail::cell_gates(detail::CellKind::RNNTanh),
                                   tensor_options),
      rnn_options_(options) {}

Tensor RNNCellImpl::forward(const Tensor& input, const Tensor& hx) {
  const Tensor x = batch_input(input);
  const Tensor h = batch_state(hx, "hx", input, x);
  const auto kind = rnn_options_.nonlinearity() == kReLU ? detail::CellKind::RNNReLU : detail::CellKind::RNNTanh;
  return unbatch(step(kind, {weight_ih(), weight_hh(), bias_ih(), bias_hh()}, x, {h, Tensor()}).h, input);
}

std::string RNNCellImpl::extra_repr() const {
  std::string s = RNNCellImplBase<RNNCellImpl>::extra_repr();
  if (rnn_options_.nonlinearity() == kReLU) s += ", nonlinearity=relu";
  return s;
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& options, TensorOptions tensor_options)
    : RNNCellImplBase<LSTMCellImpl>(options, detail::cell_gates(detail::CellKind::LSTM), tensor_options) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx) {
  const Tensor x = batch_input(input);
  // As LSTM's: zeros for a lost c_0 would silently restart the cell state.
  WICK_CHECK(!hx || std::get<0>(*hx).defined() == std::get<1>(*hx).defined(),
             "LSTMCell: hx holds {} but not {}; pass both states, or std::nullopt for zeros",
             std::get<0>(*hx).defined() ? "h_0" : "c_0", std::get<0>(*hx).defined() ? "c_0" : "h_0");
  const Tensor h = batch_state(hx ? std::get<0>(*hx) : Tensor(), "h_0", input, x);
  const Tensor c = batch_state(hx ? std::get<1>(*hx) : Tensor(), "c_0", input, x);
  const detail::CellState s = step(detail::CellKind::LSTM, {weight_ih(), weight_hh(), bias_ih(), bias_hh()}, x, {h, c});
  return {unbatch(s.h, input), unbatch(s.c, input)};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& options, TensorOptions tensor_options)
    : RNNCellImplBase<GRUCellImpl>(options, detail::cell_gates(detail::CellKind::GRU), tensor_options) {}

Tensor GRUCellImpl::forward(const Tensor& input, const Tensor& hx) {
  const Tensor x = batch_input(input);
  const Tensor h = batch_state(hx, "hx", input, x);
  return unbatch(step(detail::CellKind::GRU, {weight_ih(), weight_hh(), bias_ih(), bias_hh()}, x, {h, Tensor()}).h,
                 input);
}

}  // namespace wick::nn
