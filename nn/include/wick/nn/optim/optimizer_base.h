#pragma once
// OptionsBase and OptimizerBase: what every optimizer's options struct and optimizer class share,
// written once, so that an optimizer's own files hold its options, their checks and its update rule.
//
// Note [Optimizer scaffolding]
// An options struct X derives from OptionsBase<X>, which gives clone(), get_lr()/set_lr() (through
// X's lr) and values()/set_values(), read and written through X's field table: X::table() (private,
// defined in X's .cpp) lists each double or bool option by its state-dict name, in PyTorch's order,
// with the name its messages start with and the check of its values. The two functions are defined
// in nn/src/optim/option_values.h, and the .cpp instantiates them (`template struct
// OptionsBase<X>;`). An optimizer Y derives from OptimizerBase<YOptions>, whose constructors check
// the defaults (as PyTorch; a group added later may take them) and every group's own options, and
// whose check_group_options() reads a group's options as YOptions. Y::step() opens a trace scope
// (Note [Tracer]) and a NoGradGuard, calls check_step() and then for_each_update().
#include <vector>

#include "wick/nn/optim/optimizer.h"

namespace wick::optim {

namespace detail {

/// One option of the options struct O as state dicts name it: a double or a bool field.
template <class O>
struct OptionField {
  OptionField(const char* n, double O::*d) : name(n), number(d) {}
  OptionField(const char* n, bool O::*b) : name(n), flag(b) {}
  const char* name;
  double O::*number = nullptr;
  bool O::*flag = nullptr;
};

/// An options struct's fields, in state dicts' order; the optimizer's name, which set_values'
/// messages start with; and the check set_values runs before changing anything (throws ValueError
/// naming the first invalid option).
template <class O>
struct OptionTable {
  const char* what;
  std::vector<OptionField<O>> fields;
  void (*check)(const O&);
};

}  // namespace detail

/// The common part of the options struct Derived (Note [Optimizer scaffolding]).
template <class Derived>
struct OptionsBase : OptimizerOptions {
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<Derived>(self()); }
  double get_lr() const override { return self().lr(); }
  void set_lr(double lr) override { static_cast<Derived&>(*this).lr(lr); }
  /// Every option by its state-dict name, in PyTorch's order (bools as 0 or 1).
  OptionValues values() const override;
  /// Sets every option from `v`, checked first (IndexError for missing or unknown names,
  /// ValueError for a bad value; nothing changes then).
  void set_values(const OptionValues& v) override;

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

/// The common part of an optimizer whose options are Options (Note [Optimizer scaffolding]).
template <class Options>
class OptimizerBase : public Optimizer {
 protected:
  /// Throws ValueError naming the first invalid option of `o`; `op` starts the message.
  using Check = void (*)(const Options& o, const char* op);

  /// One group of `params`, which takes `options`.
  OptimizerBase(std::vector<Tensor> params, const Options& options, const char* op, Check check)
      : OptimizerBase(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options, op, check) {}
  /// Checks the defaults, then every group's options: `op` names the optimizer in messages.
  OptimizerBase(std::vector<ParamGroup> groups, const Options& defaults, const char* op, Check check)
      : Optimizer(std::move(groups), defaults.clone()), op_(op), check_(check) {
    check_(defaults, op_);  // as PyTorch; a group added later may take them
    for (const auto& g : param_groups()) check_group_options(g.options());
  }

  void check_group_options(const OptimizerOptions& o) const override { check_(options_of(o), op_); }
  static const Options& options_of(const OptimizerOptions& o) { return static_cast<const Options&>(o); }

  /// What step() checks before any parameter changes, so that nothing is half-applied: every
  /// gradient and state tensor fits its parameter (check_state_fits), every group's options are valid.
  void check_step() const {
    check_state_fits(op_);
    for (const auto& g : param_groups()) check_group_options(g.options());
  }

  /// Calls update(p, grad, options, state) for every parameter p that has a gradient, group by
  /// group. p shares the parameter's TensorImpl: in-place ops on it write the parameter.
  template <class F>
  void for_each_update(F&& update) {
    for (auto& group : param_groups()) {
      const Options& o = options_of(group.options());
      for (const auto& p0 : group.params()) {
        Tensor p = p0;
        const Tensor& grad = p.grad();
        if (grad.defined()) update(p, grad, o, state_for(p));
      }
    }
  }

 private:
  const char* op_;
  Check check_;
};

}  // namespace wick::optim
