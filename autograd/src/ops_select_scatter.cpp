// rot90, tile, repeat_interleave, masked_select, take_along_dim and tensordot: compositions of
// flip, transpose, repeat, expand, index_select, gather and mm, so gradients, double backward and
// every device come with them.
//
// Note [Positions without a nonzero kernel]: the positions of a bool vector's true entries come
// from natives: an entry's rank among the true ones is its running count minus one (cumsum), and
// scatter_add writes its position at that rank (true_positions). One host read (the count)
// sizes the result, as PyTorch's nonzero.
#include <algorithm>
#include <cstdint>

#include "op_helpers.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

// Note [Positions without a nonzero kernel].
Tensor detail::true_positions(const Tensor& m) {
  const int64_t n = m.numel();
  const Device dev = m.device();
  if (n == 0) return native::empty({0}, kInt64, dev);
  Tensor c = native::cumsum(native::to(m, dev, kInt64), 0);
  const int64_t total = native::select(c, 0, n - 1).item<int64_t>();
  Tensor rank =
      native::where(m, native::binary(BinaryOp::Sub, c, Scalar(int64_t{1})), native::full({}, total, kInt64, dev));
  Tensor pos = native::where(m, native::arange(0, n, 1, kInt64, dev), native::zeros({}, kInt64, dev));
  Tensor out = native::scatter_add(native::zeros({total + 1}, kInt64, dev), 0, rank, pos);
  return native::contiguous(native::narrow(out, 0, 0, total));
}

Tensor rot90(const Tensor& a, int64_t k, IntArrayRef dims) {
  WICK_CHECK(a.defined(), "rot90: the input is an undefined tensor");
  WICK_CHECK(dims.size() == 2, "rot90: expects 2 rotation dims, got {}", shape_str(dims));
  WICK_CHECK(a.dim() >= 2, "rot90: expects a tensor with at least 2 dims, got shape {}", shape_str(a.sizes()));
  const int64_t d0 = native::wrap_dim(dims[0], a.dim(), "rot90"), d1 = native::wrap_dim(dims[1], a.dim(), "rot90");
  WICK_CHECK(d0 != d1, "rot90: the rotation dims must differ, got {} for shape {}", shape_str(dims),
             shape_str(a.sizes()));
  switch (((k % 4) + 4) % 4) {
    case 1:
      return transpose(flip(a, {d1}), d0, d1);
    case 2:
      return flip(a, {d0, d1});
    case 3:
      return transpose(flip(a, {d0}), d0, d1);
    default:
      return clone(a);
  }
}

Tensor tile(const Tensor& a, IntArrayRef dims) {
  WICK_CHECK(a.defined(), "tile: the input is an undefined tensor");
  DimVector r;
  for (int64_t i = static_cast<int64_t>(dims.size()); i < a.dim(); ++i) r.push_back(1);
  for (int64_t v : dims) {
    WICK_CHECK(v >= 0, "tile: dims {} has a negative count", shape_str(dims));
    r.push_back(v);
  }
  return repeat(a, r);
}

Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size) {
  WICK_CHECK(repeats.defined(), "repeat_interleave: repeats is an undefined tensor");
  WICK_CHECK(repeats.dim() == 1, "repeat_interleave: repeats must be 1-d, got shape {}", shape_str(repeats.sizes()));
  WICK_CHECK_TYPE(repeats.dtype() == kInt64, "repeat_interleave: repeats must be int64, got {}", repeats.dtype());
  const int64_t n = repeats.size(0);
  const Device dev = repeats.device();
  WICK_CHECK(n == 0 || min_of(repeats) >= 0, "repeat_interleave: repeats must be >= 0, got a count of {}",
             n == 0 ? 0 : min_of(repeats));
  int64_t total = 0;  // summed here with overflow checks: a wrapped cumsum would be a wrong size
  for (const int64_t c : repeats.to_vector<int64_t>())
    WICK_CHECK(!add_overflow(total, c, &total) && total < INT64_MAX,
               "repeat_interleave: the repeats {} add up to more than int64 can count", shape_str(repeats.sizes()));
  Tensor cs = native::contiguous(native::cumsum(repeats, 0));
  WICK_CHECK(!output_size || *output_size == total, "repeat_interleave: output_size is {} but the repeats add up to {}",
             output_size.value_or(0), total);
  // Element j of the result is the number of running counts <= j.
  Tensor marks = native::scatter_add(native::zeros({total + 1}, kInt64, dev), 0, cs, native::ones({n}, kInt64, dev));
  return native::contiguous(native::narrow(native::cumsum(marks, 0), 0, 0, total));
}

namespace {
// a (flattened without dim) and the wrapped dim.
std::pair<Tensor, int64_t> interleave_input(const Tensor& a, std::optional<int64_t> dim) {
  WICK_CHECK(a.defined(), "repeat_interleave: the input is an undefined tensor");
  Tensor x = dim ? a : flatten(a);
  if (x.dim() == 0) x = reshape(x, {1});
  return {x, dim ? native::wrap_dim(*dim, x.dim(), "repeat_interleave") : 0};
}
}  // namespace

Tensor repeat_interleave(const Tensor& a, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  WICK_CHECK(repeats >= 0, "repeat_interleave: repeats must be >= 0, got {}", repeats);
  auto [x, d] = interleave_input(a, dim);
  const int64_t n = x.size(d);
  int64_t total = 0;
  WICK_CHECK(!mul_overflow(n, repeats, &total),
             "repeat_interleave: {} elements repeated {} times give more than int64 can count (input {})", n, repeats,
             shape_str(x.sizes()));
  WICK_CHECK(!output_size || *output_size == total,
             "repeat_interleave: output_size is {} but {} elements repeated {} times give {}", output_size.value_or(0),
             n, repeats, total);
  if (repeats == 1) return clone(x);
  // [.., n, ..] viewed as [.., n, 1, ..], expanded to [.., n, r, ..], merged to [.., n * r, ..].
  DimVector unit(x.sizes()), result(x.sizes());
  unit.insert(static_cast<size_t>(d) + 1, 1);
  DimVector tiled(unit);
  tiled[static_cast<size_t>(d) + 1] = repeats;
  result[static_cast<size_t>(d)] = total;
  return reshape(expand(reshape(x, unit), tiled), result);
}

Tensor repeat_interleave(const Tensor& a, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  WICK_CHECK(repeats.defined(), "repeat_interleave: repeats is an undefined tensor");
  auto [x, d] = interleave_input(a, dim);
  native::check_same_device("repeat_interleave", {&x, &repeats});
  WICK_CHECK(repeats.dim() <= 1, "repeat_interleave: repeats must be 0-dim or 1-d, got shape {}",
             shape_str(repeats.sizes()));
  const int64_t n = x.size(d);
  Tensor r = repeats;
  if (repeats.numel() == 1) {
    r = native::contiguous(native::expand(native::reshape(repeats, {1}), {n}));
  } else {
    WICK_CHECK(repeats.dim() == 1 && repeats.size(0) == n,
               "repeat_interleave: repeats has {} counts but the input of shape {} has {} elements along dim {}; give "
               "one count per element, or one for all",
               repeats.numel(), shape_str(a.sizes()), n, d);
  }
  return index_select(x, d, repeat_interleave(r, output_size));
}

Tensor masked_select(const Tensor& a, const Tensor& mask) {
  WICK_CHECK(a.defined() && mask.defined(), "masked_select: the input or the mask is an undefined tensor");
  WICK_CHECK_TYPE(mask.dtype() == kBool, "masked_select: the mask must be bool, got {} of shape {}", mask.dtype(),
                  shape_str(mask.sizes()));
  native::check_same_device("masked_select", {&a, &mask});
  const DimVector shape = native::broadcast_shapes(a.sizes(), mask.sizes(), "masked_select");
  Tensor pos = true_positions(native::contiguous(native::reshape(native::expand(mask, shape), {-1})));
  return index_select(reshape(expand(a, shape), {-1}), 0, pos);
}

Tensor take_along_dim(const Tensor& a, const Tensor& indices, std::optional<int64_t> dim) {
  WICK_CHECK(a.defined() && indices.defined(), "take_along_dim: the input or the indices are an undefined tensor");
  WICK_CHECK_TYPE(indices.dtype() == kInt64, "take_along_dim: indices must be int64, got {} of shape {}",
                  indices.dtype(), shape_str(indices.sizes()));
  native::check_same_device("take_along_dim", {&a, &indices});
  try {
    if (!dim) return gather(reshape(a, {-1}), 0, native::contiguous(native::reshape(indices, {-1})));
    WICK_CHECK(a.dim() == indices.dim(),
               "the input of shape {} and the indices of shape {} need the same number of dims", shape_str(a.sizes()),
               shape_str(indices.sizes()));
    const int64_t d = native::wrap_dim(*dim, std::max<int64_t>(a.dim(), 1), "take_along_dim");
    if (a.dim() == 0) return gather(reshape(a, {1}), 0, native::reshape(indices, {1})).reshape({});
    DimVector sa(a.sizes()), si(indices.sizes());
    sa[static_cast<size_t>(d)] = indices.size(d);
    si[static_cast<size_t>(d)] = a.size(d);
    const DimVector ib = native::broadcast_shapes(sa, indices.sizes(), "take_along_dim");
    const DimVector ab = native::broadcast_shapes(si, a.sizes(), "take_along_dim");
    return gather(expand(a, ab), d, native::contiguous(native::expand(indices, ib)));
  } catch (const Error& e) {
    rethrow_with_context(e, "take_along_dim: ");
  }
}

Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b) {
  WICK_CHECK(a.defined() && b.defined(), "tensordot: an operand is an undefined tensor");
  WICK_CHECK_TYPE(a.dtype() == b.dtype(), "tensordot: the operands are {} and {}; give them one dtype", a.dtype(),
                  b.dtype());
  native::check_same_device("tensordot", {&a, &b});
  WICK_CHECK(dims_a.size() == dims_b.size(), "tensordot: {} dims for a but {} for b ({} and {}); give them in pairs",
             dims_a.size(), dims_b.size(), shape_str(dims_a), shape_str(dims_b));
  std::vector<bool> ca(static_cast<size_t>(a.dim()), false), cb(static_cast<size_t>(b.dim()), false);
  Tensor x = a, y = b;
  DimVector da, db;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    const int64_t wa = native::wrap_dim(dims_a[i], a.dim(), "tensordot");
    const int64_t wb = native::wrap_dim(dims_b[i], b.dim(), "tensordot");
    WICK_CHECK(!ca[static_cast<size_t>(wa)] && !cb[static_cast<size_t>(wb)],
               "tensordot: a dim appears twice in {} or {}", shape_str(dims_a), shape_str(dims_b));
    ca[static_cast<size_t>(wa)] = cb[static_cast<size_t>(wb)] = true;
    const int64_t sa = a.size(wa), sb = b.size(wb);
    if (sa != sb && sb == 1) {
      x = sum(x, {wa}, true);
    } else if (sa != sb && sa == 1) {
      y = sum(y, {wb}, true);
    } else {
      WICK_CHECK(sa == sb,
                 "tensordot: contracted dims must match: a {} has size {} in dim {} but b {} has size {} in dim {}",
                 shape_str(a.sizes()), sa, wa, shape_str(b.sizes()), sb, wb);
    }
    da.push_back(wa);
    db.push_back(wb);
  }
  DimVector pa, pb, shape;
  int64_t fa = 1, fb = 1, c = 1;
  for (int64_t i = 0; i < a.dim(); ++i)
    if (!ca[static_cast<size_t>(i)]) {
      pa.push_back(i);
      shape.push_back(a.size(i));
      fa *= a.size(i);
    }
  for (int64_t i : da) {
    pa.push_back(i);
    c *= x.size(i);
  }
  for (int64_t i : db) pb.push_back(i);
  for (int64_t i = 0; i < b.dim(); ++i)
    if (!cb[static_cast<size_t>(i)]) {
      pb.push_back(i);
      shape.push_back(b.size(i));
      fb *= b.size(i);
    }
  return reshape(mm(reshape(permute(x, pa), {fa, c}), reshape(permute(y, pb), {c, fb})), shape);
}

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  WICK_CHECK(a.defined() && b.defined(), "tensordot: an operand is an undefined tensor");
  WICK_CHECK(dims >= 0 && dims <= a.dim() && dims <= b.dim(), "tensordot: cannot contract {} dims of shapes {} and {}",
             dims, shape_str(a.sizes()), shape_str(b.sizes()));
  DimVector da, db;
  for (int64_t i = 0; i < dims; ++i) {
    da.push_back(a.dim() - dims + i);
    db.push_back(i);
  }
  return tensordot(a, b, da, db);
}

}  // namespace wick
