#pragma once
// PowerSGD gradient compression as a DDP communication hook (PyTorch's
// torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook: PowerSGDState and powerSGD_hook).
//
// Note [PowerSGD]
// Before `start_powerSGD_iter` backwards the hook is the plain averaged all-reduce (the bucket
// times 1/world size, all-reduced: DDP's own gradients, bit for bit). From then on, per bucket:
//  1. with error feedback, the error memorised for the bucket last time is added to it;
//  2. every gradient of 2 or more dims is viewed as a matrix M [shape[0], rest]; with
//     r = min(rows, cols, matrix_approximation_rank) it is compressed when
//     (rows + cols) * r * min_compression_rate < rows * cols. The others (0-d and 1-d ones
//     too) are all-reduced uncompressed in one flat tensor (tagged with GradBucket::tag) and
//     divided by the world size;
//  3. for each compressed M: Q [cols, r] (standard normal at the first compressed step of the
//     bucket, or always without warm start; else last step's Q) is orthogonalised, P = M Q,
//     the P's all-reduced (one flat tensor) and orthogonalised, Q = M^T P, the Q's
//     all-reduced (one flat tensor) and divided by the world size, and M = P Q^T.
//     Orthogonalising is PyTorch 1.13's: Gram-Schmidt for r <= 2 (each column divided by its
//     norm + orthogonalization_epsilon), else Householder QR (which stays orthonormal when the
//     columns are dependent, e.g. a weight's gradient over a batch smaller than its rank);
//  4. with error feedback, the bucket's error is (the bucket after step 1) - (the result).
// The iteration counter advances once per backward, when the last bucket (GradBucket::is_last)
// is done. The three all-reduces of a bucket run in that order on every rank; steps 2's
// unpacking to 4 run as Future::then continuations (Note [Communication hooks]).
// Differences from PyTorch 1.13, kept:
//  - Q's random start comes from wick's counter-based generator (generator.h) keyed by
//    random_seed and the number of random starts drawn so far, identical on every rank and
//    independent of the global generator; PyTorch's numpy-seeded stream is not reproduced, so
//    compressed results match PyTorch's only where they do not depend on the start (full rank,
//    or gradients of rank <= matrix_approximation_rank).
//  - min_compression_rate must be >= 0 (PyTorch checks nothing); below 1 it compresses
//    matrices that do not shrink (at full rank they are then reproduced exactly).
//  - 0-d gradients are all-reduced uncompressed (PyTorch's view(shape[0], -1) fails on them).
//  - compression statistics are counted (compression_stats()) but not logged
//    (compression_stats_logging_frequency).
//  - a bucket whose layout changed since its memories were made is a ValueError (PyTorch
//    fails on a shape mismatch, or mixes memories; wick's DDP rebuilds its buckets only before
//    start_powerSGD_iter, Note [Bucket rebuild]).
// The bucket's dtype must be float32 or float64 (a TypeError at every step, before any
// communication).
//
// Note [Batched PowerSGD]
// batched_powerSGD_hook (PyTorch's) compresses each bucket as one square matrix instead of
// gradient by gradient: the flat bucket, zero-padded to side^2 elements with side =
// ceil(sqrt(numel)), is viewed as M [side, side] and approximated at rank
// r = min(side, matrix_approximation_rank) by the same power iteration (one P [side, r] and one
// Q [side, r], two all-reduces: P's under the bucket's tag, then Q's), with error feedback over
// the padded bucket and warm start as above; min_compression_rate plays no part. It ignores the
// gradients' shapes, so it compresses 1-d gradients too and sends fewer, larger messages, at a
// cost in accuracy PyTorch's documentation warns about. r is clamped to side where PyTorch
// would build a P with more columns than rows.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "wick/distributed/comm_hook.h"

namespace wick::distributed::ddp_comm_hooks {

/// PowerSGD's options and per-bucket memories (PyTorch's PowerSGDState). One state serves one
/// DistributedDataParallel; share it through a shared_ptr with powerSGD_hook. The options are
/// checked when the hook is made and at every call (a ValueError naming the option).
struct PowerSGDState {
  /// The group the hook communicates over; null: the default group (init_process_group()),
  /// looked up at every call (a StateError when none is running).
  std::shared_ptr<ProcessGroup> process_group;
  /// The rank r of the approximation P Q^T; >= 1. Lower compresses more.
  int64_t matrix_approximation_rank = 1;
  /// Backwards run with the plain averaged all-reduce before compressing; must be > 1 when
  /// use_error_feedback or warm_start (as PyTorch): DDP rebuilds its buckets at the end of the
  /// first synchronised backward (Note [Bucket rebuild]).
  int64_t start_powerSGD_iter = 1000;
  /// A matrix is compressed only when it shrinks by more than this factor; >= 0 (below 1, as in
  /// PyTorch's example with 0.5, compresses matrices that do not shrink: at full rank the
  /// result is then the exact average, up to rounding).
  double min_compression_rate = 2;
  /// Adds the last step's compression error to the bucket before compressing.
  bool use_error_feedback = true;
  /// Starts each step's power iteration from the last step's Q instead of a random one.
  bool warm_start = true;
  /// Added to each column's norm when orthogonalising (0: none; >= 0). Guards against columns
  /// of zeros, which otherwise give NaN (as in PyTorch).
  double orthogonalization_epsilon = 0;
  /// Seeds Q's random starts; every rank must use the same.
  uint64_t random_seed = 0;

  // ---- internal state (PyTorch's), keyed by GradBucket::index ----
  /// Each bucket's compression error from its last compressed step (use_error_feedback).
  std::map<int64_t, Tensor> error_dict;
  /// Each bucket's flat P's and Q's (kept between steps with warm_start).
  std::map<int64_t, Tensor> p_memory_dict;
  std::map<int64_t, Tensor> q_memory_dict;
  /// Backwards seen so far (advanced when the last bucket of one is done).
  int64_t iter = 0;
  /// Random starts of Q drawn so far (PyTorch's rng stream position).
  uint64_t random_draws = 0;
  /// Elements of the buckets compressed so far, before and after compression (PyTorch's
  /// total_numel_before_compression and total_numel_after_compression).
  int64_t total_numel_before_compression = 0;
  int64_t total_numel_after_compression = 0;
  /// Guards the fields above against a hook call and a continuation on different threads.
  mutable std::mutex mutex;

  /// (before / after, before, after) from the fields above, 0 as the rate before any compressed
  /// step (PyTorch's PowerSGDState.compression_stats()).
  std::tuple<double, int64_t, int64_t> compression_stats() const;
};

/// The PowerSGD hook over `state` (Note [PowerSGD]): register it with
/// DistributedDataParallel::register_comm_hook on every rank, each rank with its own state of
/// the same options. ValueError when `state` is null or an option is out of range (naming it).
CommHook powerSGD_hook(std::shared_ptr<PowerSGDState> state);

/// The batched PowerSGD hook over `state` (Note [Batched PowerSGD]): the whole bucket as one
/// square matrix. Registered and refused as powerSGD_hook.
CommHook batched_powerSGD_hook(std::shared_ptr<PowerSGDState> state);

}  // namespace wick::distributed::ddp_comm_hooks
