#include "wick/distributed/distributed_data_parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "host_collectives.h"
#include "reducer.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/distributed/init.h"
#include "wick/distributed/sync_batch_norm.h"

namespace wick::distributed {

namespace {

// Every rank's description of its parameters, all-gathered: [count, most dims] first, then per
// tensor [dtype, device type, ndim, numel, requires_grad, refused, size0..size(D-1)] where D is
// the most dims any rank has, so that every dim is compared (a 6-D parameter whose last two dims
// are swapped on one rank has the same ndim and numel, and a broadcast would copy its bytes into
// the wrong layout). Every rank compares the same data and raises the same error. `refused` is 1
// where the group cannot move the tensor from this rank (ProcessGroup::check_operand), so that
// such a tensor fails every rank before any broadcast. requires_grad is compared because it
// decides which parameters the reducer buckets: ranks that differ there would reduce different
// buckets.
constexpr int64_t kFixedFields = 6;
constexpr int64_t kRequiresGrad = 4;
constexpr int64_t kRefused = 5;

// "float64 [3, 4]", plus whether it requires grad when `with_grad_flag`.
std::string describe_row(const int64_t* row, bool with_grad_flag) {
  std::string s = fmt::format("{} [", dtype_name(static_cast<DType>(row[0])));
  for (int64_t d = 0; d < row[2]; ++d) s += fmt::format("{}{}", d ? ", " : "", row[kFixedFields + d]);
  s += "]";
  if (with_grad_flag) s += row[kRequiresGrad] ? " requiring grad" : " not requiring grad";
  return s;
}

// Note [Bookkeeping on the group's device]
// DDP's own small collectives (the parameter descriptions checked at construction, join's
// flags and iteration counts, the used-parameter map of find_unused_parameters) are built on
// the CPU, copied to ProcessGroup::device() for the collective (a no-op copy for the mpi
// backend, a small transfer for nccl, which moves CUDA tensors only) and read back on the CPU.
// The buckets themselves live on their parameters' device and never leave it.

// (The helpers: host_collectives.h.)
using detail::gather_on_cpu;

void verify_same_parameters(ProcessGroup& group, const std::vector<Tensor>& params,
                            const std::vector<std::string>& names, size_t param_count) {
  const int world = group.size();
  const int64_t n = static_cast<int64_t>(params.size());
  int64_t most_dims = 0;
  for (const Tensor& p : params) most_dims = std::max<int64_t>(most_dims, p.dim());
  std::vector<int64_t> head{n, most_dims};
  const std::vector<Tensor> heads = gather_on_cpu(group, from_blob(head.data(), {2}, kInt64));
  int64_t width_dims = 0;  // the same on every rank: the maximum over the gathered heads
  for (int r = 0; r < world; ++r) {
    const int64_t* h = heads[r].data_ptr<int64_t>();
    const int64_t* h0 = heads[0].data_ptr<int64_t>();
    WICK_CHECK(h[0] == h0[0],
               "DistributedDataParallel: rank {} has {} parameters and buffers but rank 0 has {}; every rank "
               "must wrap the same model",
               r, h[0], h0[0]);
    width_dims = std::max(width_dims, h[1]);
  }
  const int64_t fields = kFixedFields + width_dims;
  auto what = [&](int64_t i) {
    return fmt::format("{} {} ('{}' here)", static_cast<size_t>(i) < param_count ? "parameter" : "buffer", i,
                       names[static_cast<size_t>(i)]);
  };
  Tensor mine = zeros({std::max<int64_t>(n, 1), fields}, kInt64);
  int64_t* m = mine.data_ptr<int64_t>();
  std::exception_ptr refusal;  // the first tensor of this rank that the group cannot move
  int64_t refused_index = -1;
  for (int64_t i = 0; i < n; ++i) {
    const Tensor& p = params[i];
    int64_t* row = m + i * fields;
    row[0] = static_cast<int64_t>(p.dtype());
    row[1] = static_cast<int64_t>(p.device().type);
    row[2] = p.dim();
    row[3] = p.numel();
    row[kRequiresGrad] = static_cast<size_t>(i) < param_count && p.requires_grad() ? 1 : 0;
    for (int64_t d = 0; d < p.dim(); ++d) row[kFixedFields + d] = p.size(d);
    try {
      group.check_operand("broadcast", p);
    } catch (const Error&) {
      row[kRefused] = 1;
      if (!refusal) {
        refusal = std::current_exception();
        refused_index = i;
      }
    }
  }
  const std::vector<Tensor> all = gather_on_cpu(group, mine);
  // A tensor some rank cannot send or receive fails every rank, the refusing one with its own reason.
  if (refusal) {
    try {
      std::rethrow_exception(refusal);
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("DistributedDataParallel: {} cannot be broadcast from rank 0 by the {} "
                                          "backend, so nothing was copied: ",
                                          what(refused_index), group.backend_name()));
    }
  }
  for (int r = 0; r < world; ++r) {
    const int64_t* rows = all[r].data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i)
      WICK_CHECK(rows[i * fields + kRefused] == 0,
                 "DistributedDataParallel: rank {} cannot broadcast its {} with the {} backend (its error says why), "
                 "so nothing was copied on any rank",
                 r, what(i), group.backend_name());
  }
  const int64_t* ref = all[0].data_ptr<int64_t>();
  for (int r = 1; r < world; ++r) {
    const int64_t* other = all[r].data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t* a = ref + i * fields;
      const int64_t* b = other + i * fields;
      if (std::equal(a, a + fields, b)) continue;
      const bool grad_differs = a[kRequiresGrad] != b[kRequiresGrad];
      WICK_FAIL(
          "DistributedDataParallel: {} is {} on rank {} but {} on rank 0; every rank must wrap the same model "
          "(same parameters and buffers in the same order, shapes, dtypes and requires_grad)",
          what(i), describe_row(b, grad_differs), r, describe_row(a, grad_differs));
    }
  }
}

}  // namespace

DistributedDataParallel::NoSyncGuard::NoSyncGuard(std::shared_ptr<detail::Reducer> reducer)
    : reducer_(std::move(reducer)), previous_(reducer_->sync()) {
  reducer_->set_sync(false);
}

DistributedDataParallel::NoSyncGuard::~NoSyncGuard() { reducer_->set_sync(previous_); }

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                                 DistributedDataParallelOptions options)
    : options_(std::move(options)) {
  WICK_CHECK(module != nullptr, "DistributedDataParallel: the module is null");
  // A cap whose bytes do not fit int64 (about 8.8e12 MB) would make the conversion below UB.
  WICK_CHECK(options_.bucket_cap_mb > 0 && double_fits_int64(options_.bucket_cap_mb * 1024 * 1024),
             "DistributedDataParallel: bucket_cap_mb must be a positive finite number of MB whose bytes fit int64 "
             "(at most 2^43), got {}",
             options_.bucket_cap_mb);
  WICK_CHECK(options_.first_bucket_bytes > 0, "DistributedDataParallel: first_bucket_bytes must be positive, got {}",
             options_.first_bucket_bytes);
  if (!options_.process_group) options_.process_group = default_group_ptr();
  module_ = register_module("module", module);
  ProcessGroup& group = *options_.process_group;

  // Note [Ignored parameters and buffers]
  // options.params_and_buffers_to_ignore names parameters and buffers that stay each rank's own
  // (PyTorch's _ddp_params_and_buffers_to_ignore): they are left out of the construction's
  // comparison and broadcast, of the buckets (no hook: .grad keeps this rank's gradient), of the
  // buffer broadcasts before a forward and of join's final broadcast. Every name must be one of
  // the module's, so a misspelt name is refused rather than silently synchronised.
  ignored_.insert(options_.params_and_buffers_to_ignore.begin(), options_.params_and_buffers_to_ignore.end());
  std::unordered_set<std::string> unmatched = ignored_;  // every ignored name must be the module's
  // Everything rank 0 sends: every parameter (frozen ones too) and buffer not ignored, tied ones
  // once. All of it is compared across ranks before the first broadcast, so a mismatch leaves
  // every rank's module untouched.
  std::vector<Tensor> synced;
  std::vector<std::string> synced_names;
  std::unordered_set<const TensorImpl*> seen;
  auto add = [&](const std::string& name, const Tensor& t) {
    if (ignored_.count(name)) {
      unmatched.erase(name);
      return;
    }
    if (!t.defined() || !seen.insert(t.impl()).second) return;
    synced.push_back(t);
    synced_names.push_back(name);
  };
  for (const auto& [name, p] : module->named_parameters()) add(name, p);
  const size_t param_count = synced.size();
  for (const auto& [name, b] : module->named_buffers()) add(name, b);
  WICK_CHECK(unmatched.empty(),
             "DistributedDataParallel: params_and_buffers_to_ignore names '{}', which is not a parameter or buffer of "
             "the module; use the names of its named_parameters() and named_buffers() (for example '{}')",
             *unmatched.begin(), synced_names.empty() ? std::string("fc.weight") : synced_names[0]);
  verify_same_parameters(group, synced, synced_names, param_count);
  // The reducer's parameters: those of the list that require grad.
  std::vector<Tensor> params;
  std::vector<std::string> names;
  for (size_t i = 0; i < param_count; ++i)
    if (synced[i].requires_grad()) {
      params.push_back(synced[i]);
      names.push_back(synced_names[i]);
    }
  // After the check above, so every rank has the same parameters requiring grad and raises
  // alike, and before anything is copied (PyTorch raises before any collective; wick's check
  // runs first so that no rank raises while another waits in it).
  WICK_CHECK(!params.empty(),
             "DistributedDataParallel is not needed when a module doesn't have any parameter that requires a "
             "gradient (the module has {} parameter(s), none requiring grad): there is nothing to synchronise. Train "
             "it without the wrapper, or unfreeze a parameter with requires_grad_(true) on every rank",
             param_count);
  {
    NoGradGuard no_grad;
    std::vector<std::shared_ptr<Work>> works;
    for (const Tensor& t : synced) works.push_back(group.broadcast(t, 0));
    for (auto& w : works) w->wait();
  }
  const auto cap = static_cast<int64_t>(options_.bucket_cap_mb * 1024 * 1024);
  reducer_ = std::make_shared<detail::Reducer>(
      std::move(params), std::move(names), options_.process_group,
      std::vector<int64_t>{options_.first_bucket_bytes, std::max<int64_t>(cap, 1)}, options_.find_unused_parameters,
      options_.gradient_as_bucket_view, options_.static_graph);
  reducer_->install_hooks();
}

const std::vector<std::vector<size_t>>& DistributedDataParallel::bucket_indices() const {
  return reducer().bucket_indices();
}

std::vector<Tensor> DistributedDataParallel::synced_buffers() const {
  std::vector<Tensor> out;
  for (const auto& [name, b] : module().named_buffers())
    if (b.defined() && !ignored_.count(name)) out.push_back(b);
  return out;
}

std::vector<Tensor> DistributedDataParallel::synced_parameters() const {
  std::vector<Tensor> out;
  for (const auto& [name, p] : module().named_parameters())
    if (!ignored_.count(name)) out.push_back(p);
  return out;
}

void DistributedDataParallel::sync_buffers(const std::vector<Tensor>& buffers, int root) {
  std::vector<std::shared_ptr<Work>> works;
  NoGradGuard no_grad;
  for (const Tensor& b : buffers) works.push_back(options_.process_group->broadcast(b, root));
  for (auto& w : works) w->wait();
}

// Note [Join]
// DistributedDataParallel under a Join (Note [Join context], join.h), for ranks with uneven
// amounts of data. Each forward of a rank still training notifies the Join with the payload
// [sync, buffers, iteration, one-hot of its rank] (sync: 1 when its backward will synchronise,
// i.e. grad mode on and outside no_sync; buffers: 1 when this forward broadcasts the buffers,
// Note [When buffers are broadcast]; iteration: with sync, the reducer's synchronised iteration,
// Note [Tagged buckets] in reducer.cpp, which the joined rank's shadow collectives carry as their
// tag: the sum over the synchronising ranks divided by their number, their common iteration when
// they are in step; when they are not, some of them mismatch it and every rank fails). For each
// such notification a joined rank (join_main_hook) runs what the active ranks' iteration runs:
// the buffer broadcast when they broadcast, then, when they synchronise, every bucket's
// all_reduce with zeros (Reducer::shadow_backward), after which its .grad holds the synchronised
// gradients as the active ranks' do (so a ZeroRedundancyOptimizer in the same Join steps its
// shard with them; PyTorch's join hook discards them). The buffers are broadcast from the
// highest rank still active, as PyTorch's _sync_buffers under join (_find_common_rank: an
// all-reduce MAX where joined ranks pass -1): rank 0 may have joined, and its buffers stopped
// changing then. The one-hot ranks in the sum tell every rank, joined or not, which rank that is.
// Last (join_post_hook), every rank gets the parameters and buffers of the highest last joiner,
// so the models agree again (optimizer states do not: each rank's optimizer stepped only while
// it trained). That is PyTorch's _sync_final_model; every forward, with or without grad,
// notifies, so the last joiners are the ranks with the most forwards, evaluation forwards
// included. With divide_by_initial_world_size false, each notification's count of active ranks
// becomes the divisor of that forward's synchronised gradients (Reducer::set_divisor): the joined
// ranks' zeros then leave the active ranks' average, as PyTorch's reducer divides by the count
// its join notification all-reduced. enable_join()/join() are a Join over this module alone.
DistributedDataParallel::~DistributedDataParallel() { own_join_.reset(); }

void DistributedDataParallel::join_check(const JoinOptions&) const {
  reducer();  // a clone's refusal
  // A synchronised BatchNorm's all_gather is a collective of the forward that a joined rank
  // cannot shadow: the ranks still training would wait for it until the timeout. PyTorch's
  // join does not support SyncBatchNorm either (its documentation says so); wick refuses it.
  const auto modules = module().named_modules();  // kept alive: items() refers into it
  for (const auto& item : modules.items()) {
    const std::string& name = item.first;
    const nn::Module* m = item.second.get();
    WICK_CHECK(!synchronises_batch_norm(*m),
               "DistributedDataParallel join: the {} '{}' synchronises its batch statistics across ranks "
               "(convert_sync_batchnorm), and a rank that has joined cannot take part in its collectives; remove the "
               "synchronisation (set_sync(nullptr)) or give every rank the same number of batches",
               m->name(), name);
  }
  // A rank that joins before the first synchronised backward would shadow static_graph's
  // learning iteration without learning anything itself (Note [Static graph]).
  WICK_CHECK_STATE(!options_.static_graph,
                   "DistributedDataParallel join: this DistributedDataParallel was built with static_graph, which "
                   "join does not support (a rank that has joined cannot learn the graph); build it without "
                   "static_graph (with find_unused_parameters = true when some parameters go unused) or give every "
                   "rank the same number of batches");
}

void DistributedDataParallel::join_started(const JoinOptions& options) {
  divide_by_initial_world_size_ = options.divide_by_initial_world_size;
}

void DistributedDataParallel::join_ended() {
  if (reducer_) reducer_->set_divisor(options_.process_group->size());
}

ProcessGroup& DistributedDataParallel::join_process_group() const { return *options_.process_group; }

size_t DistributedDataParallel::join_payload_size() const {
  return static_cast<size_t>(kJoinPayloadFixed + options_.process_group->size());
}

void DistributedDataParallel::enable_join(bool divide_by_initial_world_size) {
  reducer();          // a clone's refusal
  own_join_.reset();  // enable_join() again: start afresh
  own_join_ = std::make_shared<Join>(std::vector<Joinable*>{this},
                                     JoinOptions{.divide_by_initial_world_size = divide_by_initial_world_size});
}

int DistributedDataParallel::announce_active(bool syncs_buffers, bool backward_syncs) {
  ProcessGroup& group = *options_.process_group;
  std::vector<int64_t> mine(join_payload_size(), 0);
  mine[0] = backward_syncs ? 1 : 0;
  mine[1] = syncs_buffers ? 1 : 0;
  mine[2] = backward_syncs ? reducer().iteration() : 0;
  mine[static_cast<size_t>(kJoinPayloadFixed + group.rank())] = 1;
  const JoinNotification n = notify_join_context(mine);
  reducer().set_divisor(divide_by_initial_world_size_ ? group.size() : n.active);
  return buffer_root_of(n);
}

int DistributedDataParallel::buffer_root_of(const JoinNotification& n) const {
  int root = 0;
  for (int r = 0; r < options_.process_group->size(); ++r)
    if (n.payload[static_cast<size_t>(kJoinPayloadFixed + r)] > 0) root = r;
  return root;
}

void DistributedDataParallel::join_main_hook(const JoinNotification& n) {
  const int64_t syncs = n.payload[0], buffers = n.payload[1];
  if (buffers > 0) sync_buffers(synced_buffers(), buffer_root_of(n));
  if (syncs > 0) reducer().shadow_backward(n.payload[2] / syncs);
  require_forward_param_sync_ = syncs > 0;  // as the active ranks' (PyTorch's join hook does the same)
}

void DistributedDataParallel::join_post_hook(int last_joiner) {
  ProcessGroup& group = *options_.process_group;
  NoGradGuard no_grad;
  std::vector<std::shared_ptr<Work>> works;
  for (const Tensor& p : synced_parameters()) works.push_back(group.broadcast(p, last_joiner));
  for (const Tensor& b : synced_buffers()) works.push_back(group.broadcast(b, last_joiner));
  for (auto& w : works) w->wait();
}

void DistributedDataParallel::join() {
  reducer();  // a clone's refusal
  WICK_CHECK_STATE(own_join_ != nullptr,
                   "DistributedDataParallel::join: call enable_join() on every rank before training (or use a Join "
                   "over this module and call its join())");
  const std::shared_ptr<Join> join = std::move(own_join_);
  join->join();
}

// Note [When buffers are broadcast]
// PyTorch's rule (require_forward_param_sync, DistributedDataParallel.forward and
// will_sync_module_buffers): rank 0's buffers are broadcast before a forward when
// broadcast_buffers is on, the module has buffers, and the previous forward of this DDP ran
// with grad mode on outside no_sync (so its backward synchronised); the first forward counts as
// following such a forward. Training mode plays no part. So the first eval forward after
// training evaluates with rank 0's running statistics on every rank, a window of no_sync
// forwards broadcasts at its first forward only (not at the synchronised forward that closes
// it), and a forward without grad after one without grad broadcasts nothing. Every rank
// follows the same sequence of forwards, so every rank decides alike; a joined rank takes the
// flag from the active ranks' announcements (Note [Join]).
std::vector<Tensor> DistributedDataParallel::buffers_to_sync() const {
  if (!options_.broadcast_buffers || !require_forward_param_sync_) return {};
  return synced_buffers();
}

nn::Value DistributedDataParallel::forward_value(const std::vector<nn::Value>& args) {
  detail::Reducer& r = reducer();
  const bool grad = GradMode::is_enabled();
  // Under join every forward announces itself (as PyTorch's Join.notify_join_context), with what
  // it will run: the buffer broadcast (Note [When buffers are broadcast]), and whether its
  // backward synchronises (grad mode on, outside no_sync), so that a joined rank shadows exactly
  // those collectives.
  const std::vector<Tensor> buffers = buffers_to_sync();  // looked up once per forward
  const bool backward_syncs = grad && r.prepare_for_forward();
  const int buffer_root = join_enabled() ? announce_active(!buffers.empty(), backward_syncs) : 0;
  if (!buffers.empty()) sync_buffers(buffers, buffer_root);
  nn::Value out = module().forward_value(args);
  require_forward_param_sync_ = backward_syncs;
  if (backward_syncs) {
    std::vector<Tensor> outputs;
    out.for_each_tensor([&](const Tensor& t) { outputs.push_back(t); });
    r.prepare_for_backward(outputs);
  }
  return out;
}

detail::Reducer& DistributedDataParallel::reducer() const {
  WICK_CHECK_STATE(reducer_ != nullptr,
                   "DistributedDataParallel: this is a clone or replica of a DistributedDataParallel, which has no "
                   "gradient synchronisation of its own (its parameters are not the ones the original's hooks watch). "
                   "Clone or replicate the wrapped module (module_ptr()) and wrap the copy in its own "
                   "DistributedDataParallel on every rank");
  return *reducer_;
}

void DistributedDataParallel::on_replicated() {
  reducer_.reset();   // a copy must not drive the original's reducer (see reducer())
  own_join_.reset();  // the original's (a copy is in no Join: Joinable's copy constructor)
}

Tensor DistributedDataParallel::forward(const Tensor& input) { return forward_value({nn::Value(input)}).tensor(); }

void DistributedDataParallel::register_comm_hook(CommHook hook) {
  WICK_CHECK(static_cast<bool>(hook),
             "DistributedDataParallel::register_comm_hook: the hook is empty; pass a function of a GradBucket that "
             "returns a Future (ddp_comm_hooks.h has ready-made ones)");
  reducer().set_comm_hook(std::move(hook));
}

CommStats DistributedDataParallel::comm_stats() const { return reducer().stats(); }
void DistributedDataParallel::reset_comm_stats() { reducer().reset_stats(); }

std::string DistributedDataParallel::extra_repr() const {
  return fmt::format("world_size={}, rank={}, buckets={}, bucket_cap_mb={}, find_unused_parameters={}{}{}",
                     options_.process_group->size(), options_.process_group->rank(),
                     reducer_ ? fmt::format("{}", reducer_->bucket_indices().size()) : std::string("none (a copy)"),
                     options_.bucket_cap_mb, options_.find_unused_parameters,
                     options_.gradient_as_bucket_view ? ", gradient_as_bucket_view=true" : "",
                     options_.static_graph ? ", static_graph=true" : "");
}

}  // namespace wick::distributed
