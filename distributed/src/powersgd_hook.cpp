// PowerSGD as a communication hook (Note [PowerSGD], powersgd_hook.h).
#include "wick/distributed/powersgd_hook.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"
#include "wick/core/generator.h"
#include "wick/core/lapack.h"
#include "wick/core/native.h"
#include "wick/distributed/ddp_comm_hooks.h"
#include "wick/distributed/init.h"

namespace wick::distributed::ddp_comm_hooks {
namespace {

/// ValueError naming the first option out of range.
void check_options(const PowerSGDState& s, const char* name) {
  WICK_CHECK(s.matrix_approximation_rank >= 1,
             "{}: matrix_approximation_rank is {}; it must be at least 1 (1 to 4 is usual)", name,
             s.matrix_approximation_rank);
  WICK_CHECK(
      !(s.use_error_feedback || s.warm_start) || s.start_powerSGD_iter > 1,
      "{}: start_powerSGD_iter is {} with use_error_feedback = {} and warm_start = {}; it must be > 1 "
      "when either is on (as in PyTorch: DDP rebuilds its buckets at the end of the first synchronised backward, "
      "which would invalidate the memories), or turn both off",
      name, s.start_powerSGD_iter, s.use_error_feedback, s.warm_start);
  WICK_CHECK(s.min_compression_rate >= 0,
             "{}: min_compression_rate is {}; it must be >= 0 (the factor by which a matrix must shrink to "
             "be compressed: below 1 compresses matrices that do not shrink, 0 compresses every one)",
             name, s.min_compression_rate);
  WICK_CHECK(s.orthogonalization_epsilon >= 0 && std::isfinite(s.orthogonalization_epsilon),
             "{}: orthogonalization_epsilon is {}; it must be a finite number >= 0", name, s.orthogonalization_epsilon);
}

/// Orthonormalises the columns of `m` [n, r] (r <= n) in place, as PyTorch 1.13's
/// _orthogonalize: Gram-Schmidt for r <= 2 (each column divided by its norm + epsilon, then
/// removed from the columns after it), else Householder QR's Q (epsilon unused), which stays
/// orthonormal when m's columns are linearly dependent (a batch smaller than the layer).
void orthogonalize(Tensor m, double epsilon) {
  const int64_t cols = m.size(1);
  if (cols > 2) {
    Tensor q, r;
    std::tie(q, r) = native::lapack_qr(m, /*compute_q=*/true, /*complete=*/false);
    m.copy_(q);
    return;
  }
  for (int64_t i = 0; i < cols; ++i) {
    Tensor col = m.narrow(1, i, 1);
    col.div_(col.norm().add(epsilon));  // + 0 changes no bit
    if (i + 1 < cols) {
      Tensor rest = m.narrow(1, i + 1, cols - i - 1);
      rest.sub_(col.mul(rest).sum({0}).mul(col));
    }
  }
}

/// `count` standard normal values for Q's random start: wick's counter-based generator keyed by
/// (random_seed, the number of starts drawn before), the same on every rank.
Tensor random_start(PowerSGDState& s, int64_t count, DType dtype, Device device) {
  const uint64_t key = math::random_bits(s.random_seed, s.random_draws++);
  std::vector<double> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    values[static_cast<size_t>(i)] = math::random_normal(key, static_cast<uint64_t>(i));
  return native::from_blob_copy(values.data(), {count}, kFloat64, kCPU).to(device, dtype);
}

/// One compressed gradient: its matrix view and its P [rows, r] and Q [cols, r] views.
struct Compressed {
  Tensor matrix, p, q;
};

/// What the continuations of one compressed step share.
struct Step {
  std::shared_ptr<PowerSGDState> state;
  std::shared_ptr<ProcessGroup> group;
  int64_t index = 0;
  bool is_last = false;
  Tensor input;       // the bucket's buffer
  Tensor padded;      // batched: the bucket zero-padded to side^2 elements, M's storage
  Tensor input_copy;  // the buffer (batched: padded) after adding the error (use_error_feedback)
  std::vector<Tensor> uncompressed;
  std::vector<Compressed> compressed;
  Tensor p_memory, q_memory;
};

/// ValueError when a memory of bucket `index` does not have `numel` elements.
void check_memory(const std::map<int64_t, Tensor>& dict, const char* name, int64_t index, int64_t numel) {
  auto it = dict.find(index);
  WICK_CHECK(it == dict.end() || it->second.numel() == numel,
             "powerSGD_hook: bucket {} needs {} elements of {} but the state holds {} from an earlier step: the "
             "bucket's layout changed (give each DistributedDataParallel a PowerSGDState of its own)",
             index, numel, name, it->second.numel());
}

/// A step over `bucket`: its state, group, index and buffer.
std::shared_ptr<Step> new_step(const std::shared_ptr<PowerSGDState>& state, std::shared_ptr<ProcessGroup> group,
                               GradBucket& bucket) {
  auto step = std::make_shared<Step>();
  step->state = state;
  step->group = std::move(group);
  step->index = bucket.index();
  step->is_last = bucket.is_last();
  step->input = bucket.buffer();
  return step;
}

/// Steps 1 and 3 once the split is made (Note [PowerSGD]): checks the memories (every check
/// before any change), adds the memorised error to `target` (the bucket, or batched its padded
/// copy), takes the P and Q memories (Q's random start when needed), P = M Q for every
/// compressed matrix at its rank in `ranks`, and counts the statistics; the caller holds
/// s.mutex.
void start(PowerSGDState& s, Step& step, Tensor target, const std::vector<int64_t>& ranks) {
  const DType dtype = target.dtype();
  const Device device = target.device();
  int64_t p_total = 0, q_total = 0, uncompressed = 0;
  for (size_t k = 0; k < step.compressed.size(); ++k) {
    p_total += step.compressed[k].matrix.size(0) * ranks[k];
    q_total += step.compressed[k].matrix.size(1) * ranks[k];
  }
  for (const Tensor& g : step.uncompressed) uncompressed += g.numel();
  if (s.use_error_feedback) check_memory(s.error_dict, "error", step.index, target.numel());
  const bool randomize = !s.warm_start || !s.p_memory_dict.count(step.index);
  if (!randomize) {
    check_memory(s.p_memory_dict, "P memory", step.index, p_total);
    check_memory(s.q_memory_dict, "Q memory", step.index, q_total);
  }

  // Step 1: error feedback.
  if (s.use_error_feedback) {
    auto it = s.error_dict.find(step.index);
    if (it != s.error_dict.end())
      target.add_(it->second);
    else
      s.error_dict[step.index] = native::zeros({target.numel()}, dtype, device);
    step.input_copy = target.clone();
  }

  // Step 3: P and Q memories, Q's start, P = M Q.
  if (randomize) {
    s.p_memory_dict[step.index] = native::empty({p_total}, dtype, device);
    s.q_memory_dict[step.index] = native::empty({q_total}, dtype, device);
  }
  step.p_memory = s.p_memory_dict[step.index];
  step.q_memory = s.q_memory_dict[step.index];
  if (randomize) step.q_memory.copy_(random_start(s, q_total, dtype, device));
  int64_t p_at = 0, q_at = 0;
  for (size_t k = 0; k < step.compressed.size(); ++k) {
    Compressed& c = step.compressed[k];
    const int64_t n = c.matrix.size(0), m = c.matrix.size(1), r = ranks[k];
    c.p = step.p_memory.narrow(0, p_at, n * r).view({n, r});
    c.q = step.q_memory.narrow(0, q_at, m * r).view({m, r});
    p_at += n * r;
    q_at += m * r;
    orthogonalize(c.q, s.orthogonalization_epsilon);
    c.p.copy_(native::mm(c.matrix, c.q));
  }
  s.total_numel_before_compression += step.input.numel();
  s.total_numel_after_compression += uncompressed + p_total + q_total;
}

/// Steps 1 to 3 up to P = M Q (Note [PowerSGD]): each gradient compressed or not; the caller
/// holds s.mutex.
std::shared_ptr<Step> prepare(const std::shared_ptr<PowerSGDState>& state, std::shared_ptr<ProcessGroup> group,
                              GradBucket& bucket) {
  PowerSGDState& s = *state;
  std::shared_ptr<Step> step = new_step(state, std::move(group), bucket);
  std::vector<int64_t> ranks;
  for (const Tensor& g : bucket.gradients()) {
    if (g.dim() >= 2 && g.numel() > 0) {
      const int64_t n = g.size(0), m = g.numel() / n;
      const int64_t r = std::min({n, m, s.matrix_approximation_rank});
      const double compressed_size = static_cast<double>(n + m) * static_cast<double>(r);
      if (compressed_size * s.min_compression_rate < static_cast<double>(n * m)) {
        step->compressed.push_back({g.view({n, m}), Tensor(), Tensor()});
        ranks.push_back(r);
        continue;
      }
    }
    step->uncompressed.push_back(g);
  }
  start(s, *step, step->input, ranks);
  return step;
}

/// Note [Batched PowerSGD]: the bucket padded to M [side, side], then as prepare(); the caller
/// holds s.mutex.
std::shared_ptr<Step> prepare_batched(const std::shared_ptr<PowerSGDState>& state, std::shared_ptr<ProcessGroup> group,
                                      GradBucket& bucket) {
  PowerSGDState& s = *state;
  std::shared_ptr<Step> step = new_step(state, std::move(group), bucket);
  const Tensor& input = step->input;
  const int64_t n = input.numel();
  int64_t side = std::max<int64_t>(1, static_cast<int64_t>(std::sqrt(static_cast<double>(n))));
  while (side * side < n) ++side;  // ceil(sqrt(n)), exact for any n
  while (side > 1 && (side - 1) * (side - 1) >= n) --side;
  step->padded = native::zeros({side * side}, input.dtype(), input.device());
  step->padded.narrow(0, 0, n).copy_(input);
  step->compressed.push_back({step->padded.view({side, side}), Tensor(), Tensor()});
  start(s, *step, step->padded, {std::min(side, s.matrix_approximation_rank)});
  return step;
}

/// Copies the averaged flat `memory` back into the uncompressed gradients, then all-reduces the
/// P's and returns them.
Tensor unpack_and_reduce_p(Step& step, Tensor memory) {
  NoGradGuard no_grad;
  memory.div_(static_cast<double>(step.group->size()));
  int64_t at = 0;
  for (Tensor g : step.uncompressed) {
    g.copy_(memory.narrow(0, at, g.numel()).view(g.sizes()));
    at += g.numel();
  }
  step.group->all_reduce(step.p_memory, ReduceOp::Sum)->wait();
  return step.p_memory;
}

/// Orthogonalises the summed P's, computes Q = M^T P, all-reduces the Q's and returns them.
Tensor reduce_q(Step& step) {
  NoGradGuard no_grad;
  for (Compressed& c : step.compressed) {
    orthogonalize(c.p, step.state->orthogonalization_epsilon);
    c.q.copy_(native::mm(c.matrix.t(), c.p));
  }
  step.group->all_reduce(step.q_memory, ReduceOp::Sum)->wait();
  return step.q_memory;
}

/// Averages the Q's, writes M = P Q^T into the bucket, memorises the error and advances the
/// iteration at the last bucket; returns the bucket.
Tensor decompress(Step& step) {
  NoGradGuard no_grad;
  step.q_memory.div_(static_cast<double>(step.group->size()));
  for (Compressed& c : step.compressed) {
    c.matrix.copy_(native::mm(c.p, c.q.t()));
  }
  // Batched: M was the padded copy; the bucket takes its first numel elements.
  if (step.padded.defined()) step.input.copy_(step.padded.narrow(0, 0, step.input.numel()));
  PowerSGDState& s = *step.state;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.use_error_feedback)
    s.error_dict[step.index] = step.input_copy.sub(step.padded.defined() ? step.padded : step.input);
  if (!s.warm_start) {
    s.p_memory_dict.erase(step.index);
    s.q_memory_dict.erase(step.index);
  }
  if (step.is_last) ++s.iter;
  return step.input;
}

/// The hook of either kind: `name` for errors; `batched` picks Note [Batched PowerSGD].
CommHook make_hook(std::shared_ptr<PowerSGDState> state, const char* name, bool batched) {
  WICK_CHECK(state != nullptr, "{}: the state is null; pass std::make_shared<PowerSGDState>()", name);
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    check_options(*state, name);
  }
  return [state, name, batched](GradBucket& bucket) -> std::shared_ptr<Future> {
    NoGradGuard no_grad;
    const DType dtype = bucket.buffer().dtype();
    WICK_CHECK_TYPE(dtype == kFloat32 || dtype == kFloat64,
                    "{}: bucket {} holds {} gradients; PowerSGD compresses float32 and float64 only (keep those "
                    "parameters in another DDP, or use allreduce_hook)",
                    name, bucket.index(), dtype_name(dtype));
    std::unique_lock<std::mutex> lock(state->mutex);
    check_options(*state, name);
    std::shared_ptr<ProcessGroup> group = state->process_group ? state->process_group : default_group_ptr();
    if (state->iter < state->start_powerSGD_iter) {  // the plain averaged all-reduce
      std::shared_ptr<Future> averaged = allreduce_hook(group)(bucket);
      if (bucket.is_last()) ++state->iter;
      return averaged;
    }
    if (batched) {
      std::shared_ptr<Step> step = prepare_batched(state, group, bucket);
      lock.unlock();
      // P's all-reduce first, under DDP's tag; then Q's, then M = P Q^T.
      std::shared_ptr<Future> reduced =
          Future::of(group->all_reduce(step->p_memory, ReduceOp::Sum, bucket.tag()), step->p_memory);
      return reduced->then([step](const Tensor&) { return reduce_q(*step); })->then([step](const Tensor&) {
        return decompress(*step);
      });
    }
    std::shared_ptr<Step> step = prepare(state, group, bucket);
    lock.unlock();

    // The uncompressed gradients in one flat tensor, all-reduced first under DDP's tag.
    std::vector<Tensor> flat;
    for (const Tensor& g : step->uncompressed) flat.push_back(g.reshape({g.numel()}));
    Tensor memory = flat.empty() ? native::empty({0}, dtype, step->input.device()) : native::cat(flat, 0);
    std::shared_ptr<Future> reduced = Future::of(group->all_reduce(memory, ReduceOp::Sum, bucket.tag()), memory);
    return reduced->then([step](const Tensor& m) { return unpack_and_reduce_p(*step, m); })
        ->then([step](const Tensor&) { return reduce_q(*step); })
        ->then([step](const Tensor&) { return decompress(*step); });
  };
}

}  // namespace

std::tuple<double, int64_t, int64_t> PowerSGDState::compression_stats() const {
  std::lock_guard<std::mutex> lock(mutex);
  const double rate = total_numel_after_compression > 0 ? static_cast<double>(total_numel_before_compression) /
                                                              static_cast<double>(total_numel_after_compression)
                                                        : 0.0;
  return {rate, total_numel_before_compression, total_numel_after_compression};
}

CommHook powerSGD_hook(std::shared_ptr<PowerSGDState> state) {
  return make_hook(std::move(state), "powerSGD_hook", false);
}

CommHook batched_powerSGD_hook(std::shared_ptr<PowerSGDState> state) {
  return make_hook(std::move(state), "batched_powerSGD_hook", true);
}

}  // namespace wick::distributed::ddp_comm_hooks
