// LBFGS: PyTorch 1.13's LBFGS.step (LibTorch's LBFGS::step(LossClosure)) on flat tensors, with
// its state kept as Note [LBFGS state] says.
#include "wick/nn/optim/lbfgs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>

#include "copy_back.h"
#include "lbfgs_line_search.h"
#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

namespace {

constexpr double kMaxCount = 9007199254740992.0;  // 2^53: counts read from numbers stay exact

// Throws ValueError naming the first invalid option.
void check_options(const LBFGSOptions& o, const char* op) {
  detail::check_finite_nonneg(op, "learning rate", o.lr());
  WICK_CHECK(o.max_iter() >= 1, "{}: invalid max_iter {} (must be >= 1)", op, o.max_iter());
  WICK_CHECK(!o.max_eval() || *o.max_eval() >= 1, "{}: invalid max_eval {} (must be >= 1)", op,
             o.max_eval().value_or(0));
  detail::check_finite_nonneg(op, "tolerance_grad", o.tolerance_grad());
  detail::check_finite_nonneg(op, "tolerance_change", o.tolerance_change());
  WICK_CHECK(o.history_size() >= 1, "{}: invalid history_size {} (must be >= 1)", op, o.history_size());
  WICK_CHECK(!o.line_search_fn() || *o.line_search_fn() == "strong_wolfe",
             "{}: unknown line_search_fn \"{}\" (only \"strong_wolfe\" is supported, or none for a fixed step)", op,
             o.line_search_fn().value_or(""));
}

// `v` as a count of option `name`: a whole number in [1, 2^53] (ValueError otherwise).
int64_t count_option(const char* name, double v) {
  WICK_CHECK(v >= 1 && v <= kMaxCount && v == std::floor(v), "LBFGS: invalid {} {} (must be a whole number >= 1)", name,
             v);
  return static_cast<int64_t>(v);
}

double max_abs(const Tensor& t) { return t.abs().max().item<double>(); }
Tensor host_number(double v) { return wick::scalar_tensor(v, TensorOptions(kFloat64)); }

const std::vector<std::string> kHistoryNames = {"d",  "t",      "old_dirs",       "old_stps",
                                                "ro", "H_diag", "prev_flat_grad", "prev_loss"};

}  // namespace

OptionValues LBFGSOptions::values() const {
  return {{"lr", lr_},
          {"max_iter", static_cast<double>(max_iter_)},
          {"max_eval", static_cast<double>(max_eval_.value_or(max_iter_ * 5 / 4))},
          {"tolerance_grad", tolerance_grad_},
          {"tolerance_change", tolerance_change_},
          {"history_size", static_cast<double>(history_size_)},
          {"line_search_fn", line_search_fn_ ? 1.0 : 0.0}};
}

void LBFGSOptions::set_values(const OptionValues& v) {
  auto m = detail::read_options(
      v, {"lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change", "history_size", "line_search_fn"},
      "LBFGS");
  LBFGSOptions o = *this;
  o.lr(m["lr"]);
  o.max_iter(count_option("max_iter", m["max_iter"]));
  o.max_eval(count_option("max_eval", m["max_eval"]));
  o.tolerance_grad(m["tolerance_grad"]);
  o.tolerance_change(m["tolerance_change"]);
  o.history_size(count_option("history_size", m["history_size"]));
  const double ls = m["line_search_fn"];
  WICK_CHECK(ls == 0 || ls == 1, "LBFGS: invalid line_search_fn {} (0 for none, 1 for \"strong_wolfe\")", ls);
  o.line_search_fn(ls == 1 ? std::optional<std::string>("strong_wolfe") : std::nullopt);
  check_options(o, "LBFGS");
  *this = o;
}

LBFGS::LBFGS(std::vector<Tensor> params, const LBFGSOptions& options)
    : LBFGS(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

LBFGS::LBFGS(std::vector<ParamGroup> groups, const LBFGSOptions& defaults)
    : OptimizerBase(std::move(groups), defaults, "LBFGS", check_options) {
  WICK_CHECK(param_groups().size() == 1,
             "LBFGS doesn't support per-parameter options (parameter groups): got {} groups; pass every parameter "
             "in one",
             param_groups().size());
  const Tensor& p0 = params()[0];
  for (size_t i = 1; i < params().size(); ++i) {
    const Tensor& p = params()[i];
    WICK_CHECK_TYPE(p.dtype() == p0.dtype(),
                    "LBFGS: parameter {} is {} but parameter 0 is {}; LBFGS keeps one flat "
                    "state for all its parameters, so they need one dtype",
                    i, p.dtype(), p0.dtype());
    WICK_CHECK(p.device() == p0.device(),
               "LBFGS: parameter {} is on {} but parameter 0 is on {}; all parameters "
               "have to be on one device (as PyTorch)",
               i, p.device(), p0.device());
  }
  // As LibTorch: an unset max_eval becomes max_iter * 5 / 4.
  for (OptimizerOptions* o : {static_cast<OptimizerOptions*>(&param_groups()[0].options()),
                              const_cast<OptimizerOptions*>(&this->defaults())}) {
    auto& lo = static_cast<LBFGSOptions&>(*o);
    if (!lo.max_eval()) lo.max_eval(lo.max_iter() * 5 / 4);
  }
}

void LBFGS::check_group_options(const OptimizerOptions& o) const {
  // param_groups()[0] is there: OptimizerBase's constructor stores the groups before it checks
  // any group's options, an optimizer is never made with no group (OptimizerBase refuses an
  // empty parameter list), and groups are never removed; add_param_group calls this with the
  // new group's options, which are not group 0's, so it is refused.
  WICK_CHECK(&o == &param_groups()[0].options(),
             "LBFGS doesn't support per-parameter options (parameter groups): add_param_group is refused; make "
             "the optimizer with every parameter");
  OptimizerBase::check_group_options(o);
}

std::vector<std::string> LBFGS::state_names(const OptimizerOptions& /*o*/) const {
  std::vector<std::string> names = {"func_evals", "n_iter"};
  names.insert(names.end(), kHistoryNames.begin(), kHistoryNames.end());
  return names;
}

std::vector<std::string> LBFGS::optional_state_names() const { return kHistoryNames; }

int64_t LBFGS::numel() const {
  int64_t n = 0;
  for (const auto& p : params()) n += p.numel();
  return n;
}

StateLayout LBFGS::state_layout(const std::string& name, const Tensor& p) const {
  const int64_t n = numel();
  if (name == "d" || name == "prev_flat_grad") return {p.dtype(), p.device(), {n}, false};
  if (name == "old_dirs" || name == "old_stps") return {p.dtype(), p.device(), {0, n}, true};
  if (name == "ro") return {kFloat64, kCPU, {0}, true};
  return {kFloat64, kCPU, {}, false};  // func_evals, n_iter, t, H_diag, prev_loss
}

void LBFGS::check_loaded_state(int64_t id, const ParamState& s, const OptimizerOptions& options,
                               std::vector<std::string>& problems) const {
  if (id != 0) {
    problems.push_back(
        fmt::format("LBFGS keeps its state as parameter 0's, but the state dict has state for "
                    "parameter {}",
                    id));
    return;
  }
  const auto& o = static_cast<const LBFGSOptions&>(options);
  for (const char* n : {"func_evals", "n_iter"}) {
    if (!s.buffers.contains(n)) continue;  // reported as missing
    const double v = s.buffers.at(n).item<double>();
    if (!(v >= 0 && v < kMaxCount && v == std::floor(v)))
      problems.push_back(fmt::format("key \"state.0.{}\" should hold one non-negative whole number", n));
  }
  std::vector<std::string> have, lack;
  for (const auto& n : kHistoryNames) (s.buffers.contains(n) ? have : lack).push_back(n);
  const bool started = s.buffers.contains("n_iter") && s.buffers.at("n_iter").item<double>() > 0;
  if (started && !lack.empty())
    problems.push_back(
        fmt::format("LBFGS state after its first iteration (n_iter > 0) also needs {}", fmt::join(lack, ", ")));
  if (!started && !have.empty())
    problems.push_back(
        fmt::format("LBFGS state with n_iter 0 has no history, but the state dict has {}", fmt::join(have, ", ")));
  if (!lack.empty()) return;
  const int64_t k = s.buffers.at("ro").numel();
  if (s.buffers.at("old_dirs").size(0) != k || s.buffers.at("old_stps").size(0) != k || k > o.history_size())
    problems.push_back(
        fmt::format("LBFGS's old_dirs, old_stps and ro must have one length, at most history_size {}, "
                    "got {}, {} and {}",
                    o.history_size(), s.buffers.at("old_dirs").size(0), s.buffers.at("old_stps").size(0), k));
  for (const char* n : {"t", "H_diag", "prev_loss"})
    if (!std::isfinite(s.buffers.at(n).item<double>()))
      problems.push_back(fmt::format("key \"state.0.{}\" should hold one finite number", n));
}

Tensor LBFGS::gather_flat_grad() const {
  std::vector<Tensor> views;
  for (const auto& p : params()) {
    const Tensor& g = p.grad();
    if (g.defined())
      WICK_CHECK_STATE(g.sizes() == p.sizes() && g.dtype() == p.dtype() && g.device() == p.device(),
                       "LBFGS.step: after the closure, a gradient is {} [{}] on {} but its parameter is {} [{}] on {}",
                       g.dtype(), fmt::join(g.sizes(), ", "), g.device(), p.dtype(), fmt::join(p.sizes(), ", "),
                       p.device());
    views.push_back(g.defined() ? g.reshape({-1})
                                : wick::zeros({p.numel()}, TensorOptions(p.dtype()).device(p.device())));
  }
  // A fresh tensor, never a view of a gradient that the next closure call may zero in place.
  return views.size() == 1 ? views[0].clone() : wick::cat(views, 0);
}

void LBFGS::add_grad(double step, const Tensor& update) {
  int64_t offset = 0;
  for (const auto& p0 : params()) {
    Tensor p = p0;
    const int64_t n = p.numel();
    p.add_(update.narrow(0, offset, n).view(p.sizes()), step);
    offset += n;
  }
}

double LBFGS::evaluate(const LossClosure& closure, Tensor* loss_tensor) {
  Tensor loss;
  {
    AutoGradMode enable(true);  // the closure always runs with grad mode on, as PyTorch's
    loss = closure();
  }
  WICK_CHECK(
      loss.defined() && loss.numel() == 1, "LBFGS.step: the closure must return the loss, one element, got {}",
      loss.defined() ? fmt::format("a tensor of shape [{}]", fmt::join(loss.sizes(), ", ")) : "an undefined tensor");
  if (loss_tensor) *loss_tensor = loss;
  return loss.item<double>();
}

void LBFGS::step() {
  WICK_FAIL("LBFGS.step: LBFGS needs a closure that reevaluates the model and returns the loss: call step(closure)");
}

Tensor LBFGS::step(const LossClosure& closure) {
  profiler::RecordScope trace_event("optimizer", "LBFGS.step");  // Note [Tracer]
  WICK_CHECK(static_cast<bool>(closure),
             "LBFGS.step: the closure is empty; pass a function that reevaluates the model and returns the loss");
  NoGradGuard no_grad;
  check_step();
  const LBFGSOptions o = options_of(param_groups()[0].options());
  const double lr = o.lr(), tolerance_grad = o.tolerance_grad(), tolerance_change = o.tolerance_change();
  const int64_t max_iter = o.max_iter(), max_eval = o.max_eval().value_or(max_iter * 5 / 4);
  const auto history_size = static_cast<size_t>(o.history_size());
  // A copy of the state (handles to its tensors, which are only read): written back at the end,
  // so a closure that throws leaves the state as it was.
  const ParamState* saved = state(params()[0]);
  ParamState st = saved ? *saved : ParamState{};
  auto number = [&](const char* n, double fallback) {
    return st.buffers.contains(n) ? st.buffers.at(n).item<double>() : fallback;
  };
  double func_evals = number("func_evals", 0), n_iter_total = number("n_iter", 0);

  // The first evaluation.
  Tensor orig_loss;
  double loss = evaluate(closure, &orig_loss);
  int64_t current_evals = 1;
  func_evals += 1;
  Tensor flat_grad = gather_flat_grad();
  bool opt_cond = max_abs(flat_grad) <= tolerance_grad;
  auto save_counts = [&] {
    st.buffers.insert_or_assign("func_evals", host_number(func_evals));
    st.buffers.insert_or_assign("n_iter", host_number(n_iter_total));
  };
  if (opt_cond) {
    save_counts();
    state_for(params()[0]) = std::move(st);
    return orig_loss;
  }
  std::vector<Tensor> x_start;
  for (const auto& p : params()) x_start.push_back(p.clone());
  detail::CopyBack restore(params(), x_start);  // dismissed at the end: a closure that throws moves nothing

  // The state of earlier steps.
  Tensor d = st.buffers.contains("d") ? st.buffers.at("d") : Tensor();
  Tensor prev_flat_grad = st.buffers.contains("prev_flat_grad") ? st.buffers.at("prev_flat_grad") : Tensor();
  double t = number("t", 0), H_diag = number("H_diag", 1), prev_loss = number("prev_loss", 0);
  std::deque<Tensor> old_dirs, old_stps;
  std::deque<double> ro;
  if (st.buffers.contains("old_dirs")) {
    // Views of the stacked state: the iterations only read them, and the end stacks them anew.
    for (const auto& v : st.buffers.at("old_dirs").unbind(0)) old_dirs.push_back(v);
    for (const auto& v : st.buffers.at("old_stps").unbind(0)) old_stps.push_back(v);
    for (double r : st.buffers.at("ro").to_vector<double>()) ro.push_back(r);
  }

  int64_t n_iter = 0;
  while (n_iter < max_iter) {
    ++n_iter;
    n_iter_total += 1;
    // The descent direction.
    if (n_iter_total == 1) {
      d = flat_grad.neg();
      old_dirs.clear();
      old_stps.clear();
      ro.clear();
      H_diag = 1;
    } else {
      Tensor y = flat_grad.sub(prev_flat_grad);
      Tensor s = d.mul(t);
      const double ys = y.dot(s).item<double>();
      if (ys > 1e-10) {
        while (old_dirs.size() >= history_size) {  // the oldest pair makes room (PyTorch: == history_size)
          old_dirs.pop_front();
          old_stps.pop_front();
          ro.pop_front();
        }
        old_dirs.push_back(y);
        old_stps.push_back(s);
        ro.push_back(1. / ys);
        H_diag = ys / y.dot(y).item<double>();
      }
      // The two-loop recursion: d = -H g with H's diagonal H_diag.
      const size_t num_old = old_dirs.size();
      std::vector<double> al(num_old);
      Tensor q = flat_grad.neg();
      for (size_t i = num_old; i-- > 0;) {
        al[i] = old_stps[i].dot(q).item<double>() * ro[i];
        q.add_(old_dirs[i], -al[i]);
      }
      d = q.mul(H_diag);
      for (size_t i = 0; i < num_old; ++i) {
        const double be_i = old_dirs[i].dot(d).item<double>() * ro[i];
        d.add_(old_stps[i], al[i] - be_i);
      }
    }
    // A fresh copy, never written in place: the old one may be the stored state's tensor.
    prev_flat_grad = flat_grad.clone();
    prev_loss = loss;

    // The step length.
    t = n_iter_total == 1 ? std::min(1., 1. / flat_grad.abs().sum().item<double>()) * lr : lr;
    const double gtd = flat_grad.dot(d).item<double>();
    if (gtd > -tolerance_change) break;  // the directional derivative is below tolerance
    int64_t ls_func_evals = 0;
    if (o.line_search_fn()) {
      std::vector<Tensor> x_init;
      for (const auto& p : params()) x_init.push_back(p.clone());
      auto obj = [&](double step) {
        const detail::CopyBack reset(params(), x_init);  // however the evaluation ends
        add_grad(step, d);
        const double f = evaluate(closure, nullptr);
        Tensor g = gather_flat_grad();
        return std::make_pair(f, g);
      };
      auto r = detail::strong_wolfe(obj, t, d, loss, flat_grad, gtd);
      loss = r.loss;
      flat_grad = r.flat_grad;
      t = r.t;
      ls_func_evals = r.func_evals;
      add_grad(t, d);
      opt_cond = max_abs(flat_grad) <= tolerance_grad;
    } else {
      add_grad(t, d);
      if (n_iter != max_iter) {  // no evaluation after the last iteration, as PyTorch
        loss = evaluate(closure, nullptr);
        flat_grad = gather_flat_grad();
        opt_cond = max_abs(flat_grad) <= tolerance_grad;
        ls_func_evals = 1;
      }
    }
    current_evals += ls_func_evals;
    func_evals += static_cast<double>(ls_func_evals);

    // The stopping tests.
    if (n_iter == max_iter || current_evals >= max_eval || opt_cond) break;
    if (max_abs(d.mul(t)) <= tolerance_change) break;  // lack of progress
    if (std::abs(loss - prev_loss) < tolerance_change) break;
  }

  save_counts();
  if (d.defined()) {
    const TensorOptions flat = TensorOptions(d.dtype()).device(d.device());
    auto stacked = [&](const std::deque<Tensor>& h) {
      return h.empty() ? wick::zeros({0, numel()}, flat) : wick::stack(std::vector<Tensor>(h.begin(), h.end()), 0);
    };
    st.buffers.insert_or_assign("d", d);
    st.buffers.insert_or_assign("t", host_number(t));
    st.buffers.insert_or_assign("old_dirs", stacked(old_dirs));
    st.buffers.insert_or_assign("old_stps", stacked(old_stps));
    st.buffers.insert_or_assign("ro", wick::tensor(std::vector<double>(ro.begin(), ro.end()),
                                                   {static_cast<int64_t>(ro.size())}, TensorOptions(kFloat64)));
    st.buffers.insert_or_assign("H_diag", host_number(H_diag));
    st.buffers.insert_or_assign("prev_flat_grad", prev_flat_grad);
    st.buffers.insert_or_assign("prev_loss", host_number(prev_loss));
  }
  state_for(params()[0]) = std::move(st);
  restore.dismiss();
  return orig_loss;
}

}  // namespace wick::optim
