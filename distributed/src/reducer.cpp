#include "reducer.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "host_collectives.h"
#include "wick/autograd/engine.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/node.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/core/trace.h"
#include "wick/distributed/bucketing.h"

namespace wick::distributed::detail {

using Clock = std::chrono::steady_clock;

namespace {
// The reducer whose communication hook (or a continuation of its future) this thread is
// running: calls back into that reducer would wait for its own lock.
thread_local const Reducer* t_hook_of = nullptr;

struct InHook {
  const Reducer* previous;
  explicit InHook(const Reducer* r) : previous(t_hook_of) { t_hook_of = r; }
  ~InHook() { t_hook_of = previous; }
  InHook(const InHook&) = delete;
  InHook& operator=(const InHook&) = delete;
};
}  // namespace

std::unique_lock<std::mutex> Reducer::locked() const {
  WICK_CHECK_STATE(t_hook_of != this,
                   "DistributedDataParallel: a communication hook called back into its own DistributedDataParallel "
                   "(forward, backward, no_sync, join or its statistics); a hook may only communicate and compute on "
                   "the bucket it was given (Note [Communication hooks])");
  return std::unique_lock<std::mutex>(mutex_);
}

Reducer::Reducer(std::vector<Tensor> params, std::vector<std::string> names, std::shared_ptr<ProcessGroup> group,
                 std::vector<int64_t> size_limits, bool find_unused_parameters, bool gradient_as_bucket_view,
                 bool static_graph)
    : params_(std::move(params)),
      names_(std::move(names)),
      group_(std::move(group)),
      find_unused_(find_unused_parameters),
      bucket_view_(gradient_as_bucket_view),
      static_graph_(static_graph),
      size_limits_(std::move(size_limits)) {
  divisor_ = group_->size();
  // Reverse registration order: roughly the order backward produces the gradients, until the
  // first synchronised backward shows the real one (Note [Bucket rebuild]).
  build_buckets(reverse_registration_order());
  arrival_.assign(params_.size(), 0);
  ready_.assign(params_.size(), 0);
  used_.assign(params_.size(), 0);
  unused_.assign(params_.size(), 0);
  used_unsynced_.assign(params_.size(), 0);
  grad_count_.assign(params_.size(), 0);
  reset_iteration_locked();
}

std::vector<size_t> Reducer::reverse_registration_order() const {
  std::vector<size_t> order(params_.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = params_.size() - 1 - k;
  return order;
}

void Reducer::build_buckets(const std::vector<size_t>& order) {
  std::vector<Tensor> ordered;
  ordered.reserve(order.size());
  for (size_t p : order) ordered.push_back(params_[p]);
  const auto assignment = compute_bucket_assignment_by_size(ordered, size_limits_);
  std::vector<Bucket> buckets;
  std::vector<std::vector<size_t>> bucket_params;
  std::vector<std::pair<size_t, size_t>> where(params_.size());
  for (const auto& indices : assignment) {
    Bucket b;
    int64_t numel = 0;
    for (size_t k : indices) {
      const size_t p = order[k];
      where[p] = {buckets.size(), b.params.size()};
      b.params.push_back(p);
      b.offsets.push_back(numel);
      numel += params_[p].numel();
    }
    const Tensor& first = params_[b.params.front()];
    b.flat = zeros({numel}, TensorOptions(first.dtype()).device(first.device()));
    b.pending = b.params.size();
    bucket_params.push_back(b.params);
    buckets.push_back(std::move(b));
  }
  if (!buckets_.empty()) {  // a rebuild: gradients that are views of the old buckets move with their values
    NoGradGuard no_grad;
    for (size_t p = 0; p < params_.size(); ++p) {
      const Tensor old_slot = slot(where_[p].first, where_[p].second);
      if (!grad_is_slot(p, old_slot)) continue;
      const Bucket& nb = buckets[where[p].first];
      Tensor new_slot = nb.flat.narrow(0, nb.offsets[where[p].second], params_[p].numel()).view(params_[p].sizes());
      new_slot.copy_(old_slot);
      params_[p].set_grad(new_slot);
    }
  }
  buckets_ = std::move(buckets);
  bucket_params_ = std::move(bucket_params);
  where_ = std::move(where);
}

void Reducer::rebuild_buckets_locked(const std::vector<double>& arrival) {
  // Note [Bucket rebuild]
  // The buckets are first laid out over the parameters in reverse registration order, a guess
  // at the order backward produces their gradients. PyTorch rebuilds them once, after the first
  // iteration, in the order the gradients became ready on rank 0, so that a model whose layers
  // are registered in another order than they run (a head registered first, say) does not keep a
  // first bucket that completes only at the end of backward: buckets launch strictly in order,
  // so one late bucket holds back every later one. wick does the same at the end of the first
  // synchronised backward (without find_unused_parameters, whose graph walk marks unused
  // parameters ready in index order; with static_graph, whose first backward counts every
  // gradient): each rank numbers its parameters by the arrival of their last gradient (0 for
  // none: they are marked ready first from then on), the numbers are all-reduced (summed) and
  // every rank sorts by the sums, ties in reverse registration order. Every rank computes the
  // same layout from the same sums, where PyTorch broadcasts rank 0's: a joined rank, which may
  // be rank 0, adds zeros (Reducer::shadow_backward) and still gets the layout. The buckets then
  // keep it for good. A parameter whose .grad is a view of its slot (gradient_as_bucket_view)
  // gets a view of its new slot with the same values.
  const std::vector<double> summed = sum_on_cpu(*group_, arrival, CollectiveTag{iteration_, -2});
  std::vector<size_t> order = reverse_registration_order();
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return summed[a] < summed[b]; });
  rebuilt_ = true;
  build_buckets(order);
}

Reducer::~Reducer() {
  for (auto& h : hooks_) h.remove();
}

void Reducer::install_hooks() {
  std::weak_ptr<Reducer> weak = weak_from_this();
  for (size_t i = 0; i < params_.size(); ++i) {
    hooks_.push_back(params_[i].register_post_accumulate_grad_hook([weak, i](const Tensor&) {
      if (auto self = weak.lock()) self->on_gradient_ready(i);
    }));
  }
}

Tensor Reducer::slot(size_t bucket, size_t k) const {
  const Bucket& b = buckets_[bucket];
  const Tensor& p = params_[b.params[k]];
  return b.flat.narrow(0, b.offsets[k], p.numel()).view(p.sizes());
}

bool Reducer::grad_is_slot(size_t param, const Tensor& slot) const {
  const Tensor& g = params_[param].grad();
  return g.defined() && g.data_ptr() == slot.data_ptr() && g.is_contiguous();
}

void Reducer::detach_grad_from_slot(size_t param, const Tensor& slot) {
  if (bucket_view_ && grad_is_slot(param, slot)) params_[param].set_grad(native::clone(slot));
}

bool Reducer::sync() const {
  auto lock = locked();
  return sync_;
}

void Reducer::set_sync(bool on) {
  auto lock = locked();
  sync_ = on;
}

void Reducer::set_divisor(int64_t divisor) {
  WICK_CHECK(divisor >= 1 && divisor <= group_->size(),
             "DistributedDataParallel: gradient divisor {} is outside [1, {}] (the world size)", divisor,
             group_->size());
  auto lock = locked();
  divisor_ = divisor;
}

void Reducer::set_comm_hook(CommHook hook) {
  auto lock = locked();
  WICK_CHECK_STATE(!comm_hook_,
                   "DistributedDataParallel::register_comm_hook: a communication hook is already registered; register "
                   "one hook, once (PyTorch: register_comm_hook can only be called once)");
  WICK_CHECK_STATE(!in_backward_,
                   "DistributedDataParallel::register_comm_hook: called during a backward; register the hook between "
                   "iterations, on every rank at the same point");
  comm_hook_ = std::move(hook);
}

void Reducer::reset_iteration_locked() {
  std::fill(ready_.begin(), ready_.end(), 0);
  std::fill(used_.begin(), used_.end(), 0);
  std::fill(used_unsynced_.begin(), used_unsynced_.end(), 0);
  std::fill(grad_count_.begin(), grad_count_.end(), 0);
  std::fill(arrival_.begin(), arrival_.end(), 0.0);
  arrivals_ = 0;
  for (auto& b : buckets_) {
    b.pending = b.params.size();
    b.work.reset();
    b.future.reset();
  }
  next_bucket_ = 0;
  in_backward_ = false;
  unused_marked_ = false;
}

bool Reducer::prepare_for_forward() {
  auto lock = locked();
  WICK_CHECK_STATE(broken_.empty(), "{}", broken_);
  iteration_sync_ = sync_;
  if (in_backward_) {
    // A backward failed after its first gradient hook and before its end callback (an exception
    // in a node or a hook). This rank launched next_bucket_ all-reduces; another rank may have
    // launched more or fewer, so every later collective would pair with a different bucket or
    // step on the other ranks, silently when the sizes agree. Nothing can realign them: this DDP
    // refuses to go on, as PyTorch's does ("Expected to have finished reduction in the prior
    // iteration").
    broken_ = fmt::format(
        "DistributedDataParallel: Expected to have finished reduction in the prior iteration before starting a new "
        "one. A backward on rank {} did not finish (an exception inside it?) after launching {} of its {} gradient "
        "buckets. The other ranks may have launched more or fewer, so the ranks' collectives no longer pair; this "
        "DistributedDataParallel cannot go on. Restart the job from the last checkpoint",
        group_->rank(), next_bucket_, buckets_.size());
    reset_iteration_locked();
    WICK_FAIL_T(StateError, "{}", broken_);
  }
  if (unfinished_.empty()) {
    if (iteration_sync_) ++iteration_;  // Note [Tagged buckets]
    return iteration_sync_;
  }
  // Note [An unfinished reduction is final]
  // Without find_unused_parameters, a parameter that got no gradient left its bucket, and every
  // bucket after it, unreduced: that backward's .grad were this rank's own for those, and the
  // other ranks may have launched more buckets than this one (a parameter unused here only), so
  // the ranks' collectives may no longer pair. Reporting it once and carrying on trained on
  // unsynchronised gradients and let the ranks drift apart; so, as PyTorch's
  // ensure_prior_reduction_finished raises at every later forward with grad, this error is
  // sticky: the DDP refuses every later forward with grad (forwards without grad still run).
  std::string names;
  for (size_t k = 0; k < unfinished_.size() && k < 8; ++k)
    names += fmt::format("{}'{}' (index {})", k ? ", " : "", names_[unfinished_[k]], unfinished_[k]);
  if (unfinished_.size() > 8) names += fmt::format(" and {} more", unfinished_.size() - 8);
  unfinished_.clear();
  if (static_graph_)
    broken_ = fmt::format(
        "DistributedDataParallel: Expected to have finished reduction in the prior iteration before starting a new "
        "one. With static_graph, the previous backward on rank {} gave parameter(s) {} fewer gradients than the "
        "first synchronised backward did, so their buckets (and every bucket after them) were never reduced: the "
        "graph changed, which static_graph does not allow (Note [Static graph]), and the ranks' collectives may no "
        "longer pair, so this DistributedDataParallel cannot go on. For a model whose set of used parameters "
        "changes, construct it without static_graph and with find_unused_parameters = true. Then restart from the "
        "last checkpoint",
        group_->rank(), names);
  else
    broken_ = fmt::format(
        "DistributedDataParallel: Expected to have finished reduction in the prior iteration before starting a new "
        "one. The previous backward on rank {} produced no gradient for parameter(s) {}, so their buckets (and "
        "every bucket after them) were never reduced: that step's gradients were not synchronised, and the ranks' "
        "collectives may no longer pair, so this DistributedDataParallel cannot go on. If your forward does not use "
        "every parameter, pass find_unused_parameters = true in DistributedDataParallelOptions; otherwise make sure "
        "the loss depends on every parameter's output. Then restart from the last checkpoint",
        group_->rank(), names);
  WICK_FAIL_T(StateError, "{}", broken_);
}

void Reducer::prepare_for_backward(const std::vector<Tensor>& outputs) {
  {
    auto lock = locked();
    expect_hooks_ = true;  // Note [One reduction per forward]
  }
  if (!dynamic_find_unused()) return;  // static_graph learns the unused parameters once
  std::unordered_map<const TensorImpl*, size_t> index;
  for (size_t i = 0; i < params_.size(); ++i) index.emplace(params_[i].impl(), i);
  std::vector<char> reached(params_.size(), 0);
  std::vector<autograd::Node*> stack;
  std::unordered_set<autograd::Node*> seen;
  for (const auto& out : outputs) {
    if (!out.defined()) continue;
    if (auto it = index.find(out.impl()); it != index.end()) reached[it->second] = 1;
    if (auto fn = out.grad_fn(); fn && seen.insert(fn.get()).second) stack.push_back(fn.get());
  }
  while (!stack.empty()) {
    autograd::Node* node = stack.back();
    stack.pop_back();
    if (auto* acc = dynamic_cast<autograd::AccumulateGrad*>(node)) {
      Tensor leaf = acc->variable();
      if (leaf.defined())
        if (auto it = index.find(leaf.impl()); it != index.end()) reached[it->second] = 1;
      continue;
    }
    for (const auto& e : node->next_edges())
      if (e.function && seen.insert(e.function.get()).second) stack.push_back(e.function.get());
  }
  auto lock = locked();
  for (size_t i = 0; i < params_.size(); ++i) unused_[i] = !reached[i];
}

void Reducer::on_gradient_ready(size_t index) {
  auto lock = locked();
  // The forward decided (as PyTorch's expect_autograd_hooks_): entering or leaving no_sync()
  // between a forward and its backward changes nothing, so every rank's collectives follow what
  // the forward announced.
  // Note [One reduction per forward]
  // A synchronising forward's graph is reduced once: by the first backward through it. Its
  // end-of-backward callback clears expect_hooks_, so a further backward through the same graph
  // (retain_graph, or a second loss of the same forward) only accumulates into .grad, as under
  // no_sync, and sends nothing until the next synchronising forward. This is PyTorch's rule
  // (finalize_backward clears expect_autograd_hooks_; autograd_hook then returns at once). wick
  // used to run a second full reduction, so a rank that ran an extra backward (a conditional
  // auxiliary loss) left the others waiting for all-reduces they never called until the timeout.
  if (!iteration_sync_ || !expect_hooks_) {  // .grad just accumulates; remember the use for the synced backward
    used_unsynced_[index] = 1;
    return;
  }
  if (!in_backward_) {
    in_backward_ = true;
    std::weak_ptr<Reducer> weak = weak_from_this();
    // The outermost backward's end: a reentrant backward (an activation checkpoint's
    // recomputation) may deliver the first gradients, and the rest arrive after it ends.
    autograd::queue_callback_outermost([weak] {
      if (auto self = weak.lock()) self->finalize_backward();
    });
    // The parameters this backward will not reach: the graph walk's (which may have missed this
    // one: a parameter used outside forward), or those static_graph learned.
    if ((dynamic_find_unused() || (static_graph_ && learned_)) && !unused_marked_) {
      unused_marked_ = true;
      for (size_t i = 0; i < params_.size(); ++i)
        if (unused_[i] && (static_graph_ || i != index)) mark_ready_locked(i, false);
    }
  }
  if (should_rebuild()) arrival_[index] = ++arrivals_;  // Note [Bucket rebuild]
  if (static_graph_) {
    // Note [Static graph]
    // With static_graph (PyTorch's), the model promises the same graph every iteration. The
    // first synchronised backward learns it: each hook only counts its parameter's gradients,
    // and at the end of that backward (finalize_backward) every bucket is filled with the
    // complete .grad and launched in bucket order, then the used map is all-reduced as with
    // find_unused_parameters: the same collectives in the same order as a backward with it.
    // That backward overlaps nothing. Every later one marks the parameters that got no gradient
    // then as unused at its first hook (no graph walk) and a parameter ready when its hook has
    // seen the learned number of gradients: .grad has accumulated all of them by then. So a
    // parameter used inside and outside a reentrant activation checkpoint (two gradients, from
    // two backwards) is reduced once, complete, where without static_graph it is a StateError.
    // A parameter no rank used in the first backward keeps its .grad as it is, as
    // find_unused_parameters does. The first backward also rebuilds the buckets in the order
    // of each parameter's last gradient (Note [Bucket rebuild]).
    // Deviations are StateErrors (PyTorch checks fewer of them): one more gradient than learned
    // during the backward, fewer at the next forward (Note [An unfinished reduction is final]).
    if (learning()) {  // count only: finalize_backward fills and launches every bucket
      ++grad_count_[index];
      return;
    }
    WICK_CHECK_STATE(grad_count_[index] < expected_grads_[index],
                     "DistributedDataParallel: with static_graph, parameter '{}' (index {}) received gradient {} in "
                     "one synchronised backward on rank {}, but the first synchronised backward gave it {}: the graph "
                     "changed, which static_graph does not allow (Note [Static graph]). For a model whose use of its "
                     "parameters changes between iterations, construct it without static_graph (with "
                     "find_unused_parameters = true when some go unused)",
                     names_[index], index, grad_count_[index] + 1, group_->rank(), expected_grads_[index]);
    if (++grad_count_[index] < expected_grads_[index]) return;  // .grad accumulates until the last one
    mark_ready_locked(index, true);
    return;
  }
  // PyTorch's checkAndRaiseMarkedTwiceError lists the same causes, the first one first.
  WICK_CHECK_STATE(
      !ready_[index],
      "DistributedDataParallel: parameter '{}' (index {}) received a second gradient in one synchronised "
      "backward on rank {}, but DDP reduces each parameter once per backward. The common causes: (1) the "
      "parameter is used outside the module's forward (the loss reads it directly): with "
      "find_unused_parameters, the graph walk from the forward's outputs did not reach it, so DDP marked "
      "it unused and reduced it before its real gradient arrived; (2) with find_unused_parameters, two "
      "forwards before one backward: the graph walk of the last forward marked as unused (and reduced) a "
      "parameter only the first forward used, whose real gradient then arrived; (3) a "
      "re-entrant backward (activation checkpointing) that reaches the same parameter twice (construct with "
      "static_graph = true for that, Note [Static graph]). Run one "
      "forward per backward and use the parameters only inside forward",
      names_[index], index, group_->rank());
  mark_ready_locked(index, true);
}

void Reducer::mark_ready_locked(size_t index, bool has_grad) {
  if (ready_[index]) return;
  // A parameter unused in this backward whose .grad holds what no_sync() backwards accumulated
  // is used: its accumulated gradient is averaged even when no rank used it in this backward (a
  // parameter unused by every rank would otherwise keep each rank's own unaveraged .grad, and
  // the ranks' parameters drift apart). PyTorch 1.13 does not count uses under no_sync (its
  // autograd_hook returns before marking local_used_map_: issue #69031); PyTorch >= 2.4 does
  // (PR #124193), and wick follows that fix deliberately.
  if (!has_grad && used_unsynced_[index] && params_[index].grad().defined()) has_grad = true;
  ready_[index] = 1;
  used_[index] = has_grad;
  const auto [b, k] = where_[index];
  NoGradGuard no_grad;
  Tensor s = slot(b, k);
  const Tensor& g = params_[index].grad();
  profiler::RecordScope trace_event("ddp", "gradient into its bucket");
  // With a communication hook the bucket holds the gradients as they are: the hook scales them.
  const double scale = comm_hook_ ? 1.0 : 1.0 / static_cast<double>(divisor_);
  if (has_grad && g.defined()) {
    if (bucket_view_ && grad_is_slot(index, s)) {
      if (scale != 1.0) native::binary_(BinaryOp::Mul, s, Scalar(scale));  // accumulated in place: scale it there
    } else {
      native::scaled_copy_(s, g, scale);
      if (bucket_view_) params_[index].set_grad(s);  // Note [Gradients as bucket views]
    }
  } else if (g.defined()) {
    // Note [A locally unused parameter's .grad]
    // Unused in this backward, but its .grad holds what earlier backwards accumulated (the
    // caller did not zero it): that is this rank's share of the sum, as PyTorch's
    // mark_variable_ready_dense contributes a defined grad whether or not the parameter was used.
    // Zeroing the slot instead gave (m + b0)/W where one process accumulating gives m + b0/W.
    // used_ stays 0: if no rank used it, finalize_backward leaves .grad as it was, so .grad is
    // first given a copy of its own when it is the slot (bucket views).
    detach_grad_from_slot(index, s);
    native::scaled_copy_(s, params_[index].grad(), scale);
  } else {
    s.zero_();  // no .grad: nothing to contribute
  }
  if (--buckets_[b].pending == 0) launch_ready_buckets_locked();
}

void Reducer::launch_ready_buckets_locked() {
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
    Bucket& b = buckets_[next_bucket_++];
    b.launched = Clock::now();
    // Note [Tagged buckets]
    // Each bucket all-reduce carries {the synchronised iteration, its index} in its fingerprint
    // (Note [Collective tags], process_group.h). The iteration counts this DDP's forwards whose
    // backward synchronises, on every rank alike. A rank that skipped a backward (a forward with
    // grad, then none: a NaN guard, say) is one iteration ahead from then on; its buckets have
    // the same shapes as the others', so without the tag they would pair with the previous
    // iteration's and average different steps for the rest of the run. With it every rank's
    // backward raises a ValueError naming both iterations. A joined rank tags its shadow
    // collectives with the iteration the active ranks announce (Note [Join]) and adopts it.
    const CollectiveTag tag{iteration_, static_cast<int64_t>(next_bucket_ - 1)};
    if (comm_hook_)
      b.future = run_hook_locked(next_bucket_ - 1, tag);
    else
      b.work = group_->all_reduce(b.flat, ReduceOp::Sum, tag);
  }
}

std::shared_ptr<Future> Reducer::run_hook_locked(size_t b, CollectiveTag tag) {
  const Bucket& bucket = buckets_[b];
  std::vector<Tensor> params;
  params.reserve(bucket.params.size());
  for (size_t p : bucket.params) params.push_back(params_[p]);
  GradBucket view(static_cast<int64_t>(b), static_cast<int64_t>(buckets_.size()), bucket.flat, std::move(params),
                  bucket.offsets, tag);
  InHook in_hook(this);
  NoGradGuard no_grad;
  profiler::RecordScope trace_event("ddp", "communication hook");
  auto future = comm_hook_(view);
  WICK_CHECK(future != nullptr,
             "DistributedDataParallel: the communication hook returned a null Future for bucket {} on rank {}; return "
             "Future::completed(bucket.buffer()) or the Future of its collective",
             b, group_->rank());
  return future;
}

void Reducer::adopt_hook_result_locked(size_t b) {
  Bucket& bucket = buckets_[b];
  Tensor result;
  {
    InHook in_hook(this);  // the future's continuations are the hook's code
    NoGradGuard no_grad;
    result = bucket.future->wait();
  }
  const Tensor& flat = bucket.flat;
  WICK_CHECK(result.defined() && result.numel() == flat.numel() && result.dtype() == flat.dtype() &&
                 result.device() == flat.device(),
             "DistributedDataParallel: the communication hook's result for bucket {} on rank {} is {}; it must hold "
             "the bucket's {} {} elements on {} (return the bucket's buffer, or a tensor like it)",
             b, group_->rank(),
             result.defined() ? fmt::format("{} elements of {} on {}", result.numel(), result.dtype(), result.device())
                              : std::string("undefined"),
             flat.numel(), flat.dtype(), flat.device());
  if (result.data_ptr() == flat.data_ptr() && result.is_contiguous()) return;  // the buffer itself
  NoGradGuard no_grad;
  bucket.flat.copy_(result.reshape({flat.numel()}));  // copy_ reads a result overlapping the bucket first
}

void Reducer::finalize_backward() {
  auto lock = locked();
  expect_hooks_ = false;  // Note [One reduction per forward]
  struct Reset {          // whatever happens below, the next iteration starts clean
    Reducer* r;
    ~Reset() { r->reset_iteration_locked(); }
  } reset{this};
  const bool learning_now = learning();
  // Parameters the graph walk thought used but that got no gradient (a branch whose gradient
  // was undefined) are unused too. static_graph's first backward fills every bucket now, with
  // each gradient complete, and launches them in bucket order.
  if (dynamic_find_unused() || learning_now)
    for (size_t i = 0; i < params_.size(); ++i)
      if (!ready_[i]) mark_ready_locked(i, learning_now && grad_count_[i] > 0);
  std::vector<double> global_used;
  std::exception_ptr failure;
  if (dynamic_find_unused() || learning_now) {
    std::vector<double> mine(params_.size());
    for (size_t i = 0; i < params_.size(); ++i) mine[i] = used_[i] ? 1.0 : 0.0;
    try {
      global_used = sum_on_cpu(*group_, mine, CollectiveTag{iteration_, -1});
    } catch (...) {
      failure = std::current_exception();  // raised once the buckets are done with their tensors
    }
  }
  const auto wait_start = Clock::now();
  auto wait_event = std::make_optional<profiler::RecordScope>("ddp", "wait for the buckets");
  for (size_t b = 0; b < next_bucket_; ++b) {
    try {
      if (comm_hook_)
        adopt_hook_result_locked(b);
      else
        buckets_[b].work->wait();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
    // A hook's communication time is not known: from its launch to the end of its wait here.
    stats_.allreduce_seconds += comm_hook_ ? std::chrono::duration<double>(Clock::now() - buckets_[b].launched).count()
                                           : buckets_[b].work->seconds();
  }
  wait_event.reset();
  stats_.exposed_wait_seconds += std::chrono::duration<double>(Clock::now() - wait_start).count();
  stats_.buckets += static_cast<int64_t>(next_bucket_);
  stats_.backwards += 1;
  if (failure) std::rethrow_exception(failure);
  if (learning_now) {
    expected_grads_ = grad_count_;
    global_unused_.assign(params_.size(), 0);
    for (size_t i = 0; i < params_.size(); ++i) {
      unused_[i] = grad_count_[i] == 0;
      global_unused_[i] = global_used[i] == 0;
    }
    learned_ = true;
  }
  copy_out_locked(next_bucket_, global_used);
  unfinished_.clear();
  for (size_t i = 0; i < params_.size(); ++i)
    if (!ready_[i]) unfinished_.push_back(i);
  if (should_rebuild()) rebuild_buckets_locked(arrival_);  // every rank alike, finished or not
}

void Reducer::copy_out_locked(size_t buckets, const std::vector<double>& global_used) {
  NoGradGuard no_grad;
  profiler::RecordScope copy_event("ddp", "gradients out of the buckets");
  for (size_t b = 0; b < buckets; ++b) {
    for (size_t k = 0; k < buckets_[b].params.size(); ++k) {
      const size_t p = buckets_[b].params[k];
      // No rank used it: .grad stays as it was.
      if (global_used.empty() ? static_graph_ && global_unused_[p] : global_used[p] == 0) continue;
      Tensor& param = params_[p];
      const Tensor s = slot(b, k);
      if (bucket_view_) {
        if (!grad_is_slot(p, s)) param.set_grad(s);
      } else if (param.grad().defined()) {
        param.mutable_grad().copy_(s);
      } else {
        param.set_grad(s.clone());
      }
    }
  }
}

void Reducer::shadow_backward(int64_t iteration) {
  auto lock = locked();
  iteration_ = iteration;  // the active ranks' count: this rank's next iterations carry on from it
  // The collectives of the active ranks' backward, in their order: every bucket (through the
  // hook when there is one) with zeros, then the used map; then, as finalize_backward, the
  // results become .grad (Note [Join], distributed_data_parallel.cpp).
  std::exception_ptr failure;  // wait for every one launched before raising, so no tensor is still in use
  size_t launched = 0;
  try {
    for (size_t b = 0; b < buckets_.size(); ++b) {
      for (size_t k = 0; k < buckets_[b].params.size(); ++k) detach_grad_from_slot(buckets_[b].params[k], slot(b, k));
      buckets_[b].flat.zero_();
      const CollectiveTag tag{iteration, static_cast<int64_t>(b)};
      if (comm_hook_)
        buckets_[b].future = run_hook_locked(b, tag);
      else
        buckets_[b].work = group_->all_reduce(buckets_[b].flat, ReduceOp::Sum, tag);
      launched = b + 1;
    }
  } catch (...) {
    failure = std::current_exception();  // a hook raised
  }
  std::vector<double> global_used;
  if (dynamic_find_unused() && !failure) {  // enable_join refuses static_graph
    try {
      global_used = sum_on_cpu(*group_, std::vector<double>(params_.size(), 0.0), CollectiveTag{iteration, -1});
    } catch (...) {
      failure = std::current_exception();
    }
  }
  for (size_t b = 0; b < launched; ++b) {
    try {
      if (comm_hook_)
        adopt_hook_result_locked(b);
      else
        buckets_[b].work->wait();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  copy_out_locked(buckets_.size(), global_used);
  // This rank joined before any synchronised backward: the active ranks are in their first,
  // whose end rebuilds the buckets (Note [Bucket rebuild]); no gradient arrived here.
  if (should_rebuild()) rebuild_buckets_locked(std::vector<double>(params_.size(), 0.0));
}

int64_t Reducer::iteration() const {
  auto lock = locked();
  return iteration_;
}

CommStats Reducer::stats() const {
  auto lock = locked();
  return stats_;
}

void Reducer::reset_stats() {
  auto lock = locked();
  stats_ = {};
}

}  // namespace wick::distributed::detail
