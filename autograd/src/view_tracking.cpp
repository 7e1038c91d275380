// View tracking: positions of a view in its base and re-deriving a stale view's grad_fn (Note
// [Views and in-place ops] in view_tracking.h).
#include "view_tracking.h"

#include <unordered_map>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/autograd/record.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::autograd::detail {

namespace {
// Storage positions (in elements) of every element of t, in row-major order.
std::vector<int64_t> storage_positions(const Tensor& t) {
  const TensorImpl& impl = *t.impl();
  const int64_t n = impl.numel();
  std::vector<int64_t> pos(static_cast<size_t>(n));
  if (n == 0) return pos;
  const size_t d = impl.sizes.size();
  std::vector<int64_t> index(d, 0);
  int64_t p = impl.offset;
  for (int64_t i = 0; i < n; ++i) {
    pos[static_cast<size_t>(i)] = p;
    for (size_t k = d; k-- > 0;) {  // odometer increment, last dim fastest
      if (++index[k] < impl.sizes[k]) {
        p += impl.strides[k];
        break;
      }
      p -= impl.strides[k] * (impl.sizes[k] - 1);
      index[k] = 0;
    }
  }
  return pos;
}
}  // namespace

Tensor view_positions(const Tensor& base, const Tensor& view, bool* overlapping) {
  const std::vector<int64_t> view_pos = storage_positions(view);
  std::vector<int64_t> idx(view_pos.size());
  const int64_t base_numel = base.numel();
  auto outside = [&](size_t j) {
    WICK_FAIL("autograd: element {} of a view of shape [{}] lies outside its base of shape [{}]", j,
              fmt::join(view.sizes(), ", "), fmt::join(base.sizes(), ", "));
  };
  if (base.is_contiguous()) {  // the common case: a position is its flat index plus the offset
    const int64_t off = base.impl()->offset;
    for (size_t j = 0; j < view_pos.size(); ++j) {
      idx[j] = view_pos[j] - off;
      if (idx[j] < 0 || idx[j] >= base_numel) outside(j);
    }
  } else {
    const std::vector<int64_t> base_pos = storage_positions(base);
    std::unordered_map<int64_t, int64_t> flat_of;
    flat_of.reserve(base_pos.size());
    for (size_t i = 0; i < base_pos.size(); ++i) flat_of.emplace(base_pos[i], static_cast<int64_t>(i));
    for (size_t j = 0; j < view_pos.size(); ++j) {
      auto it = flat_of.find(view_pos[j]);
      if (it == flat_of.end()) outside(j);
      idx[j] = it->second;
    }
  }
  if (overlapping) {
    *overlapping = false;
    std::vector<bool> seen(static_cast<size_t>(base_numel), false);
    for (int64_t i : idx) {
      if (seen[static_cast<size_t>(i)]) *overlapping = true;
      seen[static_cast<size_t>(i)] = true;
    }
  }
  Tensor t = native::from_blob_copy(idx.data(), {static_cast<int64_t>(idx.size())}, kInt64, kCPU);
  return base.device() == kCPU ? t : native::to(t, base.device(), kInt64);  // cpu:1 too, not only cuda
}

void refresh_view(const Tensor& view, AutogradMeta& m) {
  if (!m.is_view || !m.view_base.defined() || m.view_version == view.version()) return;
  const Tensor& base = m.view_base;
  m.view_version = view.version();
  if (!requires_grad(base)) return;
  Tensor idx = view_positions(base, view, nullptr);
  const DimVector base_shape(base.sizes());
  const int64_t base_numel = base.numel();
  auto node = std::make_shared<FunctionNode>(
      "ViewOfBaseBackward",
      [idx, base_shape, base_numel](const variable_list& g, const variable_list&) -> variable_list {
        // Overlapping positions (an expanded view) sum, as expand's own backward does.
        Tensor flat = zeros({base_numel}, g[0].options());
        return {reshape(scatter_add(flat, 0, idx, reshape(g[0], {-1})), base_shape)};
      });
  record(node, {base}, {view});
}

}  // namespace wick::autograd::detail
