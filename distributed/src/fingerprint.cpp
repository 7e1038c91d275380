#include "fingerprint.h"

#include <fmt/format.h>

#include "wick/core/device.h"
#include "wick/core/dtype.h"

namespace wick::distributed::detail {

Fingerprint make_fingerprint(CollectiveKind kind, int64_t sequence, const Tensor& t, int64_t detail,
                             const CollectiveTag& tag) {
  Fingerprint f;
  f.kind = static_cast<int64_t>(kind);
  f.sequence = sequence;
  f.detail = detail;
  f.tag_iteration = tag.iteration;
  f.tag_index = tag.index;
  if (!t.defined()) return f;
  f.dtype = static_cast<int64_t>(t.dtype());
  f.device_type = static_cast<int64_t>(t.device().type);
  f.ndim = t.dim();
  f.numel = t.numel();
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d < Fingerprint::kMaxDims)
      f.sizes[d] = t.size(d);
    else
      f.sizes[Fingerprint::kMaxDims - 1] = f.sizes[Fingerprint::kMaxDims - 1] * 31 + t.size(d);
  }
  return f;
}

namespace {

const char* kind_name(int64_t k) {
  switch (static_cast<CollectiveKind>(k)) {
    case CollectiveKind::AllReduce:
      return "all_reduce";
    case CollectiveKind::Broadcast:
      return "broadcast";
    case CollectiveKind::AllGather:
      return "all_gather";
    case CollectiveKind::Barrier:
      return "barrier";
  }
  return "unknown collective";
}

bool same_tag(const Fingerprint& a, const Fingerprint& b) {
  return a.tag_iteration == b.tag_iteration && a.tag_index == b.tag_index;
}

// The sequence number is not compared: it cannot differ (Note [Collective fingerprints]).
bool same(const Fingerprint& a, const Fingerprint& b) {
  return a.kind == b.kind && a.detail == b.detail && a.dtype == b.dtype && a.device_type == b.device_type &&
         a.ndim == b.ndim && a.numel == b.numel && a.sizes == b.sizes && same_tag(a, b);
}

}  // namespace

std::string describe(const Fingerprint& f) {
  std::string s = kind_name(f.kind);
  if (f.kind == static_cast<int64_t>(CollectiveKind::AllReduce)) s += f.detail == 0 ? "(sum)" : "(avg)";
  if (f.kind == static_cast<int64_t>(CollectiveKind::Broadcast)) s += fmt::format("(root {})", f.detail);
  s += fmt::format(" #{}", f.sequence);
  if (f.tag_iteration != 0 || f.tag_index != 0) {
    s += fmt::format(" [iteration {}, ", f.tag_iteration);
    s += f.tag_index >= 0 ? fmt::format("bucket {}]", f.tag_index) : std::string("used-parameter map]");
  }
  if (f.dtype < 0) return s;
  std::string shape = "[";
  for (int64_t d = 0; d < f.ndim && d < Fingerprint::kMaxDims; ++d)
    shape += fmt::format("{}{}", d ? ", " : "", f.sizes[d]);
  if (f.ndim > Fingerprint::kMaxDims) shape += ", ...";
  shape += "]";
  return s + fmt::format(" {} {} on {}", dtype_name(static_cast<DType>(f.dtype)), shape,
                         device_type_name(static_cast<DeviceType>(f.device_type)));
}

std::string compare_fingerprints(const std::vector<Fingerprint>& all) {
  std::vector<int> refused;
  bool differ = false;
  bool tags_differ = false;
  bool all_tagged = true;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].refused) refused.push_back(static_cast<int>(r));
    if (!same(all[r], all[0])) differ = true;
    if (!same_tag(all[r], all[0])) tags_differ = true;
    if (all[r].tag_iteration == 0) all_tagged = false;
  }
  if (refused.empty() && !differ) return {};
  std::string msg =
      fmt::format("{}: the ranks' calls do not match:", describe(all[0]).substr(0, describe(all[0]).find(' ')));
  for (size_t r = 0; r < all.size(); ++r)
    msg += fmt::format("\n  rank {}: {}{}", r, describe(all[r]),
                       all[r].refused ? " (refused its arguments: see that rank's error)" : "");
  msg +=
      "\nEvery rank must call the same collectives in the same order, with tensors of the same shape, dtype and "
      "device type; nothing was sent.";
  if (tags_differ && all_tagged)
    msg +=
        "\nThe iterations differ: the ranks' DistributedDataParallel are out of step (a rank ran a forward with grad "
        "outside no_sync without its backward, or skipped a forward), so their gradients would have been averaged "
        "across different iterations. Every rank must run the same forwards and backwards; with uneven data, use "
        "enable_join() and join().";
  return msg;
}

}  // namespace wick::distributed::detail
