// Checkpoint files (Note [Checkpoint files] in checkpoint.h).
#include "wick/nn/checkpoint.h"

#include <fmt/format.h>

#include <charconv>
#include <exception>
#include <optional>

#include "json_limits.h"
#include "module_state.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/safetensors.h"

namespace wick::nn {

namespace {

constexpr const char* kOptimizerPrefix = "optimizer.";
constexpr const char* kOptimizerMeta = "wick.optimizer";
constexpr const char* kEpochMeta = "wick.epoch";

void add_module(std::vector<NamedTensor>& out, const Module& m) {
  for (const auto& [k, t] : m.state_dict()) {
    WICK_CHECK(k.rfind(kOptimizerPrefix, 0) != 0,
               "save_checkpoint: the model's key \"{}\" starts with \"{}\", which "
               "training checkpoints reserve for the optimizer's state; rename the child module",
               k, kOptimizerPrefix);
    out.emplace_back(k, t);
  }
}

void add_optimizer(std::vector<NamedTensor>& out, std::map<std::string, std::string>& meta,
                   const optim::OptimizerStateDict& sd) {
  for (const auto& [k, t] : sd.state) out.emplace_back(kOptimizerPrefix + k, t);
  meta[kOptimizerMeta] = sd.groups_json();
}

void check_user_metadata(const std::map<std::string, std::string>& metadata, const char* what) {
  for (const auto& [k, v] : metadata)
    WICK_CHECK(k != kOptimizerMeta && k != kEpochMeta, "{}: the metadata key \"{}\" is reserved", what, k);
}

// Splits a file's tensors into the module's and the optimizer's; those of dtypes wick cannot
// hold go to model_unsupported and optimizer_unsupported (Note [Unsupported safetensors dtypes]).
struct Parts {
  StateDict model;
  std::vector<UnsupportedTensor> model_unsupported;
  optim::OptimizerStateDict optimizer;
  std::vector<UnsupportedTensor> optimizer_unsupported;
  bool has_optimizer = false;
};

Parts split(const SafetensorsData& data, const std::string& path, const char* op) {
  Parts p;
  auto it = data.metadata.find(kOptimizerMeta);
  p.has_optimizer = it != data.metadata.end();
  if (p.has_optimizer) {
    try {
      p.optimizer.set_groups_json(it->second);
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("{} {}: the optimizer state is malformed: ", op, path));
    }
  }
  for (const auto& [k, t] : data.tensors) {
    if (p.has_optimizer && k.rfind(kOptimizerPrefix, 0) == 0)
      p.optimizer.state.insert(k.substr(10), t);
    else
      p.model.insert(k, t);
  }
  for (const UnsupportedTensor& u : data.unsupported)
    (p.has_optimizer && u.name.rfind(kOptimizerPrefix, 0) == 0 ? p.optimizer_unsupported : p.model_unsupported)
        .push_back(u);
  return p;
}

// The error for optimizer state of dtypes wick cannot hold: the optimizer needs all of its state.
std::string optimizer_unsupported_message(const std::vector<UnsupportedTensor>& unsupported) {
  std::vector<std::string> named;
  for (const UnsupportedTensor& u : unsupported)
    named.push_back(
        fmt::format("\"{}\" ({})", serialize::detail::quote_prefix(u.name, serialize::kMaxQuotedChars), u.dtype));
  return fmt::format("the optimizer state {} {} a dtype wick cannot hold (it holds the safetensors dtypes {})",
                     serialize::detail::brief_join(named, ", ", false, 2 * serialize::kMaxQuotedChars),
                     named.size() == 1 ? "has" : "have", serialize::kSupportedSafetensorsDtypes);
}

// Tensors of dtypes wick cannot hold are listed, unread, for the loaders to judge per key.
SafetensorsData read(const std::string& path, const char* what) {
  try {
    return load_safetensors(path, UnsupportedDtypes::Skip);
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("{}: cannot read the checkpoint {}: ", what, path));
  }
}

int64_t parse_epoch(const std::map<std::string, std::string>& meta, const std::string& path) {
  auto it = meta.find(kEpochMeta);
  WICK_CHECK_FORMAT(it != meta.end(),
                    "load_checkpoint: {} is not a training checkpoint (no \"{}\" metadata); load the model "
                    "with wick::nn::load(model, path)",
                    path, kEpochMeta);
  int64_t e = -1;
  const std::string& s = it->second;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), e);
  WICK_CHECK_FORMAT(ec == std::errc() && ptr == s.data() + s.size() && e >= 0 && e <= kMaxCheckpointEpoch,
                    "load_checkpoint: {}: the epoch \"{:.64}{}\" is not an integer in [0, {}]", path, s,
                    s.size() > 64 ? "..." : "", kMaxCheckpointEpoch);
  return e;
}

// A copy of the module's current values (to undo a load).
StateDict snapshot(const Module& m) {
  StateDict s;
  NoGradGuard no_grad;
  for (const auto& [k, t] : m.state_dict()) s.insert(k, native::clone(t));
  return s;
}

}  // namespace

void save(const Module& m, const std::string& path, const std::map<std::string, std::string>& metadata) {
  check_user_metadata(metadata, "save");
  std::vector<NamedTensor> tensors;
  for (const auto& [k, t] : m.state_dict()) tensors.emplace_back(k, t);
  auto meta = metadata;
  meta.emplace("format", "pt");
  save_safetensors(path, tensors, meta);
}

LoadStateDictResult load(Module& m, const std::string& path, bool strict) {
  Parts p = split(read(path, "load"), path, "load");
  try {
    return detail::load_state_dict_with_unsupported(m, p.model, strict, p.model_unsupported);
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("load {}: ", path));
  }
}

void save(const optim::Optimizer& opt, const std::string& path) { save(opt.state_dict(), path); }

void save(const optim::OptimizerStateDict& state, const std::string& path) {
  std::vector<NamedTensor> tensors;
  std::map<std::string, std::string> meta;
  add_optimizer(tensors, meta, state);
  save_safetensors(path, tensors, meta);
}

void load(optim::Optimizer& opt, const std::string& path) {
  optim::OptimizerStateDict state = load_optimizer_state_dict(path);
  try {
    opt.load_state_dict(state);
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("load {}: ", path));
  }
}

optim::OptimizerStateDict load_optimizer_state_dict(const std::string& path) {
  SafetensorsData data = read(path, "load");
  WICK_CHECK_FORMAT(data.metadata.count(kOptimizerMeta), "load: {} holds no optimizer state (no \"{}\" metadata)", path,
                    kOptimizerMeta);
  Parts p = split(data, path, "load");
  // A training checkpoint (wick.epoch) also holds the model's tensors: they are not the
  // optimizer's business. Any other file must hold nothing but optimizer state.
  const bool training_checkpoint = data.metadata.count(kEpochMeta) != 0;
  std::vector<std::string> model_keys = p.model.keys();
  for (const UnsupportedTensor& u : p.model_unsupported) model_keys.push_back(u.name);
  WICK_CHECK_FORMAT(training_checkpoint || model_keys.empty(), "load: {}: unexpected key(s) for an optimizer: {}", path,
                    serialize::detail::brief_join(model_keys, ", ", /*quote=*/true));
  WICK_CHECK_TYPE(p.optimizer_unsupported.empty(), "load {}: {}", path,
                  optimizer_unsupported_message(p.optimizer_unsupported));
  return std::move(p.optimizer);
}

void save_checkpoint(const std::string& path, const Module& model, const optim::Optimizer& opt, int64_t epoch,
                     const std::map<std::string, std::string>& metadata) {
  check_user_metadata(metadata, "save_checkpoint");
  WICK_CHECK(epoch >= 0 && epoch <= kMaxCheckpointEpoch, "save_checkpoint: epoch must be in [0, {}], got {}",
             kMaxCheckpointEpoch, epoch);
  std::vector<NamedTensor> tensors;
  auto meta = metadata;
  meta.emplace("format", "pt");
  add_module(tensors, model);
  add_optimizer(tensors, meta, opt.state_dict());
  meta[kEpochMeta] = std::to_string(epoch);
  save_safetensors(path, tensors, meta);
}

CheckpointInfo load_checkpoint(const std::string& path, Module& model, optim::Optimizer& opt, bool strict) {
  SafetensorsData data = read(path, "load_checkpoint");
  CheckpointInfo info;
  info.epoch = parse_epoch(data.metadata, path);
  info.metadata = data.metadata;
  WICK_CHECK_FORMAT(data.metadata.count(kOptimizerMeta),
                    "load_checkpoint: {} holds no optimizer state (no \"{}\" metadata)", path, kOptimizerMeta);
  Parts p = split(data, path, "load_checkpoint");
  // Both parts are checked before either is applied: the optimizer's is prepared (checked, not
  // applied), and the model's load checks everything before changing anything. The optimizer's
  // part is applied only when both passed, so a bad file leaves model and optimizer as they were.
  // When only the optimizer's part is bad, the model's is still loaded, for a message naming
  // every problem, and the model's own values are put back (loading its own state dict, taken
  // just before, cannot fail).
  std::string model_error, opt_error;
  std::exception_ptr model_exception, opt_exception;  // their class is the class raised (Note [Typed errors])
  optim::Optimizer::PendingLoad pending;
  if (!p.optimizer_unsupported.empty()) {
    opt_error = optimizer_unsupported_message(p.optimizer_unsupported);
    opt_exception = std::make_exception_ptr(TypeError(opt_error));
  } else {
    try {
      pending = opt.prepare_load_state_dict(p.optimizer);
    } catch (const Error& e) {
      opt_error = e.what();
      opt_exception = std::current_exception();
    }
  }
  std::optional<StateDict> model_before;
  if (opt_exception) model_before = snapshot(model);
  try {
    info.model_keys = detail::load_state_dict_with_unsupported(model, p.model, strict, p.model_unsupported);
    if (model_before) model.load_state_dict(*model_before, false);
  } catch (const Error& e) {
    model_error = e.what();
    model_exception = std::current_exception();
  }
  if (!model_exception && !opt_exception) {
    opt.apply_load(std::move(pending));
    return info;
  }
  const std::exception_ptr first_error = model_exception ? model_exception : opt_exception;
  const std::string msg = fmt::format(
      "load_checkpoint {}: nothing was loaded; the model and the optimizer are unchanged.{}{}", path,
      model_error.empty() ? "" : "\nModel: " + model_error, opt_error.empty() ? "" : "\nOptimizer: " + opt_error);
  try {
    std::rethrow_exception(first_error);
  } catch (const Error& e) {
    std::rethrow_exception(e.with_message(msg));
  }
}

}  // namespace wick::nn
