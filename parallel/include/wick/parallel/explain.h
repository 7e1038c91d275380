#pragma once
// explain_replicate: replicate made visible. Prints what replicate builds and does (the index
// maps of Note [replicate through index maps], the broadcast bucket plan of Note [Bucketing
// rule], a profile of each phase) and draws the replicas and a DataParallel step as Graphviz
// DOT (ids per Note [Deterministic DOT ids] in wick/autograd/dot.h). examples/explain_replicate
// runs it on the model of docs/parallel.md section 1; docs/tour/ shows its output.
#include <memory>
#include <string>
#include <vector>

#include "wick/nn/module.h"
#include "wick/parallel/replicate.h"

namespace wick::parallel {

struct ReplicateExplanation {
  /// Markdown: the module / parameter / buffer index tables, each module's entries -> index,
  /// the bucket plan (dtype, bytes, element offsets, devices) of every broadcast.
  std::string tables;
  /// Markdown: ReplicateProfile of a first call (cache miss) and a second one (cache hit).
  /// Timings differ between runs; everything else in this struct does not.
  std::string profile;
  /// DOT: the original module tree, the Broadcast node fanning out to one cluster per device
  /// (each replica's tree), the detached broadcast of the buffers; replica 0's tensors that
  /// alias the original's memory are marked.
  std::string replicas_dot;
};

/// Explains replicate(module, devices): replicates it (twice, for the profile; detach = false)
/// and describes the result. The module must live on devices[0], as for replicate.
ReplicateExplanation explain_replicate(const std::shared_ptr<nn::Module>& module, const std::vector<Device>& devices);

/// The backward graph of one DataParallel step as DOT: loss = DataParallel(module,
/// devices)(input).sum(), drawn from the loss with the module's parameter names and `input`
/// named "input" (make it require grad to see Scatter). Shows Scatter, the per-device
/// branches (one cluster per device), Gather, and the Broadcast node whose backward is
/// ReduceAddCoalesced into the original leaves. Runs forward only. `devices` as DataParallel
/// takes them (empty: default_device_ids()), and as DataParallel's constructor does, it moves
/// the module to the first of them.
std::string data_parallel_step_dot(const std::shared_ptr<nn::Module>& module, const Tensor& input,
                                   const std::vector<Device>& devices);

}  // namespace wick::parallel
