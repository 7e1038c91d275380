#pragma once
// The parameters of one optimizer step whose updates run fused, gathered so that each device and
// dtype gets one stub call for all of them (Note [Fused optimizer steps], docs/training.md).
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "wick/core/dispatch_stub.h"
#include "wick/core/tensor.h"

namespace wick::optim::detail {

/// Whether a's and b's arrays may share a byte: their [data_ptr, data_ptr + nbytes) ranges meet
/// (exact for contiguous tensors on one device). A gradient that shares memory with its own
/// parameter takes the tensor-op path: the fused loops read p and g as distinct (__restrict)
/// arrays, and AdamW's tensor ops, as PyTorch's, decay such a gradient together with p.
inline bool shares_memory(const Tensor& a, const Tensor& b) {
  const auto* a0 = static_cast<const char*>(a.data_ptr());
  const auto* b0 = static_cast<const char*>(b.data_ptr());
  return a.nbytes() > 0 && b.nbytes() > 0 && a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

/// Collects Slot entries (stubs::SgdStepTensor, stubs::AdamStepTensor) per (device, dtype) and
/// runs them with one call each. Parameters whose arrays overlap another's run one at a time, in
/// the order added, as separate passes did before (one pass would update shared memory twice
/// at once).
template <typename Slot>
class FusedSteps {
 public:
  using Fn = void (*)(DType, const Slot*, int64_t);

  /// Adds p's update from its gradient g: fills slot's n, p and g, and records what it writes
  /// (p and `state`, null entries skipped) and reads (g). Each tensor is contiguous, on p's device,
  /// of p's dtype.
  void add(const Tensor& p, const Tensor& g, Slot slot, std::initializer_list<const Tensor*> state) {
    slot.n = p.numel();
    slot.p = p.data_ptr();
    slot.g = g.data_ptr();
    Batch* b = nullptr;
    for (Batch& x : batches_)
      if (x.device == p.device() && x.dtype == p.dtype()) b = &x;
    if (b == nullptr) b = &batches_.emplace_back(Batch{p.device(), p.dtype(), {}, {}, {}});
    const auto id = static_cast<int64_t>(b->slots.size());
    b->slots.push_back(slot);
    const auto note = [&](const Tensor& t, bool written) {
      const auto* start = static_cast<const char*>(t.data_ptr());
      b->ranges.push_back({start, start + t.nbytes(), id});
      if (written) b->written.push_back(t);
    };
    note(p, true);
    note(g, false);
    for (const Tensor* t : state)
      if (t != nullptr) note(*t, true);
  }

  /// Runs every gathered update through `stub`, then bumps the version of every tensor written.
  /// An optimizer also calls it before an update it makes with tensor ops, so that updates of
  /// parameters that share memory apply in parameter order (Note [Fused optimizer steps]).
  void run(const DispatchStub<Fn>& stub) {
    for (Batch& b : batches_) {
      if (b.slots.empty()) continue;
      const DeviceType type = b.device.type;
      if (overlapping(b.ranges)) {
        for (const Slot& s : b.slots) stub(type, b.dtype, &s, int64_t{1});
      } else {
        stub(type, b.dtype, b.slots.data(), static_cast<int64_t>(b.slots.size()));
      }
      for (const Tensor& t : b.written) t.bump_version();
    }
    batches_.clear();
  }

 private:
  struct Range {
    const char* begin;
    const char* end;
    int64_t slot;
  };
  struct Batch {
    Device device;
    DType dtype;
    std::vector<Slot> slots;
    std::vector<Range> ranges;
    std::vector<Tensor> written;
  };

  // Whether two parameters' arrays may share a byte (one parameter's own arrays may coincide: an
  // update reads and writes each element in place). Conservative: sorted by start, a range that
  // begins inside the run of overlapping ranges before it counts as overlapping every parameter
  // in that run.
  static bool overlapping(std::vector<Range>& r) {
    std::sort(r.begin(), r.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
    const char* reach = nullptr;  // the furthest end of the current run of overlapping ranges
    std::vector<int64_t> owners;  // the parameters in that run
    for (const Range& x : r) {
      if (x.begin == x.end) continue;
      if (reach != nullptr && x.begin < reach) {
        for (int64_t o : owners)
          if (o != x.slot) return true;
      } else {
        owners.clear();
      }
      if (reach == nullptr || x.end > reach) reach = x.end;
      owners.push_back(x.slot);
    }
    return false;
  }

  std::vector<Batch> batches_;
};

}  // namespace wick::optim::detail
