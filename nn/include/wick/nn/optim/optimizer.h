#pragma once
// Optimizer: the base of wick::optim's optimizers (LibTorch's names and PyTorch 1.13's update
// rules).
//
// An optimizer holds parameter groups; each group is a list of parameters plus its own options
// (lr, momentum, betas, ...). step() updates every parameter that has a gradient, in place and
// under NoGradGuard; zero_grad() clears the gradients. Per-parameter state (step counts,
// momentum buffers, exp_avg, ...) lives in the optimizer, keyed by the parameter's identity.
//
// Note [Optimizers take leaves]
// Parameters must be leaves: the tensors a module registered. A replica made by the parallel
// layer holds broadcast outputs, which are not leaves (their gradients flow back to the
// original), so handing a replica's parameters to an optimizer is refused with an error that
// says to pass the original module's parameters(). See docs/training.md.
//
// Note [Optimizer state dicts]
// state_dict() gives PyTorch's layout: parameters are numbered 0, 1, ... across the groups in
// order; tensors are named "state.<i>.<name>" (e.g. "state.3.exp_avg"; "step" is a 0-dim
// float32 tensor as PyTorch 1.13's Adam and Adagrad store it, RMSprop's too, which PyTorch 1.13
// keeps as a Python int), and each group lists its parameter numbers and its options.
// state_dict() writes every state tensor a parameter has, including those its options no
// longer use (max_exp_avg_sq after amsgrad is turned off, momentum_buffer after momentum is set to
// 0), as PyTorch does. load_state_dict() checks everything first (optimizer type, group and
// parameter counts, option names, state names, shapes, floating-point state) and reports every
// problem in one wick::ValueError (a lone problem with the options keeps its own class), leaving
// the optimizer unchanged when anything is wrong. It requires the state tensors that every update
// with the loaded options makes (exp_avg and exp_avg_sq for Adam), accepts the ones a step makes
// lazily whatever the options (max_exp_avg_sq, momentum_buffer, grad_avg), and refuses other
// names. A scalar state (NAdam's "mu_product", ASGD's "mu") must hold one finite number in [0, 1]
// (ASGD's "eta": finite and >= 0) and stays float32, as "step". LBFGS's state has layouts of its
// own (state_layout, Note [LBFGS state]). As PyTorch, it converts each state tensor to its parameter's dtype and
// device (never "step" or a scalar), so a state saved before Module::to(kFloat64) loads after it.
#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wick/core/tensor.h"
#include "wick/nn/ordered_dict.h"

namespace wick::optim {

/// Declares an option `name` of type T with a getter `name()` and a chainable setter
/// `name(value)` (LibTorch's TORCH_ARG).
#define WICK_OPTIM_ARG(T, name)             \
 public:                                    \
  auto& name(const T& v) {                  \
    name##_ = v;                            \
    return *this;                           \
  }                                         \
  const T& name() const { return name##_; } \
                                            \
 private:                                   \
  T name##_

/// Named numeric option values (bools as 0 or 1), as stored in state dicts.
using OptionValues = std::vector<std::pair<std::string, double>>;

/// The options of one parameter group. Each optimizer has its own subclass.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  /// Every option by name: PyTorch's ("lr", "momentum", ...), except Adam's betas, stored as
  /// "beta1" and "beta2".
  virtual OptionValues values() const = 0;
  /// Sets every option from `v`; throws wick::IndexError naming missing or unknown names.
  virtual void set_values(const OptionValues& v) = 0;
  /// The class an optimizer reads these options as (AdamWOptions are read as AdamOptions): a
  /// group's options must be read as the optimizer's defaults are.
  virtual const std::type_info& read_as() const { return typeid(*this); }
};

/// Parameters plus (optionally) their own options; groups without options take the
/// optimizer's defaults when added. A group's own options must be its optimizer's options class
/// (AdamOptions or AdamWOptions for Adam and AdamW; a TypeError otherwise) and are complete: a field they do not set
/// keeps the class's default, not the optimizer's (as LibTorch; PyTorch's dict-based groups inherit missing keys).
class ParamGroup {
 public:
  explicit ParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
  ParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  ParamGroup(const ParamGroup& o) : params_(o.params_), options_(o.options_ ? o.options_->clone() : nullptr) {}
  ParamGroup& operator=(const ParamGroup& o) {
    params_ = o.params_;
    options_ = o.options_ ? o.options_->clone() : nullptr;
    return *this;
  }
  ParamGroup(ParamGroup&&) = default;
  ParamGroup& operator=(ParamGroup&&) = default;

  const std::vector<Tensor>& params() const { return params_; }
  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> o) { options_ = std::move(o); }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

/// One parameter's optimizer state: a step count, named tensors of the parameter's shape
/// (momentum_buffer, exp_avg, exp_avg_sq, max_exp_avg_sq, square_avg, grad_avg, sum, exp_inf,
/// prev, step_size; LBFGS's flat state, Note [LBFGS state]) and named scalars (NAdam's mu_product,
/// ASGD's eta and mu), which PyTorch keeps as 0-dim float32
/// CPU tensors: each holds a float32 value, and state dicts write it as a 0-dim float32 tensor.
struct ParamState {
  int64_t step = 0;
  nn::OrderedDict<Tensor> buffers;
  nn::OrderedDict<double> scalars;
};

/// One group as stored in a state dict: its parameters' numbers and its options.
struct ParamGroupState {
  std::vector<int64_t> params;
  OptionValues options;
};

/// An optimizer's whole state (Note [Optimizer state dicts]).
struct OptimizerStateDict {
  std::string optimizer;  ///< "SGD", "Adam", "AdamW", ..., "Rprop", "Adadelta", "ASGD", "LBFGS"
  nn::OrderedDict<Tensor> state;
  std::vector<ParamGroupState> param_groups;

  /// {"optimizer": ..., "param_groups": [{"params": [...], "lr": ..., ...}, ...]} as JSON text
  /// (what a checkpoint stores in the safetensors metadata).
  std::string groups_json() const;
  /// Parses groups_json()'s output into `optimizer` and `param_groups`; throws wick::FormatError on
  /// malformed text.
  void set_groups_json(const std::string& json);
};

/// The dtype, device and shape a state tensor must have (Optimizer::state_layout); `any_rows` lets
/// the first size be any number (a history of any length).
struct StateLayout {
  DType dtype;
  Device device;
  std::vector<int64_t> sizes;
  bool any_rows = false;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Rprop", "Adadelta", "ASGD",
  /// "LBFGS".
  virtual std::string name() const = 0;
  /// Updates every parameter that has a gradient (under NoGradGuard, in place).
  virtual void step() = 0;
  /// Clears the gradients of every parameter: to None (default, as PyTorch 2) or to zeros.
  void zero_grad(bool set_to_none = true);

  /// Adds a group (its parameters and options checked as in the constructor; options default to
  /// the optimizer's). A parameter already in the optimizer, or options the optimizer refuses
  /// (ValueError naming the option), add nothing.
  void add_param_group(ParamGroup group);
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  /// Number of parameters over all groups.
  size_t size() const;
  /// The state of parameter `p`, or nullptr while it has none: before its first update (Adagrad
  /// makes it when the parameter joins, as PyTorch).
  const ParamState* state(const Tensor& p) const;

  /// Every group's options and every parameter's state (Note [Optimizer state dicts]); the
  /// tensors are this optimizer's own, not copies.
  OptimizerStateDict state_dict() const;
  /// Replaces options and state from `dict` after checking all of it (Note [Optimizer state
  /// dicts]); state tensors are copied, converted to their parameter's dtype and device.
  void load_state_dict(const OptimizerStateDict& dict);

  /// A load_state_dict that has been checked in full but not applied.
  struct PendingLoad {
    std::vector<std::unique_ptr<OptimizerOptions>> options;  ///< one per parameter group
    std::unordered_map<const TensorImpl*, ParamState> state;
  };
  /// Checks `dict` exactly as load_state_dict does (same errors) and returns what it would
  /// apply, changing nothing. load_checkpoint uses it to check the model's part and the
  /// optimizer's before applying either, so that no undo is needed.
  PendingLoad prepare_load_state_dict(const OptimizerStateDict& dict) const;
  /// Applies a PendingLoad prepared by this optimizer since its groups last changed; a
  /// StateError, changing nothing, when the number of groups differs.
  void apply_load(PendingLoad pending);

  /// Testing and benchmarking aid: when false, updates use the generic tensor-op path (default
  /// true: one fused pass over the contiguous tensors on devices whose backend registered the
  /// fused kernel, Note [Fused optimizer steps]).
  void set_fused(bool on) { fused_ = on; }

 protected:
  Optimizer(std::vector<ParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults);
  /// The names of the state tensors a parameter has after its first update with `options`.
  virtual std::vector<std::string> state_names(const OptimizerOptions& options) const = 0;
  /// The state tensors a step makes lazily when its options need them and keeps when they no
  /// longer do (max_exp_avg_sq, momentum_buffer): load_state_dict accepts them whatever the
  /// options and never requires them.
  virtual std::vector<std::string> optional_state_names() const = 0;
  /// The scalar state every parameter with state has (ParamState::scalars; NAdam's mu_product):
  /// load_state_dict requires them, each one finite number in [0, scalar_state_max]. The base's has none.
  virtual std::vector<std::string> scalar_state_names() const { return {}; }
  /// Throws wick::ValueError naming the option when `options` (of this optimizer's class) are
  /// invalid. add_param_group calls it; the base's does nothing, so that the constructors, which
  /// add their groups before the subclass exists, check them themselves.
  virtual void check_group_options(const OptimizerOptions& options) const;
  /// Makes the state a parameter has from the moment it joins the optimizer (Adagrad's sum, as
  /// PyTorch makes it in its constructor); the base's makes none. add_param_group calls it for the
  /// group it added; as for check_group_options, the constructors call it for their own groups.
  virtual void init_group_state(const ParamGroup& group);
  /// Whether the state holds a step count.
  virtual bool has_step() const = 0;
  /// The largest value load_state_dict accepts for the scalar state `name` (1 by default; ASGD's
  /// eta, a step size, may be any finite number >= 0: infinity).
  virtual double scalar_state_max(const std::string& /*name*/) const { return 1; }
  /// The dtype, device and shape the state tensor `name` of parameter `p` must have: by default
  /// p's own. LBFGS's state, one flat history for all its parameters, has its own.
  virtual StateLayout state_layout(const std::string& /*name*/, const Tensor& p) const {
    return {p.dtype(), p.device(), p.sizes().vec(), false};
  }
  /// Adds to `problems` what is wrong with the loaded state `s` of parameter number `id` as a
  /// whole (LBFGS: histories of one length); called once per parameter with state, after every
  /// tensor was checked on its own. The base's finds nothing.
  virtual void check_loaded_state(int64_t /*id*/, const ParamState& /*s*/, const OptimizerOptions& /*options*/,
                                  std::vector<std::string>& /*problems*/) const {}
  ParamState& state_for(const Tensor& p) { return state_[p.impl()]; }
  /// Throws StateError, before anything is updated, when a gradient or a state tensor does not
  /// have its parameter's dtype, device and shape (Module::to() does not convert optimizer state;
  /// set_data() keeps the old gradient).
  /// Every step() calls it first; `op` names the optimizer in the message.
  void check_state_fits(const char* op) const;
  bool fused_ = true;

 private:
  /// The state names load_state_dict accepts with `options`: state_names plus the optional ones.
  std::vector<std::string> allowed_state_names(const OptimizerOptions& options) const;
  /// The names a parameter with any loaded state must have: state_names less the optional ones,
  /// plus "step" where the optimizer counts steps.
  std::vector<std::string> required_state_names(const OptimizerOptions& options) const;

  std::unique_ptr<OptimizerOptions> defaults_;
  std::vector<ParamGroup> groups_;
  std::unordered_map<const TensorImpl*, ParamState> state_;
};

/// True when every tensor is defined, contiguous, and on p's device with p's dtype (the fused
/// steps' condition; the caller also checks that the device type has the stub).
bool fusable(std::initializer_list<const Tensor*> ts, const Tensor& p);

}  // namespace wick::optim
