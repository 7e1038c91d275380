#pragma once
// Graphviz pictures of modules: the module tree (nn::to_dot) and the names that label a
// module's leaves in a backward graph (nn::dot_options). Ids follow Note [Deterministic DOT ids]
// (wick/autograd/dot.h).
#include <string>
#include <utility>
#include <vector>

#include "wick/autograd/dot.h"
#include "wick/nn/module.h"

namespace wick::nn {

/// The DOT statements (nodes, then edges) of the module tree under `root`, for embedding in a
/// larger graph. Modules get ids `<prefix>m0`, `<prefix>m1`, ... in pre-order, each module once;
/// parameters `<prefix>p<i>` and buffers `<prefix>b<i>` in the order first met, each tensor once
/// (tied parameters and shared children get one node with several incoming edges, labelled by
/// the table entry's name); None entries are small "None" nodes. `root_label` names the root.
/// When `tensor_ids` is given, each distinct tensor drawn is appended with its DOT id, so a
/// caller can draw edges to it.
std::string dot_module_tree(const Module& root, const std::string& prefix, const std::string& root_label,
                            std::vector<std::pair<std::string, Tensor>>* tensor_ids = nullptr);

/// The module tree as a complete DOT digraph: each module (type and options) once, its
/// parameters and buffers with their first dotted name, shape and dtype.
std::string to_dot(const Module& root, const std::string& graph_name = "modules");

/// autograd::DotOptions whose names are `module`'s parameters and buffers (dotted names, first
/// name of a tied tensor), for autograd::to_dot of a loss computed by the module.
autograd::DotOptions dot_options(const Module& module);

}  // namespace wick::nn
