#pragma once
// Checkpoint files: a module's state dict, an optimizer's state, or both plus the epoch, in the
// safetensors format (safetensors.h).
//
// Note [Checkpoint files]
// - A module's tensors are stored under their state_dict names ("fc1.weight", "bn.running_mean"),
//   exactly PyTorch's keys, so `safetensors.torch.load_file` + `model.load_state_dict` reads a
//   wick file and `safetensors.torch.save_file(model.state_dict())` writes one wick loads.
// - An optimizer's tensors are stored as "optimizer.state.<i>.<name>" and its parameter groups
//   and type as JSON in the metadata entry "wick.optimizer" (Note [Optimizer state dicts]).
// - A training checkpoint holds both plus "wick.epoch" (the number of finished epochs) and any
//   extra metadata the caller adds.
// - Every save is atomic (a temporary file, fsync, rename: Note [Atomic save]); a failed save
//   leaves the previous file as it was.
// - Every load reads and validates the whole file first (truncated or malformed files, missing or
//   unexpected keys, shape and dtype mismatches, optimizer state that does not fit) and changes
//   nothing unless everything fits; every problem is named in one error that names the file. An
//   error raised underneath keeps its class (Note [Typed errors]): IOError for a file that cannot
//   be read, FormatError for a malformed one, IndexError/ValueError/TypeError from load_state_dict.
// - A tensor of a safetensors dtype wick cannot hold (F16, BF16, I32, U8, ...: files written by
//   PyTorch) is checked like the others but never read unless needed (Note [Unsupported
//   safetensors dtypes] in safetensors.h): under a key the model does not have it is an
//   unexpected key (skipped with strict = false, as PyTorch's load_state_dict(strict=False); an
//   IndexError naming the key and its dtype with strict = true); under a key the model has, or as
//   optimizer state, it is a TypeError naming the key, the dtype and wick's dtypes. The decision
//   is made here, per key, because only the loader knows which keys the module needs;
//   load_safetensors, which returns every tensor, refuses such a file (NotImplementedError) unless
//   called with UnsupportedDtypes::Skip.
#include <cstdint>
#include <map>
#include <string>

#include "wick/nn/module.h"
#include "wick/nn/module_holder.h"
#include "wick/nn/optim/optimizer.h"

namespace wick::nn {

/// Writes m.state_dict() to `path` atomically (plus `metadata`).
void save(const Module& m, const std::string& path, const std::map<std::string, std::string>& metadata = {});

/// Loads `path` into `m` (Module::load_state_dict semantics: with strict, missing and unexpected
/// keys are errors; without, they are returned, tensors of dtypes wick cannot hold included). A
/// training checkpoint's optimizer entries are ignored. Throws (a wick::Error subclass) naming the
/// file and every problem; `m` is unchanged then.
LoadStateDictResult load(Module& m, const std::string& path, bool strict = true);

/// save and load for a module holder (`nn::save(net, "net.safetensors")`, as torch::save).
template <ModuleHolderType H>
void save(const H& m, const std::string& path, const std::map<std::string, std::string>& metadata = {}) {
  save(static_cast<const Module&>(*m), path, metadata);
}
template <ModuleHolderType H>
LoadStateDictResult load(const H& m, const std::string& path, bool strict = true) {
  return load(static_cast<Module&>(*m), path, strict);
}

/// Writes an optimizer's state (Note [Checkpoint files]) to `path` atomically.
void save(const optim::Optimizer& opt, const std::string& path);
/// Loads an optimizer's state saved by save(opt, ...) or save_checkpoint (a training
/// checkpoint's model tensors are ignored; in any other file a tensor outside "optimizer." is an
/// unexpected key, a FormatError); `opt` is unchanged on error.
void load(optim::Optimizer& opt, const std::string& path);
/// Writes an optimizer state dict (a ZeroRedundancyOptimizer's consolidated one, say) in the
/// layout save(opt, path) writes, so that either load reads it.
void save(const optim::OptimizerStateDict& state, const std::string& path);
/// Reads the optimizer state of a file written by save(opt or state, ...) or save_checkpoint,
/// with load(opt, path)'s checks of the file (FormatError, TypeError, IOError naming `path`);
/// the optimizer that loads it checks the rest.
optim::OptimizerStateDict load_optimizer_state_dict(const std::string& path);

/// The largest epoch a training checkpoint holds (2^31 - 1): a resumed loop multiplies it by the
/// steps per epoch, so a hostile file must not be able to make that product overflow.
inline constexpr int64_t kMaxCheckpointEpoch = (int64_t{1} << 31) - 1;

/// What load_checkpoint found besides the tensors.
struct CheckpointInfo {
  int64_t epoch = 0;
  std::map<std::string, std::string> metadata;  ///< every metadata entry of the file
  /// The model's missing and unexpected keys (empty unless strict = false: with strict they are
  /// errors), as nn::load and Module::load_state_dict return them.
  LoadStateDictResult model_keys;
};

/// Writes model + optimizer + epoch (in [0, kMaxCheckpointEpoch]) (+ `metadata`) to `path`
/// atomically.
void save_checkpoint(const std::string& path, const Module& model, const optim::Optimizer& opt, int64_t epoch,
                     const std::map<std::string, std::string>& metadata = {});
/// Loads a training checkpoint into `model` and `opt`: both are validated before either is
/// changed, and on any problem both are left as they were. With strict = false, keys the model
/// lacks or does not have are skipped and reported in the result's model_keys.
CheckpointInfo load_checkpoint(const std::string& path, Module& model, optim::Optimizer& opt, bool strict = true);

}  // namespace wick::nn
