// Module::state_dict / load_state_dict, and printing of the module tree.
#include "module_state.h"

#include <fmt/format.h>

#include <optional>
#include <ostream>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "json_limits.h"
#include "safetensors_widen.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/native.h"
#include "wick/nn/module.h"

namespace wick::nn {

namespace {
struct Target {
  std::string key;
  Tensor tensor;
  bool is_param;
};

// Every parameter and persistent buffer by dotted name, in PyTorch's state_dict order (own
// parameters, own buffers, then children's; not deduplicated).
void collect_targets(const Module& m, const std::string& prefix, std::vector<Target>& out) {
  for (const auto& e : m.parameter_table())
    if (e.value.defined()) out.push_back({prefix + e.name, e.value, true});
  for (const auto& e : m.buffer_table())
    if (e.value.defined() && e.persistent) out.push_back({prefix + e.name, e.value, false});
  for (const auto& c : m.child_table())
    if (c.value) collect_targets(*c.value, prefix + c.name + ".", out);
}

std::string shape_str(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

// Keys may come from a file: at most kMaxListedItems of them, each cut short (Note [Loader limits]).
std::string quoted_list(const std::vector<std::string>& keys) {
  return serialize::detail::brief_join(keys, ", ", /*quote=*/true);
}

// True when copy_ would refuse `t` as a target: a dim of size > 1 and stride 0 (an expanded
// tensor) makes two elements share memory, unless another dim is empty (Note [In-place writes
// and overlapping memory]). The same rule as copy_'s check, without throwing.
bool elements_share_memory(const Tensor& t) {
  bool shared = false;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.sizes()[d] == 0) return false;
    if (t.sizes()[d] > 1 && t.strides()[d] == 0) shared = true;
  }
  return shared;
}

// A host copy of t's values (never more device memory: a model that fills its GPU still loads).
Tensor host_copy(const Tensor& t) { return t.device().is_cpu() ? native::clone(t) : native::to(t, kCPU, t.dtype()); }

// One target written by the copy loop, and its value before (to put back on a failure).
struct Written {
  const Target* target;
  Tensor before;
};

// Puts back the values of `done`, last first: a tensor tied under two names is then left with
// the value its first name saw, which is the original. Returns false when a copy back failed
// (it goes on with the others).
bool restore(const std::vector<Written>& done) {
  bool ok = true;
  for (auto it = done.rbegin(); it != done.rend(); ++it) {
    try {
      native::copy_(it->target->tensor, it->before);
    } catch (const std::exception&) {
      ok = false;
    }
  }
  return ok;
}

// Copies dict's value into every target that has one, under NoGrad. The check pass has made a
// failure unlikely, but a copy can still throw (an allocation while staging a cross-device copy):
// then the targets already written are put back and the error, of its own class, names the key.
void copy_all(const std::vector<Target>& targets, const StateDict& dict, const std::string& module_name) {
  NoGradGuard no_grad;
  std::vector<Written> done;
  done.reserve(targets.size());  // push_back below cannot throw
  const Target* current = nullptr;
  try {
    for (const auto& t : targets) {
      const Tensor* src = dict.find(t.key);
      if (!src) continue;
      current = &t;
      done.push_back({&t, host_copy(t.tensor)});  // before the copy: a copy that fails part way is undone too
      native::copy_(t.tensor, *src);
    }
  } catch (const Error& e) {
    const bool restored = restore(done);
    rethrow_with_context(
        e, fmt::format("Error(s) in loading state_dict for {}: copying into {} failed ({}): ", module_name,
                       current ? current->key : "?",
                       restored ? "the values already copied were put back; the module is unchanged"
                                : "putting back the values already copied failed too; the module is partly loaded"));
  } catch (...) {  // not a wick error (std::bad_alloc from a container): undo, then let it through
    restore(done);
    throw;
  }
}
}  // namespace

StateDict Module::state_dict() const {
  std::vector<Target> targets;
  collect_targets(*this, "", targets);
  StateDict out;
  for (auto& t : targets) out.insert(t.key, t.tensor.detach());
  return out;
}

LoadStateDictResult Module::load_state_dict(const StateDict& dict, bool strict) {
  return detail::load_state_dict_with_unsupported(*this, dict, strict, {});
}

namespace {
// For a file dtype that wick widens exactly to the model's (Note [Widening safetensors dtypes]):
// how to load it.
std::string widen_hint(const std::string& file_dtype, DType model_dtype) {
  const std::optional<DType> widened = serialize::detail::widened_dtype(file_dtype);
  if (widened != model_dtype) return "";
  return fmt::format(
      ", or read the file with load_safetensors(path, UnsupportedDtypes::Widen), which holds {} "
      "exactly as {}, and load_state_dict the result",
      file_dtype, model_dtype);
}
}  // namespace

LoadStateDictResult detail::load_state_dict_with_unsupported(
    Module& m, const StateDict& dict, bool strict, const std::vector<serialize::UnsupportedTensor>& unsupported) {
  std::vector<Target> targets;
  collect_targets(m, "", targets);
  LoadStateDictResult result;
  std::vector<std::string> problems;
  bool value_problem = false;  // a problem other than a dtype mismatch
  std::unordered_set<std::string> expected;
  std::unordered_map<std::string_view, const serialize::UnsupportedTensor*> foreign;
  for (const auto& u : unsupported) foreign.emplace(u.name, &u);
  for (const auto& t : targets) {
    expected.insert(t.key);
    const Tensor* src = dict.find(t.key);
    if (!src) {
      auto it = foreign.find(t.key);
      if (it == foreign.end()) {
        result.missing_keys.push_back(t.key);
        continue;
      }
      // A tensor of a dtype wick cannot hold (Note [Unsupported safetensors dtypes]).
      const serialize::UnsupportedTensor& u = *it->second;
      if (!(IntArrayRef(u.shape) == t.tensor.sizes())) {
        value_problem = true;
        problems.push_back(fmt::format(
            "size mismatch for {}: copying a {} with shape [{}] from checkpoint, the shape in current model is {}.",
            t.key, t.is_param ? "param" : "buffer", fmt::join(u.shape, ", "), shape_str(t.tensor)));
      }
      problems.push_back(fmt::format(
          "dtype mismatch for {}: copying a {} with dtype {} from checkpoint, the dtype in current model is {}. wick "
          "cannot hold {} tensors (it holds the safetensors dtypes {}): convert the checkpoint's tensor to {} (in "
          "PyTorch: t.to(torch.{})){}.",
          t.key, t.is_param ? "param" : "buffer", u.dtype, t.tensor.dtype(), u.dtype,
          serialize::kSupportedSafetensorsDtypes, dtype_safetensors_name(t.tensor.dtype()), t.tensor.dtype(),
          widen_hint(u.dtype, t.tensor.dtype())));
      continue;
    }
    if (!src->defined()) {
      problems.push_back(fmt::format("undefined tensor for {} in the state dict", t.key));
      value_problem = true;
      continue;
    }
    if (!(src->sizes() == t.tensor.sizes())) {
      value_problem = true;
      problems.push_back(
          fmt::format("size mismatch for {}: copying a {} with shape {} from checkpoint, the shape in "
                      "current model is {}.",
                      t.key, t.is_param ? "param" : "buffer", shape_str(*src), shape_str(t.tensor)));
    }
    if (elements_share_memory(t.tensor)) {
      value_problem = true;
      problems.push_back(fmt::format(
          "cannot load into {}: its elements share memory (an expanded tensor of shape {}, strides [{}]); clone() "
          "it",
          t.key, shape_str(t.tensor), fmt::join(t.tensor.strides(), ", ")));
    }
    if (src->dtype() != t.tensor.dtype())
      problems.push_back(
          fmt::format("dtype mismatch for {}: copying a {} with dtype {} from checkpoint, the dtype "
                      "in current model is {}.",
                      t.key, t.is_param ? "param" : "buffer", src->dtype(), t.tensor.dtype()));
  }
  for (const auto& [key, value] : dict)
    if (!expected.count(key)) result.unexpected_keys.push_back(key);
  std::vector<std::string> foreign_unexpected;  // `"key" (F16)`, for the message
  for (const auto& u : unsupported)
    if (!expected.count(u.name)) {
      result.unexpected_keys.push_back(u.name);
      foreign_unexpected.push_back(
          fmt::format("\"{}\" ({})", serialize::detail::quote_prefix(u.name, serialize::kMaxQuotedChars), u.dtype));
    }

  std::string msg;
  if (strict && !result.missing_keys.empty())
    msg += fmt::format("\n\tMissing key(s) in state_dict: {}.", quoted_list(result.missing_keys));
  if (strict && !result.unexpected_keys.empty()) {
    msg += fmt::format("\n\tUnexpected key(s) in state_dict: {}.", quoted_list(result.unexpected_keys));
    if (!foreign_unexpected.empty())
      msg += fmt::format(
          " Of these, {} {} a dtype wick cannot hold (it holds the safetensors dtypes {}); load with strict=false to "
          "skip them.",
          serialize::detail::brief_join(foreign_unexpected, ", ", false, 2 * serialize::kMaxQuotedChars),
          foreign_unexpected.size() == 1 ? "has" : "have", serialize::kSupportedSafetensorsDtypes);
  }
  for (const auto& p : problems) msg += "\n\t" + p;
  // Only missing or unexpected keys: IndexError; a size mismatch, undefined tensor or target that
  // cannot be written: ValueError; otherwise (dtype mismatches): TypeError.
  if (!msg.empty()) {
    const std::string text = fmt::format(
        "Error(s) in loading state_dict for {}:{}\nNothing was loaded; the module is unchanged.", m.name(), msg);
    if (problems.empty()) WICK_FAIL_T(IndexError, "{}", text);
    if (value_problem) WICK_FAIL("{}", text);
    WICK_FAIL_T(TypeError, "{}", text);
  }

  copy_all(targets, dict, m.name());
  return result;
}

// ---- printing (PyTorch's Module.__repr__) ----

namespace {
// Indents every line but the first by `spaces` (PyTorch's _addindent).
std::string add_indent(const std::string& s, int spaces) {
  std::string out;
  const std::string pad(static_cast<size_t>(spaces), ' ');
  for (char c : s) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}
}  // namespace

std::string Module::to_string() const {
  const std::vector<std::string> extra = split_lines(extra_repr());
  std::vector<std::string> child_lines;
  for (const auto& c : children_)
    child_lines.push_back("(" + c.name + "): " + add_indent(c.value ? c.value->to_string() : "None", 2));
  std::string s = name() + "(";
  if (!extra.empty() || !child_lines.empty()) {
    if (extra.size() == 1 && child_lines.empty()) {
      s += extra[0];
    } else {
      for (const auto& l : extra) s += "\n  " + l;
      for (const auto& l : child_lines) s += "\n  " + l;
      s += "\n";
    }
  }
  return s + ")";
}

std::ostream& operator<<(std::ostream& os, const Module& m) { return os << m.to_string(); }

}  // namespace wick::nn
