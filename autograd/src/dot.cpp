// to_dot: draws the backward graph (Note [Deterministic DOT ids] in dot.h).
#include "wick/autograd/dot.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "wick/autograd/meta.h"
#include "wick/autograd/saved_tensor.h"

namespace wick::autograd {

std::string dot_quote(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += c;
    } else if (c == '\n') {
      r += "\\n";
    } else {
      r += c;
    }
  }
  return r + "\"";
}

std::string dot_tensor_summary(const Tensor& t) {
  if (!t.defined()) return "None";
  return fmt::format("[{}] {}", fmt::join(t.sizes(), ", "), t.dtype());
}

std::string dot_cluster_id(const Device& d) {
  std::string s = "cluster_" + d.str();
  std::replace(s.begin(), s.end(), ':', '_');
  return s;
}

namespace {

// Every node reachable from the roots, in a depth-first post-order over next_edges (each node
// after everything it feeds from, edges in input order, roots in the order given). The order
// depends only on the graph's shape: sequence numbers would not do, since replicas' forwards
// run on their device threads at once and interleave their creation order.
std::vector<Node*> reachable_nodes(const std::vector<Edge>& root_edges) {
  std::vector<Node*> nodes;
  std::vector<std::pair<Node*, size_t>> stack;  // (node, next edge to visit); iterative for deep graphs
  std::unordered_set<const Node*> seen;
  for (const Edge& root : root_edges) {
    if (!root.function || !seen.insert(root.function.get()).second) continue;
    stack.emplace_back(root.function.get(), 0);
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      const std::vector<Edge>& edges = n->next_edges();
      if (next < edges.size()) {
        Node* child = edges[next++].function.get();
        if (child && seen.insert(child).second) stack.emplace_back(child, 0);
        continue;
      }
      nodes.push_back(n);
      stack.pop_back();
    }
  }
  return nodes;
}

std::string node_label(const Node& n, const std::map<const TensorImpl*, std::string>& names, const DotOptions& o) {
  std::string label;
  if (const auto* acc = dynamic_cast<const AccumulateGrad*>(&n)) {
    Tensor leaf = acc->variable();
    auto it = leaf.defined() ? names.find(leaf.impl()) : names.end();
    label = it != names.end() ? it->second : "AccumulateGrad";
    label += "\n" + (leaf.defined() ? dot_tensor_summary(leaf) : std::string("(freed leaf)"));
  } else {
    label = n.name();
    for (const auto& [name, note] : o.node_notes)
      if (name == label) label += "\n" + note;
  }
  if (o.show_sequence_nr) label += fmt::format("\nseq {}", n.sequence_nr());
  return label;
}

}  // namespace

std::string to_dot(const std::vector<Tensor>& roots, const DotOptions& o) {
  std::map<const TensorImpl*, std::string> names;
  for (const auto& [name, t] : o.names)
    if (t.defined()) names.emplace(t.impl(), name);

  std::vector<Edge> root_edges;
  for (const Tensor& r : roots) root_edges.push_back(requires_grad(r) ? gradient_edge(r) : Edge{});
  const std::vector<Node*> nodes = reachable_nodes(root_edges);
  std::unordered_map<const Node*, std::string> id;
  for (size_t i = 0; i < nodes.size(); ++i) id.emplace(nodes[i], fmt::format("n{}", i));

  // Nodes and their saved tensors grouped by device, clusters in order of first appearance.
  std::vector<Device> devices;
  std::map<std::string, std::string> cluster_body;
  std::string edges;
  for (const Node* n : nodes) {
    const Device d = n->device();
    if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
    std::string& body = cluster_body[d.str()];
    const bool leaf = dynamic_cast<const AccumulateGrad*>(n) != nullptr;
    body += fmt::format("    {} [label={}, fillcolor={}];\n", id[n], dot_quote(node_label(*n, names, o)),
                        leaf ? "lightblue" : "lightgrey");
    if (o.show_saved) {
      const std::vector<const SavedTensor*> saved = n->saved_tensors();
      for (size_t s = 0; s < saved.size(); ++s) {
        if (!saved[s]->defined()) continue;
        const std::string sid = fmt::format("{}_s{}", id[n], s);
        const Tensor& data = saved[s]->peek();
        const std::string what = saved[s]->released() ? "(freed)"
                                 : saved[s]->packed() ? "(packed by a saved-tensor hook)"
                                                      : dot_tensor_summary(data);
        auto named = data.defined() ? names.find(data.impl()) : names.end();
        const std::string label = fmt::format("saved {}{}{}\n{}", s, saved[s]->is_output() ? " (output)" : "",
                                              named != names.end() ? " = " + named->second : "", what);
        body += fmt::format("    {} [label={}, fillcolor=orange, shape=box, style=\"filled,rounded\"];\n", sid,
                            dot_quote(label));
        edges += fmt::format("  {} -> {} [style=dotted, arrowhead=none];\n", sid, id[n]);
      }
    }
    const std::vector<Edge>& next = n->next_edges();
    for (size_t i = 0; i < next.size(); ++i) {
      if (!next[i].function) continue;
      const Node* from = next[i].function.get();
      const std::string label =
          from->num_outputs() > 1 ? fmt::format("{}\u2192{}", next[i].input_nr, i) : fmt::format("{}", i);
      edges += fmt::format("  {} -> {} [label={}{}];\n", id[from], id[n], dot_quote(label),
                           n->creates_view() ? ", style=dashed" : "");
    }
  }

  std::string out = fmt::format("digraph {} {{\n", dot_quote(o.graph_name));
  out += "  node [shape=box, style=filled, fontname=\"Helvetica\", fontsize=10];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  for (const Device& d : devices) {
    out += fmt::format("  subgraph {} {{\n    label={};\n    style=rounded;\n    color=grey50;\n",
                       dot_quote(dot_cluster_id(d)), dot_quote(d.str()));
    out += cluster_body[d.str()];
    out += "  }\n";
  }
  // Roots: output tensors, with an edge from the node that made each.
  for (size_t r = 0; r < roots.size(); ++r) {
    const std::string name = r < o.root_names.size() ? o.root_names[r] : fmt::format("output {}", r);
    out += fmt::format("  r{} [label={}, fillcolor=darkolivegreen1];\n", r,
                       dot_quote(name + "\n" + dot_tensor_summary(roots[r])));
    if (root_edges[r].function) {
      const Node* from = root_edges[r].function.get();
      const std::string label = from->num_outputs() > 1 ? fmt::format("{}", root_edges[r].input_nr) : std::string();
      out += fmt::format("  {} -> r{}{};\n", id[from], r, label.empty() ? "" : " [label=" + dot_quote(label) + "]");
    }
  }
  out += edges;
  out += "}\n";
  return out;
}

}  // namespace wick::autograd
