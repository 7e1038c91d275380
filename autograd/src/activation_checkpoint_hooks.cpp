// The non-reentrant activation checkpoint: saved-tensor hooks whose unpack recomputes the
// segment once (Note [Non-reentrant checkpoint] in wick/autograd/activation_checkpoint.h).
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "checkpoint_internal.h"
#include "rng_fork.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/saved_tensors_hooks.h"
#include "wick/core/error.h"
#include "wick/core/generator.h"

namespace wick::autograd::detail {

namespace {

constexpr const char* kName = "checkpoint (use_reentrant=false)";

struct Frame;

// What the forward's pack hook keeps in place of a tensor fn's ops save: its metadata, to check
// the recomputation against, and the tensor once the recomputation has put it there (or from the
// start, for a tensor saved on another thread: below).
struct Holder {
  std::shared_ptr<Frame> frame;
  std::vector<int64_t> sizes;
  DType dtype = kFloat32;
  Device device;
  Tensor value;
  bool kept = false;  // saved on another thread: value is the tensor itself, nothing to recompute
};

// One checkpointed call: what the recomputation needs, and the holders of the tensors saved on
// the calling thread, in save order (weakly: a holder lives as long as the saved tensor of the
// graph node that keeps it).
//
// Saves on other threads: parallel_apply carries the hooks to the device threads (Note [Saved
// tensor hooks]), so a DataParallel inside fn saves through them from several threads, in an
// order the threads decide. Those tensors are kept as they are (a holder that owns the tensor):
// correct, without the memory saving, and the recomputation matches only the calling thread's
// saves, whose order is fn's own.
struct Frame {
  CheckpointFn fn;
  std::vector<Tensor> inputs;
  std::vector<uint32_t> input_versions;
  std::optional<RngState> rng;
  std::thread::id owner;                       // the thread that called checkpoint
  std::vector<std::weak_ptr<Holder>> holders;  // written by the owner only, in forward
  std::mutex mutex;                            // one recomputation, also when two threads unpack
  bool recomputed = false;
};

std::string describe(IntArrayRef sizes, DType dtype, Device device) {
  return fmt::format("[{}] {} on {}", fmt::join(sizes, ", "), dtype, device);
}

// Runs fn again; each tensor it saves on this thread goes into the holder of the same place.
void recompute(Frame& f) {
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    const Tensor& x = f.inputs[i];
    WICK_CHECK_STATE(!x.defined() || x.version() == f.input_versions[i],
                     "{}: input {} (shape [{}]) was modified by an in-place operation after the forward (version {}, "
                     "expected {}), so the recomputation in backward would not reproduce it; modify a clone() "
                     "instead",
                     kName, i, fmt::join(x.sizes(), ", "), x.version(), f.input_versions[i]);
  }
  const std::thread::id here = std::this_thread::get_id();
  size_t count = 0;  // touched by this thread only
  {
    RngFork fork(f.rng);
    AutoGradMode grad_on(true);
    graph::saved_tensors_hooks fill(
        [&f, &count, here](const Tensor& t) {
          if (std::this_thread::get_id() != here) return 0;  // another thread's save: kept in forward
          const size_t i = count++;
          if (i >= f.holders.size()) return 0;  // counted; reported after the recomputation
          std::shared_ptr<Holder> h = f.holders[i].lock();
          if (!h) return 0;  // its node already ran and released it
          WICK_CHECK_STATE(t.sizes() == IntArrayRef(h->sizes) && t.dtype() == h->dtype && t.device() == h->device,
                           "{}: saved tensor {} is {} when recomputed in backward but was {} in the forward; the "
                           "function must do the same computation each time it runs",
                           kName, i, describe(t.sizes(), t.dtype(), t.device()),
                           describe(h->sizes, h->dtype, h->device));
          h->value = t;  // pack's argument carries no history: the recomputed graph is not kept
          return 0;
        },
        [](const int&) -> Tensor {
          WICK_CHECK_STATE(false,
                           "{}: a backward inside the function reached a tensor saved during its recomputation; a "
                           "function under a non-reentrant checkpoint cannot run backward itself",
                           kName);
          return {};
        });
    f.fn(f.inputs);
  }
  WICK_CHECK_STATE(count == f.holders.size(),
                   "{}: the function saved {} tensor(s) for backward when recomputed but {} in the forward; it must "
                   "do the same computation each time it runs",
                   kName, count, f.holders.size());
}

Tensor unpack(const std::shared_ptr<Holder>& h) {
  if (h->kept) return h->value;
  Frame& f = *h->frame;
  std::lock_guard<std::mutex> lock(f.mutex);
  if (!f.recomputed) {
    recompute(f);
    f.recomputed = true;
  }
  return h->value;
}

}  // namespace

std::vector<Tensor> checkpoint_without_reentrant(const CheckpointFn& fn, const std::vector<Tensor>& inputs,
                                                 bool preserve_rng_state) {
  WICK_CHECK(static_cast<bool>(fn), "checkpoint: the function is empty; pass a callable");
  if (!GradMode::is_enabled()) return fn(inputs);
  auto frame = std::make_shared<Frame>();
  frame->fn = fn;
  frame->inputs = inputs;
  for (const Tensor& x : inputs) frame->input_versions.push_back(x.defined() ? x.version() : 0);
  if (preserve_rng_state) frame->rng = get_rng_state();
  frame->owner = std::this_thread::get_id();
  // The pack hook holds the frame weakly: the frame's holders must not keep it alive.
  std::weak_ptr<Frame> weak = frame;
  graph::saved_tensors_hooks hooks(
      [weak](const Tensor& t) {
        std::shared_ptr<Frame> f = weak.lock();
        WICK_CHECK_STATE(f != nullptr, "{}: a tensor was saved after the checkpoint returned", kName);
        auto h = std::make_shared<Holder>();
        h->sizes.assign(t.sizes().begin(), t.sizes().end());
        h->dtype = t.dtype();
        h->device = t.device();
        if (std::this_thread::get_id() != f->owner) {
          h->value = t;
          h->kept = true;
          return h;
        }
        h->frame = f;
        f->holders.push_back(h);
        return h;
      },
      [](const std::shared_ptr<Holder>& h) { return unpack(h); });
  return fn(inputs);
}

}  // namespace wick::autograd::detail
