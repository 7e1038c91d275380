// Rearranging copies: repeat, flip, roll, diag, composed of differentiable view, expand, index and
// cat ops, so their gradients need no formula of their own; and unbind (views, one node).
#include <algorithm>

#include "op_helpers.h"
#include "wick/autograd/meta.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

Tensor repeat(const Tensor& a, IntArrayRef repeats) {
  WICK_CHECK(a.defined(), "repeat: the input is an undefined tensor");
  WICK_CHECK(static_cast<int64_t>(repeats.size()) >= a.dim(),
             "repeat: {} repeats for a tensor of shape {}: give at "
             "least one per dim",
             repeats.size(), shape_str(a.sizes()));
  const size_t pad = repeats.size() - static_cast<size_t>(a.dim());
  // [s0, s1] tiled [r0, r1]: view as [1, s0, 1, s1], expand to [r0, s0, r1, s1], reshape.
  DimVector unit, tiled, result;
  for (size_t i = 0; i < repeats.size(); ++i) {
    WICK_CHECK(repeats[i] >= 0, "repeat: repeats {} has a negative count", shape_str(repeats));
    const int64_t s = i < pad ? 1 : a.size(static_cast<int64_t>(i - pad));
    unit.push_back(1);
    unit.push_back(s);
    tiled.push_back(repeats[i]);
    tiled.push_back(s);
    int64_t size = 0;
    WICK_CHECK(!mul_overflow(repeats[i], s, &size), "repeat: repeats {} on shape {} give a size past int64",
               shape_str(repeats), shape_str(a.sizes()));
    result.push_back(size);
  }
  return reshape(expand(reshape(a, unit), tiled), result);
}

Tensor flip(const Tensor& a, IntArrayRef dims) {
  WICK_CHECK(a.defined(), "flip: the input is an undefined tensor");
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(a.dim(), 1)), false);
  Tensor out = a;
  for (int64_t dim : dims) {
    const int64_t d = native::wrap_dim(dim, a.dim(), "flip");
    WICK_CHECK(!seen[static_cast<size_t>(d)], "flip: dim {} appears more than once in {}", d, shape_str(dims));
    seen[static_cast<size_t>(d)] = true;
    if (a.dim() == 0) continue;
    const int64_t n = a.size(d);
    out = index_select(out, d, native::arange(n - 1, -1, -1, kInt64, a.device()));
  }
  return out.is_same(a) ? clone(a) : out;
}

Tensor roll(const Tensor& a, IntArrayRef shifts, IntArrayRef dims) {
  WICK_CHECK(a.defined(), "roll: the input is an undefined tensor");
  if (dims.empty()) {
    WICK_CHECK(shifts.size() == 1, "roll: without dims, give one shift (for the flattened tensor), got {}",
               shape_str(shifts));
    return view(roll(flatten(a), shifts, {0}), a.sizes());
  }
  WICK_CHECK(shifts.size() == dims.size(), "roll: {} shifts for {} dims; give one shift per dim", shifts.size(),
             dims.size());
  Tensor out = a;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = native::wrap_dim(dims[i], a.dim(), "roll");
    const int64_t n = a.dim() == 0 ? 1 : a.size(d);
    const int64_t s = n == 0 ? 0 : ((shifts[i] % n) + n) % n;
    if (s == 0 || a.dim() == 0) continue;
    out = cat({narrow(out, d, n - s, s), narrow(out, d, 0, n - s)}, d);
  }
  return out.is_same(a) ? clone(a) : out;
}

Tensor diag(const Tensor& a, int64_t diagonal) {
  WICK_CHECK(a.defined() && (a.dim() == 1 || a.dim() == 2), "diag: expects a 1-d or 2-d tensor, got {}",
             a.defined() ? shape_str(a.sizes()) : "an undefined tensor");
  const int64_t k = diagonal;
  if (a.dim() == 1) {
    // [n] -> [m, m], m = n + |k|: a lands at flat positions i * (m + 1) + start.
    const int64_t n = a.size(0);
    int64_t m = 0, mm = 0, last = 0;  // last: past the end of the positions, n * (m + 1) <= m * m + m
    WICK_CHECK(k != INT64_MIN && !add_overflow(n, k >= 0 ? k : -k, &m) && !mul_overflow(m, m, &mm) &&
                   !add_overflow(mm, m, &last),
               "diag: a vector of {} elements on diagonal {} gives a matrix too large for int64 sizes", n, k);
    const int64_t start = k >= 0 ? k : -k * m;
    Tensor pos = native::arange(start, start + n * (m + 1), m + 1, kInt64, a.device());
    if (n == 0) pos = native::empty({0}, kInt64, a.device());
    return view(index_add(native::zeros({mm}, a.dtype(), a.device()), 0, pos, a), {m, m});
  }
  // [r, c] -> the diagonal's elements: a strided slice of the flattened matrix, copied.
  const int64_t r = a.size(0), c = a.size(1);
  const int64_t len = std::max<int64_t>(0, k >= 0 ? std::min(r, c - k) : std::min(r + k, c));
  if (len == 0) return native::empty({0}, a.dtype(), a.device());
  const int64_t start = k >= 0 ? k : -k * c;
  return clone(slice(reshape(a, {r * c}), 0, start, start + (len - 1) * (c + 1) + 1, c + 1));
}

std::vector<Tensor> unbind(const Tensor& a, int64_t dim) {
  WICK_CHECK(a.defined() && a.dim() > 0, "unbind: expects a tensor with at least 1 dim, got {}",
             a.defined() ? shape_str(a.sizes()) : "an undefined tensor");
  const int64_t d = native::wrap_dim(dim, a.dim(), "unbind");
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(a.size(d)));
  for (int64_t i = 0; i < a.size(d); ++i) out.push_back(native::select(a, d, i));
  // One node for all the slices, whose backward stacks their gradients (unused slices get
  // zeros): a select per slice would make each slice's backward a zero tensor of a's whole
  // shape, and summing them costs n times a's size (an RNN unbinding its time steps).
  if (needs_grad({&a})) {
    for (auto& o : out) o = native::alias(o);
    record_function("UnbindBackward", {a}, out, [d](const VL& g, const VL&) -> VL { return {stack(g, d)}; });
  }
  for (auto& o : out) mark_view(o, a);
  return out;
}

}  // namespace wick
