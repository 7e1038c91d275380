// Pictures of the module tree (wick/nn/dot.h).
#include "wick/nn/dot.h"

#include <fmt/format.h>

#include <map>
#include <unordered_map>

namespace wick::nn {

namespace {

using autograd::dot_quote;
using autograd::dot_tensor_summary;

struct TreeWriter {
  std::string prefix;
  std::string nodes, edges;
  std::unordered_map<const Module*, std::string> module_id;
  std::map<const TensorImpl*, std::string> tensor_id;
  std::vector<std::pair<std::string, Tensor>>* tensor_ids = nullptr;
  size_t params = 0, buffers = 0, nones = 0;

  std::string none_node() {
    const std::string id = fmt::format("{}none{}", prefix, nones++);
    nodes += fmt::format("  {} [label=\"None\", shape=plaintext, style=\"\"];\n", id);
    return id;
  }

  // The id of tensor t, drawing it the first time (named `path`).
  std::string tensor(const Tensor& t, const std::string& path, bool is_param) {
    auto it = tensor_id.find(t.impl());
    if (it != tensor_id.end()) return it->second;
    const std::string id = fmt::format("{}{}{}", prefix, is_param ? "p" : "b", is_param ? params++ : buffers++);
    tensor_id.emplace(t.impl(), id);
    if (tensor_ids) tensor_ids->emplace_back(id, t);
    nodes += fmt::format("  {} [label={}, shape=box, style=filled, fillcolor={}];\n", id,
                         dot_quote(path + "\n" + dot_tensor_summary(t)), is_param ? "lightblue" : "khaki");
    return id;
  }

  // Draws module m (reached as `path`) and, the first time, its tables. Returns its id.
  std::string module(const Module& m, const std::string& path, const std::string& label) {
    auto it = module_id.find(&m);
    if (it != module_id.end()) return it->second;
    const std::string id = fmt::format("{}m{}", prefix, module_id.size());
    module_id.emplace(&m, id);
    const std::string extra = m.extra_repr();
    nodes += fmt::format("  {} [label={}, shape=box, style=\"filled,rounded\", fillcolor=lightgrey];\n", id,
                         dot_quote(fmt::format("{}\n{}({})", label, m.name(), extra)));
    const std::string dot = path.empty() ? "" : path + ".";
    for (const ParameterEntry& e : m.parameter_table()) {
      const std::string to = e.value.defined() ? tensor(e.value, dot + e.name, true) : none_node();
      edges += fmt::format("  {} -> {} [label={}];\n", id, to, dot_quote(e.name));
    }
    for (const BufferEntry& e : m.buffer_table()) {
      const std::string to = e.value.defined() ? tensor(e.value, dot + e.name, false) : none_node();
      edges +=
          fmt::format("  {} -> {} [label={}{}];\n", id, to, dot_quote(e.name), e.persistent ? "" : ", style=dashed");
    }
    for (const ChildEntry& e : m.child_table()) {
      const std::string to = e.value ? module(*e.value, dot + e.name, dot + e.name) : none_node();
      edges += fmt::format("  {} -> {} [label={}, penwidth=1.5];\n", id, to, dot_quote(e.name));
    }
    return id;
  }
};

}  // namespace

std::string dot_module_tree(const Module& root, const std::string& prefix, const std::string& root_label,
                            std::vector<std::pair<std::string, Tensor>>* tensor_ids) {
  TreeWriter w;
  w.prefix = prefix;
  w.tensor_ids = tensor_ids;
  w.module(root, "", root_label);
  return w.nodes + w.edges;
}

std::string to_dot(const Module& root, const std::string& graph_name) {
  std::string out = fmt::format("digraph {} {{\n", dot_quote(graph_name));
  out += "  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n";
  out += dot_module_tree(root, "", "(root)");
  return out + "}\n";
}

autograd::DotOptions dot_options(const Module& module) {
  autograd::DotOptions o;
  for (const auto& [name, t] : module.named_parameters()) o.names.emplace_back(name, t);
  for (const auto& [name, t] : module.named_buffers()) o.names.emplace_back(name, t);
  return o;
}

}  // namespace wick::nn
