// Optimizer base: parameter groups, zero_grad, state dicts (Note [Optimizer state dicts]).
#include "wick/nn/optim/optimizer.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <typeinfo>
#include <unordered_set>

#include "../json_limits.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/node.h"
#include "wick/core/error.h"
#include "wick/nn/loader_limits.h"
#include "wick/nn/optim/param_utils.h"

namespace wick::optim {

OptimizerOptions& ParamGroup::options() {
  WICK_CHECK_STATE(options_ != nullptr, "ParamGroup: this group has no options yet (add it to an optimizer first)");
  return *options_;
}
const OptimizerOptions& ParamGroup::options() const {
  WICK_CHECK_STATE(options_ != nullptr, "ParamGroup: this group has no options yet (add it to an optimizer first)");
  return *options_;
}

namespace {
// "wick::optim::SGDOptions" for the type's mangled name (the mangled name where demangling fails).
std::string type_name(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> s(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && s ? std::string(s.get()) : std::string(t.name());
}
}  // namespace

namespace {
// Whether `t` has the dtype, device and shape of `layout`.
bool fits(const Tensor& t, const StateLayout& layout) {
  if (t.dtype() != layout.dtype || t.device() != layout.device || t.dim() != static_cast<int64_t>(layout.sizes.size()))
    return false;
  for (size_t d = 0; d < layout.sizes.size(); ++d)
    if (t.sizes()[d] != layout.sizes[d] && !(d == 0 && layout.any_rows)) return false;
  return true;
}
}  // namespace

bool fusable(std::initializer_list<const Tensor*> ts, const Tensor& p) {
  for (const Tensor* t : ts)
    if (!t->defined() || t->device() != p.device() || t->dtype() != p.dtype() || !t->is_contiguous()) return false;
  return true;
}

Optimizer::Optimizer(std::vector<ParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  for (auto& g : groups) add_param_group(std::move(g));
  WICK_CHECK(size() > 0, "{}: got an empty parameter list", "optimizer");
}

void Optimizer::add_param_group(ParamGroup group) {
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& g : groups_)
    for (const auto& p : g.params()) seen.insert(p.impl());
  for (size_t i = 0; i < group.params().size(); ++i) {
    const Tensor& p = group.params()[i];
    WICK_CHECK(p.defined(), "optimizer: parameter {} of the new group is undefined", i);
    WICK_CHECK(p.is_leaf(),
               "optimizer got a tensor that is not a leaf (a replica's parameter?) — pass the original "
               "module's parameters() (parameter {} of the new group, shape [{}], produced by {})",
               i, fmt::join(p.sizes(), ", "), p.grad_fn() ? p.grad_fn()->name() : std::string("?"));
    WICK_CHECK_TYPE(p.is_floating_point(),
                    "optimizer: parameter {} of the new group is {}; only floating-point tensors "
                    "can be optimized",
                    i, p.dtype());
    WICK_CHECK(seen.insert(p.impl()).second,
               "optimizer: parameter {} of the new group (shape [{}]) appears more than "
               "once in this optimizer's parameter groups",
               i, fmt::join(p.sizes(), ", "));
  }
  // Each optimizer reads its groups' options as its own class: SGDOptions given to Adam would be
  // read as AdamOptions. A group's options are complete, as LibTorch's: fields it does not set
  // keep their class's defaults, not this optimizer's (PyTorch's dict-based groups do inherit).
  if (group.has_options())
    WICK_CHECK_TYPE(
        group.options().read_as() == defaults_->read_as(),
        "optimizer: the new parameter group's options are {}, but this optimizer's are {}; give each "
        "group its optimizer's own options class (SGDOptions, AdamOptions or AdamWOptions, RMSpropOptions, "
        "AdagradOptions, AdamaxOptions, NAdamOptions, RAdamOptions, RpropOptions, AdadeltaOptions or ASGDOptions)",
        type_name(typeid(group.options())), type_name(typeid(*defaults_)));
  else
    group.set_options(defaults_->clone());
  check_group_options(group.options());
  groups_.push_back(std::move(group));
  try {
    init_group_state(groups_.back());
  } catch (...) {  // out of memory for the state: add nothing (the group's parameters are new here)
    for (const auto& p : groups_.back().params()) state_.erase(p.impl());
    groups_.pop_back();
    throw;
  }
}

void Optimizer::check_group_options(const OptimizerOptions& /*options*/) const {}

void Optimizer::init_group_state(const ParamGroup& /*group*/) {}

void Optimizer::check_state_fits(const char* op) const {
  size_t index = 0;
  for (const auto& g : groups_) {
    for (const auto& p : g.params()) {
      // A gradient is read element for element with the parameter (the fused steps read numel()
      // of them), so it must have the parameter's layout. set_data() keeps the old gradient, and
      // mutable_grad() can be assigned anything.
      const Tensor& grad = p.grad();
      if (grad.defined() && (grad.sizes() != p.sizes() || grad.dtype() != p.dtype() || grad.device() != p.device()))
        WICK_FAIL_T(StateError,
                    "{}.step: parameter {} is {} [{}] on {}, but its gradient is {} [{}] on {}. A gradient must "
                    "match its parameter: after set_data() or an assignment to mutable_grad(), call zero_grad() (which "
                    "drops the gradient) before the next backward. Nothing was updated",
                    op, index, p.dtype(), fmt::join(p.sizes(), ", "), p.device(), grad.dtype(),
                    fmt::join(grad.sizes(), ", "), grad.device());
      auto it = state_.find(p.impl());
      if (it != state_.end()) {
        for (const auto& [sname, t] : it->second.buffers) {
          if (!t.defined() || fits(t, state_layout(sname, p))) continue;
          WICK_FAIL_T(
              StateError,
              "{}.step: the state '{}' of parameter {} is {} [{}] on {}, but the parameter is now {} [{}] on {}. "
              "Module::to() moves parameters but not optimizer state (as PyTorch): build the optimizer after "
              "to(), or reload its state afterwards with load_state_dict(state_dict()), which converts it to "
              "each parameter's dtype and device. Nothing was updated",
              op, sname, index, t.dtype(), fmt::join(t.sizes(), ", "), t.device(), p.dtype(),
              fmt::join(p.sizes(), ", "), p.device());
        }
      }
      ++index;
    }
  }
}

size_t Optimizer::size() const {
  size_t n = 0;
  for (const auto& g : groups_) n += g.params().size();
  return n;
}

const ParamState* Optimizer::state(const Tensor& p) const {
  auto it = state_.find(p.impl());
  return it == state_.end() ? nullptr : &it->second;
}

void zero_grad_of(const std::vector<Tensor>& params, bool set_to_none) {
  NoGradGuard no_grad;
  for (const auto& p0 : params) {
    Tensor p = p0;
    if (!p.grad().defined()) continue;
    if (set_to_none) {
      p.set_grad(Tensor());
    } else {
      Tensor& grad = p.mutable_grad();
      if (grad.grad_fn())
        grad = grad.detach();
      else
        grad.requires_grad_(false);
      grad.zero_();
    }
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& g : groups_) zero_grad_of(g.params(), set_to_none);
}

OptimizerStateDict Optimizer::state_dict() const {
  OptimizerStateDict d;
  d.optimizer = name();
  int64_t id = 0;
  for (const auto& g : groups_) {
    ParamGroupState gs;
    gs.options = g.options().values();
    for (const auto& p : g.params()) {
      gs.params.push_back(id);
      auto it = state_.find(p.impl());
      if (it != state_.end()) {
        if (has_step())
          d.state.insert(fmt::format("state.{}.step", id),
                         wick::scalar_tensor(static_cast<double>(it->second.step), TensorOptions(kFloat32)));
        for (const auto& [n, t] : it->second.buffers) d.state.insert(fmt::format("state.{}.{}", id, n), t);
        for (const auto& [n, v] : it->second.scalars)
          d.state.insert(fmt::format("state.{}.{}", id, n), wick::scalar_tensor(v, TensorOptions(kFloat32)));
      }
      ++id;
    }
    d.param_groups.push_back(std::move(gs));
  }
  return d;
}

bool parse_state_key(const std::string& key, int64_t& id, std::string& name) {
  if (key.rfind("state.", 0) != 0) return false;
  size_t dot = key.find('.', 6);
  if (dot == std::string::npos || dot == 6 || dot + 1 >= key.size()) return false;
  // Decimal digits only, without a sign or a leading zero, so each parameter has one spelling
  // ("state.0.x", never "state.00.x" or "state.-0.x" as well).
  const std::string_view digits(key.data() + 6, dot - 6);
  if (digits.find_first_not_of("0123456789") != std::string_view::npos || (digits.size() > 1 && digits[0] == '0'))
    return false;
  auto [ptr, ec] = std::from_chars(key.data() + 6, key.data() + dot, id);
  if (ec != std::errc() || ptr != key.data() + dot || id < 0) return false;
  name = key.substr(dot + 1);
  return true;
}

namespace {
std::string shape_str(IntArrayRef s) { return fmt::format("[{}]", fmt::join(s, ", ")); }
// A key read from a file, cut short for a message (Note [Loader limits]).
std::string brief(const std::string& key) { return serialize::detail::quote_prefix(key, serialize::kMaxQuotedChars); }
// The problems found, joined by "; ", at most kMaxListedItems of them (each a message of ours).
std::string problem_list(const std::vector<std::string>& problems) {
  return serialize::detail::brief_join(problems, "; ", /*quote=*/false, std::string::npos);
}
}  // namespace

std::vector<std::string> Optimizer::allowed_state_names(const OptimizerOptions& options) const {
  auto names = state_names(options);
  for (auto& n : optional_state_names())
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(std::move(n));
  return names;
}

std::vector<std::string> Optimizer::required_state_names(const OptimizerOptions& options) const {
  const auto optional = optional_state_names();
  std::vector<std::string> names;
  for (auto& n : state_names(options))
    if (std::find(optional.begin(), optional.end(), n) == optional.end()) names.push_back(std::move(n));
  if (has_step()) names.emplace_back("step");
  for (auto& n : scalar_state_names()) names.push_back(std::move(n));
  return names;
}

void Optimizer::load_state_dict(const OptimizerStateDict& dict) { apply_load(prepare_load_state_dict(dict)); }

void Optimizer::apply_load(PendingLoad pending) {
  WICK_CHECK_STATE(pending.options.size() == groups_.size(),
                   "{}.apply_load: the pending load has {} parameter group(s) but this optimizer has {}; prepare "
                   "it again",
                   name(), pending.options.size(), groups_.size());
  for (size_t gi = 0; gi < groups_.size(); ++gi) groups_[gi].set_options(std::move(pending.options[gi]));
  state_ = std::move(pending.state);
}

Optimizer::PendingLoad Optimizer::prepare_load_state_dict(const OptimizerStateDict& dict) const {
  std::vector<std::string> problems;
  std::exception_ptr options_error;  // set_values' error, when it is the first problem
  if (dict.optimizer != name())
    problems.push_back(fmt::format("the state dict is for {} but this optimizer is {}",
                                   dict.optimizer.empty()
                                       ? "an unnamed optimizer"
                                       : serialize::detail::quote_prefix(dict.optimizer, serialize::kMaxQuotedChars),
                                   name()));
  if (dict.param_groups.size() != groups_.size()) {
    problems.push_back(fmt::format("the state dict has {} parameter group(s) but this optimizer has {}",
                                   dict.param_groups.size(), groups_.size()));
    WICK_FAIL("{}.load_state_dict: {}", name(), problem_list(problems));
  }
  // Saved ids map to the current parameters by position, as PyTorch's load_state_dict.
  std::unordered_map<int64_t, std::pair<size_t, Tensor>> by_id;  // id -> (group, param)
  std::vector<std::unique_ptr<OptimizerOptions>> new_options;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const auto& gs = dict.param_groups[gi];
    const auto& params = groups_[gi].params();
    if (gs.params.size() != params.size())
      problems.push_back(fmt::format("parameter group {} has {} parameter(s) in the state dict but {} here", gi,
                                     gs.params.size(), params.size()));
    for (size_t k = 0; k < gs.params.size() && k < params.size(); ++k)
      if (!by_id.emplace(gs.params[k], std::make_pair(gi, params[k])).second)
        problems.push_back(fmt::format("parameter number {} is listed twice", gs.params[k]));
    auto opts = groups_[gi].options().clone();
    try {
      opts->set_values(gs.options);
    } catch (const Error& e) {
      problems.push_back(fmt::format("parameter group {}: {}", gi, e.what()));
      if (problems.size() == 1) options_error = std::current_exception();
    }
    new_options.push_back(std::move(opts));
  }
  std::unordered_map<const TensorImpl*, ParamState> new_state;
  std::unordered_map<int64_t, std::vector<std::string>> names_seen;
  for (const auto& [key, t] : dict.state) {
    int64_t id = 0;
    std::string sname;
    if (!parse_state_key(key, id, sname)) {
      problems.push_back(fmt::format("unexpected key \"{}\" (expected state.<parameter number>.<name>)", brief(key)));
      continue;
    }
    auto it = by_id.find(id);
    if (it == by_id.end()) {
      problems.push_back(fmt::format("key \"{}\" names parameter {}, which no parameter group lists", brief(key), id));
      continue;
    }
    const auto& [gi, p] = it->second;
    if (!t.defined()) {
      problems.push_back(fmt::format("key \"{}\" holds an undefined tensor", brief(key)));
      continue;
    }
    if (sname == "step" && has_step()) {
      double v = 0;
      // Range-checked before the cast: a saved step of 1e300 or NaN is a bad file, not UB.
      if (t.numel() != 1 || !(v = t.item<double>(), v >= 0 && v < 9007199254740992.0 && v == std::floor(v))) {
        problems.push_back(fmt::format("key \"{}\" should hold one non-negative whole number", brief(key)));
        continue;
      }
      new_state[p.impl()].step = static_cast<int64_t>(v);
      names_seen[id].push_back(sname);
      continue;
    }
    const auto scalars = scalar_state_names();
    if (std::find(scalars.begin(), scalars.end(), sname) != scalars.end()) {
      // Kept as float32, as PyTorch's 0-dim float32 tensor; a bad file must not give 1 / 0 later.
      double v = 0;
      const double max = scalar_state_max(sname);
      if (t.numel() != 1 || !t.is_floating_point() || !(v = t.item<double>(), std::isfinite(v) && v >= 0 && v <= max)) {
        problems.push_back(
            fmt::format("key \"{}\" should hold one floating-point number {}", brief(key),
                        std::isinf(max) ? std::string("that is finite and >= 0") : fmt::format("in [0, {}]", max)));
        continue;
      }
      new_state[p.impl()].scalars.insert_or_assign(sname, static_cast<double>(static_cast<float>(v)));
      names_seen[id].push_back(sname);
      continue;
    }
    const auto allowed = allowed_state_names(*new_options[gi]);
    if (std::find(allowed.begin(), allowed.end(), sname) == allowed.end()) {
      problems.push_back(
          fmt::format("unexpected key \"{}\" ({} keeps: {})", brief(key), name(), fmt::join(allowed, ", ")));
      continue;
    }
    const StateLayout layout = state_layout(sname, p);
    if (!fits(t, {t.dtype(), t.device(), layout.sizes, layout.any_rows})) {
      if (layout.sizes == p.sizes().vec() && !layout.any_rows)
        problems.push_back(fmt::format("key \"{}\" has shape {} but the parameter has shape {}", brief(key),
                                       shape_str(t.sizes()), shape_str(p.sizes())));
      else
        problems.push_back(fmt::format("key \"{}\" has shape {} but should have shape {}{}", brief(key),
                                       shape_str(t.sizes()), shape_str(layout.sizes),
                                       layout.any_rows ? " (any first size)" : ""));
      continue;
    }
    if (!t.is_floating_point()) {
      problems.push_back(
          fmt::format("key \"{}\" has dtype {}; optimizer state must be floating-point", brief(key), t.dtype()));
      continue;
    }
    // Converted to the parameter's dtype and device (the layout's), as PyTorch's load_state_dict.
    new_state[p.impl()].buffers.insert(sname, native::clone(native::to(t, layout.device, layout.dtype)));
    names_seen[id].push_back(sname);
  }
  // A parameter with any state must have all that its options need (the optional tensors are
  // made by the next step, as after turning amsgrad on).
  for (const auto& [id, seen] : names_seen) {
    const auto& [gi, p] = by_id.at(id);
    auto need = required_state_names(*new_options[gi]);
    for (const auto& n : need)
      if (std::find(seen.begin(), seen.end(), n) == seen.end())
        problems.push_back(fmt::format("missing key \"state.{}.{}\"", id, n));
    check_loaded_state(id, new_state[p.impl()], *new_options[gi], problems);
  }
  if (problems.size() == 1 && options_error) {  // the only problem keeps its class (Note [Typed errors])
    try {
      std::rethrow_exception(options_error);
    } catch (const Error& e) {
      std::rethrow_exception(e.with_message(
          fmt::format("{}.load_state_dict: 1 problem(s), nothing was changed: {}", name(), problems[0])));
    }
  }
  if (!problems.empty())
    WICK_FAIL("{}.load_state_dict: {} problem(s), nothing was changed: {}", name(), problems.size(),
              problem_list(problems));
  PendingLoad pending;
  pending.options = std::move(new_options);
  pending.state = std::move(new_state);
  return pending;
}

}  // namespace wick::optim
