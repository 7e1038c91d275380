#pragma once
// to_dot: the backward graph as Graphviz DOT text, drawn after micrograd's draw_dot and
// torchviz's make_dot.
//
// Note [Deterministic DOT ids]
// Every picture wick draws (autograd::to_dot, nn::to_dot, parallel::explain_replicate) names its
// nodes from stable facts, never from pointers or timing: backward nodes are numbered n0, n1, ...
// in a depth-first post-order from the roots (each node after the nodes it feeds from, edges in
// input order), modules m0, m1, ... in pre-order, tensors by their index in a walk. Sequence
// numbers (creation order) would not do: the replicas' forwards run on their device threads at
// once, so their nodes' creation order changes from run to run. The same program therefore draws
// byte-identical DOT in every run, under any scheduling, which is what lets tests compare a
// drawing with a checked-in golden file (tests/data/dot/).
#include <string>
#include <utility>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::autograd {

struct DotOptions {
  /// Names of leaf tensors (parameters, buffers, inputs), matched by identity. A leaf's
  /// AccumulateGrad node is labelled with its name. nn::dot_options(module) fills it from a
  /// module's named parameters and buffers.
  std::vector<std::pair<std::string, Tensor>> names;
  /// Names of the roots (drawn as output nodes); missing entries are "output i".
  std::vector<std::string> root_names;
  /// Draw the tensors each node saved for backward (shape and dtype) as their own nodes.
  bool show_saved = true;
  /// Append each node's sequence number to its label (differs between runs of a test binary
  /// that build other graphs first; off for golden files).
  bool show_sequence_nr = false;
  /// A second label line for nodes of a given name, e.g. {"Broadcast", "backward: ReduceAddCoalesced"}.
  std::vector<std::pair<std::string, std::string>> node_notes;
  /// The name of the digraph.
  std::string graph_name = "backward";
};

/// The backward graph reachable from `roots` (their grad_fn or leaf accumulator) as DOT:
/// backward nodes by name, leaves with their names, saved tensors with shape and dtype, edges
/// from each node's input producers labelled by input index (view-op edges dashed), one
/// cluster per device. Node ids follow Note [Deterministic DOT ids]. Roots that do not
/// require grad are drawn alone. Reads the graph only; it does not change it.
std::string to_dot(const std::vector<Tensor>& roots, const DotOptions& options = {});

/// Quotes `s` as a DOT string ("..." with '"' and '\' escaped, newlines as \n).
std::string dot_quote(const std::string& s);
/// "[2, 3] float32" (shape and dtype), "None" for an undefined tensor.
std::string dot_tensor_summary(const Tensor& t);
/// A DOT id for a device's cluster: "cluster_cpu_0".
std::string dot_cluster_id(const Device& d);

}  // namespace wick::autograd
