#pragma once
// LBFGS: LibTorch's torch::optim::LBFGS (PyTorch 1.13's torch.optim.LBFGS): limited-memory BFGS
// with a fixed step or PyTorch's strong-Wolfe line search, stepped with a closure that reevaluates
// the model and returns the loss.
//
//   auto closure = [&] { opt.zero_grad(); Tensor loss = f(model(x), y); loss.backward(); return loss; };
//   Tensor loss = opt.step(closure);   // up to max_iter iterations, max_eval closure calls
//
// Each iteration: the direction d = -H g from the last history_size (y, s) pairs (the two-loop
// recursion, H's diagonal scaled by y·s / y·y), a step t (lr, min(1, 1/|g|_1) lr on the very first
// iteration) either taken as is or found by the strong-Wolfe search, and the stopping tests of
// PyTorch (tolerance_grad on max |g|, tolerance_change on g·d, max |t d| and the change of the loss).
//
// Note [LBFGS state]
// As PyTorch and LibTorch, LBFGS has one parameter group and keeps one state for all its
// parameters, as the state of parameter 0, under PyTorch's names: "func_evals" and "n_iter" (counts
// over every step), "d" and "prev_flat_grad" (flat, the parameters' total numel N), "t", "H_diag",
// "prev_loss", and the history "old_dirs" and "old_stps" (PyTorch's lists of k flat tensors, stacked
// into [k, N]) with "ro" ([k]). The flat tensors have the parameters' dtype and device; the numbers
// (counts, t, H_diag, prev_loss, ro) are float64 CPU tensors, computed on the host in double
// (PyTorch keeps ro and H_diag as 0-dim tensors of the parameters' dtype: a float32 run differs in
// the last bits). PyTorch's scratch list "al" is not kept. A step that stops at its first closure
// call (max |g| <= tolerance_grad) updates only the counts, as PyTorch.
//
// A step whose closure throws changes nothing (wick's rule; PyTorch leaves the parameters and the
// state half-updated): step() works on a copy of the state, stores it only when it returns, never
// writes a stored tensor in place, and puts the parameters back to their values at the start of
// the step (an RAII guard, at the cost of one copy of the parameters per step). The parameters'
// gradients are what the closure left.
#include <functional>
#include <optional>
#include <string>

#include "wick/nn/optim/optimizer_base.h"

namespace wick::optim {

/// A function that reevaluates the model, calls backward() and returns the loss (LibTorch's
/// torch::optim::Optimizer::LossClosure).
using LossClosure = std::function<Tensor()>;

/// LibTorch's LBFGSOptions (PyTorch 1.13's defaults). max_eval unset means max_iter * 5 / 4, which
/// the optimizer fills in (as LibTorch). values(): lr, max_iter, max_eval, tolerance_grad,
/// tolerance_change, history_size, line_search_fn (0 for none, 1 for "strong_wolfe": state dicts
/// hold numbers, where PyTorch's holds the string or None).
struct LBFGSOptions : OptimizerOptions {
  LBFGSOptions(double lr = 1) : lr_(lr) {}  // NOLINT(google-explicit-constructor): as LibTorch's implicit lr
  WICK_OPTIM_ARG(double, lr);
  WICK_OPTIM_ARG(int64_t, max_iter) = 20;
  WICK_OPTIM_ARG(std::optional<int64_t>, max_eval) = std::nullopt;
  WICK_OPTIM_ARG(double, tolerance_grad) = 1e-7;
  WICK_OPTIM_ARG(double, tolerance_change) = 1e-9;
  WICK_OPTIM_ARG(int64_t, history_size) = 100;
  WICK_OPTIM_ARG(std::optional<std::string>, line_search_fn) = std::nullopt;

 public:
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<LBFGSOptions>(*this); }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  OptionValues values() const override;
  /// Sets every option from `v`, checked first (IndexError for missing or unknown names,
  /// ValueError for a bad value or a count that is not a whole number; nothing changes then).
  void set_values(const OptionValues& v) override;
};

class LBFGS : public OptimizerBase<LBFGSOptions> {
 public:
  /// Throws wick::ValueError naming the option for an lr, tolerance_grad or tolerance_change that
  /// is negative or not finite, max_iter, max_eval or history_size < 1, and a line_search_fn other
  /// than "strong_wolfe" (PyTorch fails at the first step); ValueError for more than one group (as
  /// PyTorch and LibTorch) and for parameters on more than one device, TypeError for parameters of
  /// more than one dtype (the flat state has one); and what every optimizer refuses.
  LBFGS(std::vector<Tensor> params, const LBFGSOptions& options = {});
  LBFGS(std::vector<ParamGroup> groups, const LBFGSOptions& defaults);
  std::string name() const override { return "LBFGS"; }
  /// Runs up to max_iter iterations, calling `closure` (with grad mode on) up to max_eval times
  /// (plus the line search's calls), and returns the loss of its first call. ValueError for an
  /// empty closure or a loss that is not one element; the options, gradients and state are
  /// checked first. An error the closure throws propagates, leaving the iterations before it done.
  Tensor step(const LossClosure& closure);
  /// ValueError: LBFGS needs a closure (LibTorch's step() without one fails the same way).
  void step() override;

 protected:
  std::vector<std::string> state_names(const OptimizerOptions& o) const override;
  std::vector<std::string> optional_state_names() const override;
  bool has_step() const override { return false; }
  StateLayout state_layout(const std::string& name, const Tensor& p) const override;
  void check_loaded_state(int64_t id, const ParamState& s, const OptimizerOptions& options,
                          std::vector<std::string>& problems) const override;
  /// Also refuses a second group (add_param_group), which PyTorch refuses too.
  void check_group_options(const OptimizerOptions& o) const override;

 private:
  const std::vector<Tensor>& params() const { return param_groups()[0].params(); }
  int64_t numel() const;
  /// The gradients as one flat tensor (zeros for a parameter without one).
  Tensor gather_flat_grad() const;
  /// p += step * update[its slice] for every parameter.
  void add_grad(double step, const Tensor& update);
  /// The loss of one closure call, as a double, and the flat gradient.
  double evaluate(const LossClosure& closure, Tensor* loss_tensor);
};

}  // namespace wick::optim
