// replicate (Note [replicate through index maps], Note [Replicas are fresh copies]).
#include "wick/parallel/replicate.h"

#include <atomic>
#include <ctime>
#include <list>
#include <mutex>
#include <unordered_map>

#include "wick/autograd/meta.h"
#include "wick/core/error.h"
#include "wick/core/trace.h"
#include "wick/parallel/comm.h"
#include "wick/parallel/functions.h"

namespace wick::parallel {

using nn::Module;

namespace {

// The calling thread's CPU time, in seconds (ReplicateProfile; meaningful on a loaded machine).
double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The index maps of one module tree (step 1), plus the pool of free shell sets.
struct Plan {
  std::vector<Module*> modules;    // pre-order, each module once; modules[0] is the root
  std::vector<uint64_t> versions;  // structure_version() of each module when the plan was made
  struct Maps {
    std::vector<int32_t> children, params, buffers;  // table entry -> index (-1: None)
  };
  std::vector<Maps> maps;
  size_t num_params = 0, num_buffers = 0;
  std::vector<long> expected_refs;  // use_count of an idle shell: 1 (the set) + parent entries

  std::mutex mutex;
  std::vector<std::vector<std::shared_ptr<Module>>> free_sets;  // idle shells, one vector per replica
  static constexpr size_t kMaxFreeSets = 64;
  std::atomic<bool> reusable{true};  // false once a module of the tree refused assign_from
};

std::shared_ptr<Plan> build_plan(const std::shared_ptr<Module>& root) {
  auto plan = std::make_shared<Plan>();
  std::unordered_map<const Module*, int32_t> module_index;
  std::unordered_map<const TensorImpl*, int32_t> param_index, buffer_index;
  // Iterative pre-order DFS (children in table order), each module once.
  std::vector<Module*> stack{root.get()};
  while (!stack.empty()) {
    Module* m = stack.back();
    stack.pop_back();
    if (!module_index.emplace(m, static_cast<int32_t>(plan->modules.size())).second) continue;
    plan->modules.push_back(m);
    const auto& kids = m->child_table();
    for (auto it = kids.rbegin(); it != kids.rend(); ++it)
      if (it->value && !module_index.count(it->value.get())) stack.push_back(it->value.get());
  }
  const size_t n = plan->modules.size();
  plan->versions.resize(n);
  plan->maps.resize(n);
  plan->expected_refs.assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    Module* m = plan->modules[i];
    plan->versions[i] = m->structure_version();
    Plan::Maps& maps = plan->maps[i];
    for (const auto& e : m->child_table()) {
      const int32_t c = e.value ? module_index.at(e.value.get()) : -1;
      maps.children.push_back(c);
      if (c >= 0) ++plan->expected_refs[static_cast<size_t>(c)];
    }
    for (const auto& e : m->parameter_table()) {
      int32_t k = -1;
      if (e.value.defined())
        k = param_index.emplace(e.value.impl(), static_cast<int32_t>(param_index.size())).first->second;
      maps.params.push_back(k);
    }
    for (const auto& e : m->buffer_table()) {
      int32_t k = -1;
      if (e.value.defined())
        k = buffer_index.emplace(e.value.impl(), static_cast<int32_t>(buffer_index.size())).first->second;
      maps.buffers.push_back(k);
    }
  }
  plan->num_params = param_index.size();
  plan->num_buffers = buffer_index.size();
  return plan;
}

// True when no module of the tree changed its tables since the plan was made. Pre-order, and a
// parent first: a module is only read while the parent that holds it is known unchanged.
bool plan_valid(const Plan& plan, const Module& root) {
  if (plan.modules.empty() || plan.modules[0] != &root) return false;
  for (size_t i = 0; i < plan.modules.size(); ++i)
    if (plan.modules[i]->structure_version() != plan.versions[i]) return false;
  return true;
}

// The cache: a short most-recently-used list of plans keyed by the root module.
struct Cache {
  std::mutex mutex;
  std::list<std::pair<std::weak_ptr<Module>, std::shared_ptr<Plan>>> entries;
  static constexpr size_t kMaxEntries = 16;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: cached shells must not outlive the allocators at exit
  return *c;
}

std::shared_ptr<Plan> plan_for(const std::shared_ptr<Module>& root, bool& hit) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto it = c.entries.begin(); it != c.entries.end();) {
    std::shared_ptr<Module> owner = it->first.lock();
    if (!owner) {
      it = c.entries.erase(it);
      continue;
    }
    if (owner.get() == root.get()) {
      if (plan_valid(*it->second, *root)) {
        hit = true;
        c.entries.splice(c.entries.begin(), c.entries, it);
        return c.entries.front().second;
      }
      c.entries.erase(it);
      break;
    }
    ++it;
  }
  hit = false;
  auto plan = build_plan(root);
  c.entries.emplace_front(root, plan);
  if (c.entries.size() > Cache::kMaxEntries) c.entries.pop_back();
  return plan;
}

// Points every child entry of every shell at the shells of the same replica (step 3).
void wire_children(const Plan& plan, const std::vector<std::shared_ptr<Module>>& shells) {
  for (size_t i = 0; i < shells.size(); ++i) {
    const auto& children = plan.maps[i].children;
    for (size_t k = 0; k < children.size(); ++k)
      if (children[k] >= 0) shells[i]->set_child_entry(k, shells[static_cast<size_t>(children[k])]);
  }
}

// One replica's modules, made afresh: a shallow copy of every original module as it is now.
std::vector<std::shared_ptr<Module>> make_shells(const Plan& plan) {
  const size_t n = plan.modules.size();
  std::vector<std::shared_ptr<Module>> shells(n);
  for (size_t i = 0; i < n; ++i) {
    shells[i] = plan.modules[i]->shallow_copy();
    shells[i]->mark_replica(true);
  }
  wire_children(plan, shells);
  return shells;
}

bool shells_idle(const Plan& plan, const std::vector<std::shared_ptr<Module>>& shells) {
  for (size_t i = 0; i < shells.size(); ++i)
    if (shells[i].use_count() != plan.expected_refs[i]) return false;
  return true;
}

// One replica's modules, each equal to a fresh shallow copy of its original as it is now (Note
// [Replicas are fresh copies]): an idle set from an earlier call, whose tables were reset to the
// original's structure when it was released, with the originals' plain members, options and
// training flags assigned (Module::assign_members_from) and the children rewired; or new copies.
// The caller sets every parameter and buffer entry.
std::vector<std::shared_ptr<Module>> acquire_shells(Plan& plan) {
  std::vector<std::shared_ptr<Module>> set;
  {
    std::lock_guard<std::mutex> lock(plan.mutex);
    while (!plan.free_sets.empty() && set.empty()) {
      set = std::move(plan.free_sets.back());
      plan.free_sets.pop_back();
      if (!shells_idle(plan, set)) set.clear();
    }
  }
  if (!set.empty() && plan.reusable.load(std::memory_order_relaxed)) {
    bool assigned = true;
    for (size_t i = 0; i < set.size() && assigned; ++i) assigned = set[i]->assign_members_from(*plan.modules[i]);
    if (assigned) {
      wire_children(plan, set);
      return set;
    }
    plan.reusable.store(false, std::memory_order_relaxed);  // a type without copy assignment: copy afresh
  }
  return make_shells(plan);
}

// Resets a released replica's tables to its original's structure with no tensors: entries
// that map to a tensor are cleared (freeing the replica's copies), entries that are None in the
// original become None again whatever the replica put there. False when the replica changed
// its tables' sizes (registered something), so the set must not be reused.
bool reset_tables(const Plan& plan, const std::vector<std::shared_ptr<Module>>& shells) {
  for (size_t i = 0; i < shells.size(); ++i) {
    Module& s = *shells[i];
    const Plan::Maps& maps = plan.maps[i];
    if (s.parameter_table().size() != maps.params.size() || s.buffer_table().size() != maps.buffers.size() ||
        s.child_table().size() != maps.children.size())
      return false;
    for (size_t k = 0; k < maps.params.size(); ++k)
      if (s.parameter_table()[k].value.defined()) s.set_parameter_entry(k, Tensor());
    for (size_t k = 0; k < maps.buffers.size(); ++k)
      if (s.buffer_table()[k].value.defined()) s.set_buffer_entry(k, Tensor());
    for (size_t k = 0; k < maps.children.size(); ++k)
      if (maps.children[k] < 0 && s.child_table()[k].value) s.set_child_entry(k, nullptr);
  }
  return true;
}

// Holds one replica's shells while the caller uses them; when the last reference goes, frees
// the replica's tensors and returns the shells to the plan's pool, unless someone still
// references one of them (then they are never reused).
struct Lease {
  std::shared_ptr<Plan> plan;
  std::vector<std::shared_ptr<Module>> shells;
  ~Lease() {
    if (!plan->reusable.load(std::memory_order_relaxed) || !shells_idle(*plan, shells)) return;
    try {
      if (!reset_tables(*plan, shells)) return;
      std::lock_guard<std::mutex> lock(plan->mutex);
      if (plan->free_sets.size() < Plan::kMaxFreeSets) plan->free_sets.push_back(std::move(shells));
    } catch (...) {
      // destructors never throw; the shells are simply not reused
    }
  }
};

// Device-major flat list (Broadcast's layout) -> copies[d][i].
std::vector<std::vector<Tensor>> per_device(std::vector<Tensor>&& flat, size_t n, size_t devices) {
  std::vector<std::vector<Tensor>> out(devices, std::vector<Tensor>(n));
  for (size_t d = 0; d < devices; ++d)
    for (size_t i = 0; i < n; ++i) out[d][i] = std::move(flat[d * n + i]);
  return out;
}

std::vector<std::vector<Tensor>> broadcast_group(const std::vector<Tensor>& tensors, const std::vector<Device>& devices,
                                                 bool differentiable) {
  if (tensors.empty()) return std::vector<std::vector<Tensor>>(devices.size());
  if (!differentiable) return comm::broadcast_coalesced(tensors, devices);
  return per_device(Broadcast::apply(devices, tensors), tensors.size(), devices.size());
}

}  // namespace

std::vector<std::shared_ptr<Module>> replicate(const std::shared_ptr<Module>& module,
                                               const std::vector<Device>& devices, bool detach,
                                               ReplicateProfile* profile) {
  WICK_CHECK(module != nullptr, "replicate: the module is null");
  if (devices.empty()) return {};
  const double t0 = profile ? cpu_seconds() : 0;
  // Note [Tracer]: the call and each phase as events.
  profiler::RecordScope trace_call("replicate", "replicate",
                                   [&] { return fmt::format("\"devices\": {}", devices.size()); });
  profiler::RecordScope trace_phase("replicate", "replicate: index maps");

  // 1. Index maps (cached), and this call's tensors.
  bool hit = false;
  std::shared_ptr<Plan> plan = plan_for(module, hit);
  std::vector<Tensor> params(plan->num_params), buffers(plan->num_buffers);
  for (size_t i = 0; i < plan->modules.size(); ++i) {
    const Module& m = *plan->modules[i];
    const Plan::Maps& maps = plan->maps[i];
    const auto& pt = m.parameter_table();
    for (size_t k = 0; k < pt.size(); ++k)
      if (maps.params[k] >= 0) params[static_cast<size_t>(maps.params[k])] = pt[k].value;
    const auto& bt = m.buffer_table();
    for (size_t k = 0; k < bt.size(); ++k)
      if (maps.buffers[k] >= 0) buffers[static_cast<size_t>(maps.buffers[k])] = bt[k].value;
  }
  auto where = [&](const Tensor& t, const char* what) {
    for (size_t i = 0; i < plan->modules.size(); ++i) {
      const Module& m = *plan->modules[i];
      for (const auto& e : m.parameter_table())
        if (e.value.is_same(t)) return fmt::format("{} '{}' of module {} ({})", what, e.name, i, m.name());
      for (const auto& e : m.buffer_table())
        if (e.value.is_same(t)) return fmt::format("{} '{}' of module {} ({})", what, e.name, i, m.name());
    }
    return std::string(what);
  };
  for (const Tensor& p : params)
    WICK_CHECK(p.device() == devices[0],
               "replicate: every parameter and buffer must be on devices[0] ({}), but {} is on {}", devices[0],
               where(p, "parameter"), p.device());
  for (const Tensor& b : buffers)
    WICK_CHECK(b.device() == devices[0],
               "replicate: every parameter and buffer must be on devices[0] ({}), but {} is on {}", devices[0],
               where(b, "buffer"), b.device());
  // Buffers that require grad (and are differentiated, detach = false) vs the rest.
  std::vector<int32_t> buffer_slot(buffers.size());  // >= 0: index in rg; < 0: -(index in not_rg) - 1
  std::vector<Tensor> buffers_rg, buffers_not_rg;
  for (size_t b = 0; b < buffers.size(); ++b) {
    if (!detach && autograd::requires_grad(buffers[b])) {
      buffer_slot[b] = static_cast<int32_t>(buffers_rg.size());
      buffers_rg.push_back(buffers[b]);
    } else {
      buffer_slot[b] = -static_cast<int32_t>(buffers_not_rg.size()) - 1;
      buffers_not_rg.push_back(buffers[b]);
    }
  }
  const double t1 = profile ? cpu_seconds() : 0;
  trace_phase.end();
  profiler::RecordScope trace_broadcast("replicate", "replicate: broadcast");

  // 2. The broadcasts.
  auto param_copies = broadcast_group(params, devices, !detach);
  auto buffer_rg_copies = broadcast_group(buffers_rg, devices, true);
  auto buffer_copies = broadcast_group(buffers_not_rg, devices, false);
  const double t2 = profile ? cpu_seconds() : 0;
  trace_broadcast.end();
  profiler::RecordScope trace_shells("replicate", "replicate: shells");

  // 3. Shells (fresh copies of the originals as they are now), rewired; 4. on_replicated.
  const size_t n = plan->modules.size();
  std::vector<std::shared_ptr<Module>> out;
  out.reserve(devices.size());
  for (size_t j = 0; j < devices.size(); ++j) {
    auto lease = std::make_shared<Lease>();
    lease->plan = plan;
    lease->shells = acquire_shells(*plan);
    auto& shells = lease->shells;
    for (size_t i = 0; i < n; ++i) {
      Module& s = *shells[i];
      const Plan::Maps& maps = plan->maps[i];
      for (size_t k = 0; k < maps.params.size(); ++k)
        if (maps.params[k] >= 0) s.set_parameter_entry(k, param_copies[j][static_cast<size_t>(maps.params[k])]);
      for (size_t k = 0; k < maps.buffers.size(); ++k) {
        if (maps.buffers[k] < 0) continue;
        const int32_t slot = buffer_slot[static_cast<size_t>(maps.buffers[k])];
        s.set_buffer_entry(k, slot >= 0 ? buffer_rg_copies[j][static_cast<size_t>(slot)]
                                        : buffer_copies[j][static_cast<size_t>(-slot - 1)]);
      }
    }
    // Training flags came with the copies, from each original module directly.
    for (size_t i = 0; i < n; ++i) shells[i]->on_replicated();
    Module* root = shells[0].get();
    out.emplace_back(std::shared_ptr<Module>(lease, root));
  }

  if (profile) {
    profile->plan_seconds = t1 - t0;
    profile->broadcast_seconds = t2 - t1;
    profile->shells_seconds = cpu_seconds() - t2;
    profile->cache_hit = hit;
    profile->num_modules = n;
    profile->num_tensors = params.size() + buffers.size();
    size_t bytes = 0;
    for (const Tensor& p : params) bytes += p.nbytes();
    for (const Tensor& b : buffers) bytes += b.nbytes();
    profile->bytes_moved = bytes * (devices.size() - 1);
  }
  return out;
}

ReplicateIndexMaps replicate_index_maps(const std::shared_ptr<Module>& module) {
  WICK_CHECK(module != nullptr, "replicate_index_maps: the module is null");
  const std::shared_ptr<Plan> plan = build_plan(module);  // not cached: a read-only view
  ReplicateIndexMaps out;
  out.params.resize(plan->num_params);
  out.buffers.resize(plan->num_buffers);
  for (size_t i = 0; i < plan->modules.size(); ++i) {
    const Module& m = *plan->modules[i];
    const Plan::Maps& maps = plan->maps[i];
    out.modules.push_back({&m, maps.children, maps.params, maps.buffers});
    for (size_t k = 0; k < maps.params.size(); ++k)
      if (maps.params[k] >= 0) out.params[static_cast<size_t>(maps.params[k])] = m.parameter_table()[k].value;
    for (size_t k = 0; k < maps.buffers.size(); ++k)
      if (maps.buffers[k] >= 0) out.buffers[static_cast<size_t>(maps.buffers[k])] = m.buffer_table()[k].value;
  }
  return out;
}

void clear_replicate_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.entries.clear();
}

}  // namespace wick::parallel
