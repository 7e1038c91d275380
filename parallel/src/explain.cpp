// explain_replicate and the DataParallel step picture (wick/parallel/explain.h).
#include "wick/parallel/explain.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>
#include <unordered_map>

#include "wick/autograd/dot.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/meta.h"
#include "wick/core/error.h"
#include "wick/nn/dot.h"
#include "wick/parallel/comm.h"
#include "wick/parallel/data_parallel.h"

namespace wick::parallel {

using autograd::dot_quote;
using autograd::dot_tensor_summary;
using nn::Module;

namespace {

// Every dotted name each tensor has (tied tensors have several), in walk order.
std::map<const TensorImpl*, std::vector<std::string>> tensor_names(const Module& root) {
  std::map<const TensorImpl*, std::vector<std::string>> names;
  for (const auto& [path, m] : root.named_modules()) {
    const std::string dot = path.empty() ? "" : path + ".";
    for (const auto& e : m->parameter_table())
      if (e.value.defined()) names[e.value.impl()].push_back(dot + e.name);
    for (const auto& e : m->buffer_table())
      if (e.value.defined()) names[e.value.impl()].push_back(dot + e.name);
  }
  return names;
}

std::string entries(const std::vector<std::string>& names, const std::vector<int32_t>& index) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < names.size(); ++k) parts.push_back(fmt::format("{}\u2192{}", names[k], index[k]));
  return fmt::format("{}", fmt::join(parts, ", "));
}

template <class Table>
std::vector<std::string> entry_names(const Table& table) {
  std::vector<std::string> r;
  for (const auto& e : table) r.push_back(e.name);
  return r;
}

// One row per bucket of a broadcast of `tensors` (indices into `index_of` for the labels).
std::string bucket_rows(const std::string& what, const std::vector<Tensor>& tensors, const std::vector<size_t>& ids,
                        const std::vector<Device>& devices, const char* on_source) {
  std::string out;
  const auto buckets = comm::bucket_indices(tensors, comm::kDefaultBufferSize);
  std::vector<std::string> devs;
  for (size_t d = 0; d < devices.size(); ++d)
    devs.push_back(d == 0 ? fmt::format("{} ({})", devices[d], on_source) : devices[d].str());
  for (size_t b = 0; b < buckets.size(); ++b) {
    size_t bytes = 0;
    int64_t offset = 0;
    std::vector<std::string> parts;
    for (size_t i : buckets[b]) {
      parts.push_back(fmt::format("{} @{}", ids[i], offset));
      offset += tensors[i].numel();
      bytes += tensors[i].nbytes();
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", what, b, tensors[buckets[b][0]].dtype(), bytes,
                       fmt::join(parts, ", "), fmt::join(devs, ", "));
  }
  return out;
}

std::string profile_row(const char* call, const ReplicateProfile& p) {
  return fmt::format("| {} | {} | {:.1f} | {:.1f} | {:.1f} | {} | {} | {} |\n", call, p.cache_hit ? "hit" : "miss",
                     1e6 * p.plan_seconds, 1e6 * p.broadcast_seconds, 1e6 * p.shells_seconds, p.num_modules,
                     p.num_tensors, p.bytes_moved);
}

}  // namespace

ReplicateExplanation explain_replicate(const std::shared_ptr<Module>& module, const std::vector<Device>& devices) {
  WICK_CHECK(module != nullptr, "explain_replicate: the module is null");
  WICK_CHECK(!devices.empty(), "explain_replicate: expected at least one device to replicate to");
  const ReplicateIndexMaps maps = replicate_index_maps(module);
  const auto names = tensor_names(*module);
  auto name_of = [&](const Tensor& t) {
    auto it = names.find(t.impl());
    return it == names.end() ? std::string("?") : fmt::format("{}", fmt::join(it->second, " = "));
  };
  std::unordered_map<const Module*, std::string> path_of;
  for (const auto& [path, m] : module->named_modules()) path_of.emplace(m.get(), path.empty() ? "(root)" : path);

  ReplicateExplanation ex;
  std::string& t = ex.tables;
  t += fmt::format("replicate onto {} device(s): {}\n\n", devices.size(), fmt::join(devices, ", "));
  t += "Modules, in pre-order, each once (a child registered twice is one entry):\n\n";
  t += "| module index | module | type |\n| --- | --- | --- |\n";
  for (size_t i = 0; i < maps.modules.size(); ++i)
    t += fmt::format("| {} | {} | {} |\n", i, path_of[maps.modules[i].module], maps.modules[i].module->name());
  t += "\nParameters, deduplicated in the same walk (tied tensors are one entry):\n\n";
  t += "| param index | tensor | shape, dtype |\n| --- | --- | --- |\n";
  for (size_t i = 0; i < maps.params.size(); ++i)
    t += fmt::format("| {} | {} | {} |\n", i, name_of(maps.params[i]), dot_tensor_summary(maps.params[i]));
  t += "\nBuffers:\n\n| buffer index | tensor | shape, dtype | requires grad |\n| --- | --- | --- | --- |\n";
  for (size_t i = 0; i < maps.buffers.size(); ++i)
    t += fmt::format("| {} | {} | {} | {} |\n", i, name_of(maps.buffers[i]), dot_tensor_summary(maps.buffers[i]),
                     autograd::requires_grad(maps.buffers[i]) ? "yes" : "no");
  t += "\nEach module's table entries become indices (-1 is None):\n\n";
  t += "| module | children | parameters | buffers |\n| --- | --- | --- | --- |\n";
  for (size_t i = 0; i < maps.modules.size(); ++i) {
    const auto& row = maps.modules[i];
    t += fmt::format("| {} {} | {} | {} | {} |\n", i, path_of[row.module],
                     entries(entry_names(row.module->child_table()), row.children),
                     entries(entry_names(row.module->parameter_table()), row.params),
                     entries(entry_names(row.module->buffer_table()), row.buffers));
  }
  // The bucket plan of each broadcast, as replicate groups the tensors.
  std::vector<Tensor> rg, not_rg;
  std::vector<size_t> rg_ids, not_rg_ids, param_ids;
  for (size_t i = 0; i < maps.params.size(); ++i) param_ids.push_back(i);
  for (size_t i = 0; i < maps.buffers.size(); ++i) {
    const bool g = autograd::requires_grad(maps.buffers[i]);
    (g ? rg : not_rg).push_back(maps.buffers[i]);
    (g ? rg_ids : not_rg_ids).push_back(i);
  }
  t += fmt::format(
      "\nBroadcast bucket plan (Note [Bucketing rule], buffer_size {} bytes; tensors listed as index "
      "@ element offset in the bucket):\n\n",
      comm::kDefaultBufferSize);
  t += "| broadcast | bucket | dtype | bytes | tensors | devices |\n| --- | --- | --- | --- | --- | --- |\n";
  t += bucket_rows("parameters (Broadcast)", maps.params, param_ids, devices, "source: aliases, no copy");
  t += bucket_rows("buffers requiring grad (Broadcast)", rg, rg_ids, devices, "source: aliases, no copy");
  t += bucket_rows("other buffers (broadcast_coalesced, detached)", not_rg, not_rg_ids, devices,
                   "source: the tensors themselves");

  // The profile: a first call with no cached plan, then a second one.
  clear_replicate_cache();  // a cache only: frees work, never changes a result
  ReplicateProfile first, second;
  (void)replicate(module, devices, false, &first);
  const auto replicas = replicate(module, devices, false, &second);
  ex.profile =
      "| call | index maps | plan (us) | broadcast (us) | shells (us) | modules | tensors | bytes moved |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  ex.profile += profile_row("first", first) + profile_row("second", second);

  // The picture: original, Broadcast, one cluster per replica.
  std::string& d = ex.replicas_dot;
  d += "digraph \"replicate\" {\n  rankdir=LR;\n  compound=true;\n";
  d += "  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n";
  std::vector<std::pair<std::string, Tensor>> original_ids;
  d += fmt::format("  subgraph \"cluster_original\" {{\n  label={};\n  style=rounded;\n  color=grey50;\n",
                   dot_quote(fmt::format("original on {}", devices[0])));
  d += nn::dot_module_tree(*module, "o_", "original", &original_ids);
  d += "  }\n";
  std::unordered_map<const TensorImpl*, std::string> original_id;
  for (const auto& [id, ten] : original_ids) original_id.emplace(ten.impl(), id);
  // The Broadcast node(s): the grad_fn of the replicas' parameters.
  std::map<const autograd::Node*, std::string> bcast_id;
  std::vector<const autograd::Node*> bcast_order;  // first seen first (never pointer order)
  std::string edges;
  std::set<size_t> detached_sources;
  for (size_t j = 0; j < replicas.size(); ++j) {
    std::vector<std::pair<std::string, Tensor>> ids;
    const std::string prefix = fmt::format("r{}_", j);
    d += fmt::format("  subgraph {} {{\n  label={};\n  style=rounded;\n  color=grey50;\n",
                     dot_quote(autograd::dot_cluster_id(devices[j]) + fmt::format("_r{}", j)),
                     dot_quote(fmt::format("replica {} on {}", j, devices[j])));
    d += nn::dot_module_tree(*replicas[j], prefix, fmt::format("replica {}", j), &ids);
    for (size_t k = 0; k < ids.size() && k < original_ids.size(); ++k) {
      const Tensor& copy = ids[k].second;
      const Tensor& orig = original_ids[k].second;
      if (copy.is_same(orig)) {
        d += fmt::format("  {} [xlabel=\"the original tensor\", peripheries=2, color=red];\n", ids[k].first);
      } else if (copy.impl()->storage.get() == orig.impl()->storage.get()) {
        d += fmt::format("  {} [xlabel=\"alias of the original\", peripheries=2, color=red];\n", ids[k].first);
      }
      const autograd::AutogradMeta* meta = autograd::get_meta(copy);
      if (meta && meta->grad_fn) {
        const autograd::Node* node = meta->grad_fn.get();
        auto [it, fresh] = bcast_id.emplace(node, fmt::format("bcast{}", bcast_id.size()));
        if (fresh) {
          bcast_order.push_back(node);
          for (size_t i = 0; i < node->next_edges().size(); ++i) {
            const auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(node->next_edges()[i].function.get());
            if (!acc) continue;
            auto o = original_id.find(acc->variable().impl());
            if (o != original_id.end())
              edges += fmt::format("  {} -> {} [label=\"in {}\"];\n", o->second, it->second, i);
          }
        }
        edges += fmt::format("  {} -> {} [label=\"out {}\"];\n", it->second, ids[k].first, meta->output_nr);
      } else {  // broadcast detached (replica 0: the original tensor itself)
        if (detached_sources.insert(k).second)
          edges += fmt::format("  {} -> bcast_detached [style=dashed];\n", original_ids[k].first);
        edges += fmt::format("  bcast_detached -> {} [style=dashed];\n", ids[k].first);
      }
    }
    d += "  }\n";
  }
  for (const autograd::Node* node : bcast_order)
    d += fmt::format("  {} [label={}, shape=box, style=filled, fillcolor=orange];\n", bcast_id.at(node),
                     dot_quote(fmt::format("{}\n(backward: ReduceAddCoalesced onto {})", node->name(), devices[0])));
  if (!detached_sources.empty())
    d += "  bcast_detached [label=\"broadcast_coalesced\\n(detached: buffers)\", shape=box, style=filled, "
         "fillcolor=khaki];\n";
  d += edges + "}\n";
  return ex;
}

std::string data_parallel_step_dot(const std::shared_ptr<Module>& module, const Tensor& input,
                                   const std::vector<Device>& devices) {
  auto dp = std::make_shared<DataParallel>(module, devices);
  Tensor loss = dp->forward(input).sum();
  autograd::DotOptions o = nn::dot_options(*module);
  o.names.emplace_back("input", input);
  o.root_names = {"loss"};
  o.graph_name = "data_parallel_step";
  // The devices DataParallel chose (devices, or default_device_ids() when empty; none: a plain call).
  const std::vector<Device>& used = dp->device_ids();
  const std::string onto = used.empty() ? std::string("no device") : fmt::format("{}", used[0]);
  o.node_notes = {{"Broadcast", fmt::format("backward: ReduceAddCoalesced onto {}", onto)},
                  {"Scatter", "backward: Gather"},
                  {"Gather", "backward: Scatter"}};
  return autograd::to_dot({loss}, o);
}

}  // namespace wick::parallel
