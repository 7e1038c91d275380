#pragma once
// replicate: copies of a module on several devices that share the original's structure and
// send their gradients back to it (docs/parallel.md, "replicate, step by step", walks an example).
//
// Note [replicate through index maps]
//  1. Index maps by identity: the module tree in pre-order, each module once (a child registered
//     twice is one entry); parameters deduplicated (tied weights are one entry); buffers
//     deduplicated and split into those that require grad and the rest.
//  2. All parameters go through ONE differentiable Broadcast (comm::broadcast_coalesced: one
//     flat bucket per dtype, viewed back into tensors), whose backward is ReduceAddCoalesced
//     onto the source device. Buffers that require grad go through a second Broadcast; the
//     other buffers are broadcast detached. detach = true broadcasts everything detached (no
//     autograd node at all; used under no-grad).
//  3. Every module is shallow-copied once per device (Cloneable::shallow_copy), marked as a
//     replica, and every table entry of every copy is rewired through the maps: children to the
//     copies of the same replica, parameters and buffers to their broadcast copies. None stays
//     None. Tied parameters and shared children therefore stay shared inside each replica.
//  4. The replica on devices[0] shares storage with the original (BatchNorm running statistics
//     updated there persist); the others own fresh copies with version counters of their own.
//     on_replicated() runs on every module of every replica after rewiring.
//
// Note [Replicas are fresh copies]
// Every call returns replicas equivalent to a fresh shallow copy of each original module taken
// at that moment, as PyTorch's replicate copies __dict__ on every call: plain members, options
// and the training flag are as the original has them now (the flag is copied from each
// original module directly, never set through a recursive train(), so a child shared by two
// parents with mixed flags keeps its own). Nothing a replica does survives it (a counter it
// increments, an option it changes), except in-place writes to tensors it shares with the
// original: replica 0's parameters and buffers are the original's own (BatchNorm's running
// statistics).
// What is cached, per root module and keyed on every module's structure_version() (checked in
// pre-order, a parent before its children, so a child dropped from the tree is never touched):
// the index maps of step 1, and the modules of earlier replicas once nobody references them
// any more (their tensor entries are cleared then, freeing the copies). A reused module is
// first assigned from its original (Module::assign_members_from: the subclass's copy assignment
// without the tables, so plain members, options and flag become the original's current ones),
// then rewired: exactly what a fresh shallow copy would be, without its allocations. A tree with a module
// that cannot be copy-assigned gets fresh copies on every call. The cache saves work and never
// changes a result; clear_replicate_cache() frees it and is never needed for correctness.
#include <cstdint>
#include <memory>
#include <vector>

#include "wick/nn/module.h"

namespace wick::parallel {

/// Where replicate spent its time, in CPU seconds of the calling thread (filled when a pointer
/// is passed).
struct ReplicateProfile {
  double plan_seconds = 0;       ///< validating / building the index maps, collecting tensors
  double broadcast_seconds = 0;  ///< Broadcast / broadcast_coalesced (the data movement)
  double shells_seconds = 0;     ///< copying the modules and rewiring their tables (graph cloning)
  bool cache_hit = false;        ///< the index maps came from the cache
  size_t num_modules = 0;        ///< distinct modules in the tree
  size_t num_tensors = 0;        ///< distinct parameters + buffers
  size_t bytes_moved = 0;        ///< bytes copied to devices other than devices[0]
};

/// Replicas of `module` on `devices` (Note [replicate through index maps]); result[i] lives on
/// devices[i]. Every parameter and buffer of the module must be on devices[0]. Devices may
/// repeat (each repeat gets its own copies). An empty device list gives an empty result.
/// Replicas are marked (Module::is_replica): zero_grad on one raises an error, and their
/// parameters (not leaves when detach = false) are refused by optimizers.
std::vector<std::shared_ptr<nn::Module>> replicate(const std::shared_ptr<nn::Module>& module,
                                                   const std::vector<Device>& devices, bool detach = false,
                                                   ReplicateProfile* profile = nullptr);

/// Typed convenience: the replicas as the module's own type.
template <class T>
requires(!std::is_same_v<T, nn::Module> && std::is_base_of_v<nn::Module, T>) std::vector<std::shared_ptr<T>> replicate(
    const std::shared_ptr<T>& module, const std::vector<Device>& devices, bool detach = false,
    ReplicateProfile* profile = nullptr) {
  auto base = replicate(std::static_pointer_cast<nn::Module>(module), devices, detach, profile);
  std::vector<std::shared_ptr<T>> out;
  out.reserve(base.size());
  for (auto& m : base) out.push_back(std::static_pointer_cast<T>(std::move(m)));
  return out;
}

/// Step 1's index maps of `module`, as replicate builds them (for explain_replicate and tests):
/// modules in pre-order, each once; for each module, each table entry's index (-1: None).
struct ReplicateIndexMaps {
  struct Row {
    const nn::Module* module = nullptr;
    std::vector<int32_t> children, params, buffers;  ///< table entry -> index (-1: None)
  };
  std::vector<Row> modules;             ///< modules[i].module is module index i; [0] is the root
  std::vector<Tensor> params, buffers;  ///< index -> the original tensor
};
ReplicateIndexMaps replicate_index_maps(const std::shared_ptr<nn::Module>& module);

/// Frees the cached index maps and idle replica modules (Note [Replicas are fresh copies]).
/// Only memory: results never depend on it.
void clear_replicate_cache();

}  // namespace wick::parallel
