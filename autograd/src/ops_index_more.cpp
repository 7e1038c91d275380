// index_copy, index_fill, index_reduce, put, argwhere, isin, diagflat, combinations and vander,
// composed of index_put, scatter_reduce, where, index_select, cumprod and searchsorted.
//
// Note [Indexed writes]
// index_copy moves dim to the front and is index_put there; put is index_put on the flattened
// tensor; index_reduce is scatter_reduce with the index broadcast along the other dims;
// index_fill is a where over the slices hit. So one rule holds for repeated indices across them:
// without accumulation the last write wins (index_put's rule; PyTorch calls it unspecified and
// its CPU loops keep the last), and the gradients are PyTorch 1.13's formulas: the overwritten
// slices of self get no gradient, every repeat of a source slice gets the gradient of the slice
// it was written to (also the repeats that lost), and index_fill's tensor value gets the sum over
// the distinct slices filled. The checks run first (one host read of the index's range), so a
// refused call writes nothing; index_copy and index_reduce refuse negative indices and put and
// index_fill count them from the end, as PyTorch 1.13.
#include <algorithm>
#include <cmath>
#include <limits>

#include "op_helpers.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/scalar_fit.h"

namespace wick {

using namespace detail;

namespace {

// The 1-d int64 index of an indexed write along dim d of self (size s), checked: int64, at most
// 1-d, values in [0, s) or (negative_ok) [-s, s), negative values wrapped.
Tensor checked_index(const char* op, const Tensor& self, int64_t d, const Tensor& index, bool negative_ok) {
  WICK_CHECK(index.defined(), "{}: the index is an undefined tensor", op);
  WICK_CHECK_TYPE(index.dtype() == kInt64, "{}: the index must be int64, got {}", op, index.dtype());
  WICK_CHECK_INDEX(index.dim() <= 1, "{}: the index must be 1-d or 0-d, got shape {}", op, shape_str(index));
  native::check_same_device(op, {&self, &index});
  const int64_t s = self.dim() == 0 ? 1 : self.size(d);
  Tensor idx = native::reshape(index, {-1});
  if (idx.numel() == 0) return idx;
  const int64_t lo = min_of(idx), hi = max_of(idx), low = negative_ok ? -s : 0;
  WICK_CHECK_INDEX(lo >= low && hi < s, "{}: index {} is out of range for dim {} of size {} (self {}; valid: [{}, {}])",
                   op, lo < low ? lo : hi, d, s, shape_str(self), low, s - 1);
  return negative_ok && lo < 0 ? native::where(idx.lt(0), native::binary(BinaryOp::Add, idx, Scalar(s)), idx) : idx;
}

// source's shape checks of index_copy and index_reduce (PyTorch's IndexErrors).
void check_source(const char* op, const Tensor& self, int64_t d, int64_t n, const Tensor& source) {
  WICK_CHECK(source.defined(), "{}: the source is an undefined tensor", op);
  WICK_CHECK_TYPE(source.dtype() == self.dtype(), "{}: self is {} but source is {}; convert source to self's dtype", op,
                  self.dtype(), source.dtype());
  native::check_same_device(op, {&self, &source});
  if (source.dim() == 0 || self.dim() == 0) {
    WICK_CHECK_INDEX(n == 1 && source.numel() == 1 && self.numel() <= 1,
                     "{}: a 0-d self or source takes one index and one element, got index of {} elements, self {} "
                     "and source {}",
                     op, n, shape_str(self), shape_str(source));
    return;
  }
  bool same = source.dim() == self.dim();
  for (int64_t k = 0; same && k < self.dim(); ++k) same = k == d || source.size(k) == self.size(k);
  WICK_CHECK_INDEX(same && source.size(d) == n,
                   "{}: source {} must be self {} with dim {} of size {} (the index's length)", op, shape_str(source),
                   shape_str(self), d, n);
}

int64_t wrap(const char* op, const Tensor& self, int64_t dim) {
  WICK_CHECK(self.defined(), "{}: self is an undefined tensor", op);
  return native::wrap_dim(dim, std::max<int64_t>(self.dim(), 1), op);
}

// [1, ..., size(d), ..., 1] bool: the slices along d that idx names.
Tensor slices_hit(const Tensor& self, int64_t d, const Tensor& idx) {
  const int64_t s = self.dim() == 0 ? 1 : self.size(d);
  const Device dev = self.device();
  Tensor hit =
      native::index_add(native::zeros({s}, kInt64, dev), 0, idx, native::ones({idx.numel()}, kInt64, dev)).gt(0);
  DimVector shape(static_cast<size_t>(self.dim()), 1);
  if (self.dim() == 0) return native::reshape(hit, {});
  shape[static_cast<size_t>(d)] = s;
  return native::view(hit, shape);
}
}  // namespace

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  const char* op = "index_copy";
  const int64_t d = wrap(op, self, dim);
  const Tensor idx = checked_index(op, self, d, index, false);
  check_source(op, self, d, idx.numel(), source);
  if (self.dim() == 0 || source.dim() == 0)
    return reshape(index_put(reshape(self, {1}), {idx}, reshape(source, {1})), self.sizes());
  return contiguous(transpose(index_put(transpose(self, 0, d), {idx}, transpose(source, 0, d)), 0, d));
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  const char* op = "index_fill";
  const int64_t d = wrap(op, self, dim);
  WICK_CHECK(value.defined(), "{}: the value is an undefined tensor", op);
  WICK_CHECK(value.dim() == 0, "{}: the value must be a 0-d tensor, got shape {}; use index_copy for slices", op,
             shape_str(value));
  const Tensor idx = checked_index(op, self, d, index, true);
  return where(slices_hit(self, d, idx), to(value, self.device(), self.dtype()), self);
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
  WICK_CHECK(self.defined(), "index_fill: self is an undefined tensor");
  check_scalar_fits("index_fill", "value", value, self.dtype(), self.sizes());  // Note [Scalar fits dtype]
  return index_fill(self, dim, index, native::full({}, value, self.dtype(), self.device()));
}

Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                    bool include_self) {
  const char* op = "index_reduce";
  const int64_t d = wrap(op, self, dim);
  WICK_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
             "{}: reduce must be one of prod, mean, amax or amin, got '{}' (index_add is the sum)", op, reduce);
  const Tensor idx = checked_index(op, self, d, index, false);
  check_source(op, self, d, idx.numel(), source);
  if (self.dim() == 0 || source.dim() == 0)
    return reshape(scatter_reduce(reshape(self, {1}), 0, idx, reshape(source, {1}), reduce, include_self),
                   self.sizes());
  DimVector shape(static_cast<size_t>(self.dim()), 1);
  shape[static_cast<size_t>(d)] = idx.numel();
  const Tensor full = native::contiguous(native::expand(native::view(idx, shape), source.sizes()));
  return scatter_reduce(self, d, full, source, reduce, include_self);
}

Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  const char* op = "put";
  WICK_CHECK(self.defined() && index.defined() && source.defined(), "{}: an operand is an undefined tensor", op);
  WICK_CHECK_TYPE(index.dtype() == kInt64, "{}: the index must be int64, got {}", op, index.dtype());
  WICK_CHECK_TYPE(source.dtype() == self.dtype(), "{}: self is {} but source is {}; convert source to self's dtype", op,
                  self.dtype(), source.dtype());
  native::check_same_device(op, {&self, &index, &source});
  WICK_CHECK_INDEX(index.numel() == source.numel(),
                   "{}: index {} and source {} must hold as many elements, got {} and {}", op, shape_str(index),
                   shape_str(source), index.numel(), source.numel());
  const int64_t n = self.numel();
  const Tensor idx = native::reshape(index, {-1});
  if (idx.numel() > 0) {
    const int64_t lo = min_of(idx), hi = max_of(idx);
    WICK_CHECK_INDEX(lo >= -n && hi < n, "{}: index {} is out of range for self {} of {} elements (valid: [{}, {}])",
                     op, lo < -n ? lo : hi, shape_str(self), n, -n, n - 1);
  }
  return reshape(index_put(reshape(self, {-1}), {idx}, reshape(source, {-1}), accumulate), self.sizes());
}

Tensor argwhere(const Tensor& self) {
  WICK_CHECK(self.defined(), "argwhere: the input is an undefined tensor");
  NoGradGuard no_grad;
  const Device dev = self.device();
  const Tensor nz = native::contiguous(native::reshape(self.dtype() == kBool ? self : self.ne(Scalar(0)), {-1}));
  const Tensor pos = true_positions(nz);
  if (self.dim() == 0) return native::empty({pos.numel(), 0}, kInt64, dev);
  std::vector<Tensor> coords;
  for (int64_t k = 0; k < self.dim(); ++k) {
    DimVector s(static_cast<size_t>(self.dim()), 1);
    s[static_cast<size_t>(k)] = self.size(k);
    const Tensor c = native::view(native::arange(0, self.size(k), 1, kInt64, dev), s);
    coords.push_back(native::index_select(native::reshape(native::expand(c, self.sizes()), {-1}), 0, pos));
  }
  return stack(coords, 1);
}

Tensor isin(const Tensor& elements, const Tensor& test_elements, bool /*assume_unique*/, bool invert) {
  WICK_CHECK(elements.defined() && test_elements.defined(), "isin: an operand is an undefined tensor");
  WICK_CHECK_TYPE(elements.dtype() != kBool && test_elements.dtype() != kBool,
                  "isin: bool operands are not supported (got {} and {}); compare with eq, or convert to int64",
                  elements.dtype(), test_elements.dtype());
  native::check_same_device("isin", {&elements, &test_elements});
  NoGradGuard no_grad;
  const DType t = promote_types(elements.dtype(), test_elements.dtype());
  const Device dev = elements.device();
  const Tensor e = native::to(elements, dev, t);
  // The sorted test values without NaN (sorted last; NaN equals nothing, and a NaN in the
  // sequence would misplace searchsorted's answers); each element's insertion point names the only
  // candidate equal to it.
  Tensor s = std::get<0>(sort(native::reshape(native::to(test_elements, dev, t), {-1}), 0));
  const int64_t m =
      s.numel() == 0 ? 0 : native::reduce(ReduceOp::Sum, native::to(s.eq(s), dev, kInt64), {0}, false).item<int64_t>();
  Tensor found;
  if (m == 0) {
    found = native::zeros(elements.sizes(), kBool, dev);
  } else {
    s = native::narrow(s, 0, 0, m);
    Tensor at = searchsorted(s, e);
    at = native::where(at.ge(Scalar(m)), native::full({}, Scalar(m - 1), kInt64, dev), at);
    const Tensor cand = native::reshape(native::index_select(s, 0, native::reshape(at, {-1})), elements.sizes());
    found = cand.eq(e);
  }
  return invert ? logical_not(found) : found;
}

Tensor isin(const Tensor& elements, Scalar test_element, bool assume_unique, bool invert) {
  WICK_CHECK(elements.defined(), "isin: the elements are an undefined tensor");
  return isin(elements,
              scalar_tensor(test_element,
                            TensorOptions(test_element.is_floating() ? kFloat64 : kInt64).device(elements.device())),
              assume_unique, invert);
}

Tensor isin(Scalar element, const Tensor& test_elements, bool assume_unique, bool invert) {
  WICK_CHECK(test_elements.defined(), "isin: the test elements are an undefined tensor");
  return isin(
      scalar_tensor(element, TensorOptions(element.is_floating() ? kFloat64 : kInt64).device(test_elements.device())),
      test_elements, assume_unique, invert);
}

Tensor diagflat(const Tensor& self, int64_t offset) {
  WICK_CHECK(self.defined(), "diagflat: the input is an undefined tensor");
  return diag(reshape(self, {-1}), offset);
}

Tensor combinations(const Tensor& self, int64_t r, bool with_replacement) {
  WICK_CHECK(self.defined(), "combinations: the input is an undefined tensor");
  WICK_CHECK(self.dim() == 1, "combinations: expects a 1-d tensor, got shape {}; flatten it first", shape_str(self));
  WICK_CHECK(r >= 0, "combinations: r must be >= 0, got {}", r);
  const int64_t n = self.size(0);
  const Device dev = self.device();
  if (r == 0) return index_select(self, 0, native::empty({0}, kInt64, dev));
  // The positions of every combination, lexicographically; the count is checked before listing.
  int64_t count = (with_replacement ? n > 0 : n >= r) ? 1 : 0;
  for (int64_t i = 0; count > 0 && i < r; ++i) {
    const int64_t top = with_replacement ? n + i : n - i;  // C(n + r - 1, r) or C(n, r), built up exactly
    int64_t c = 0, values = 0;
    const bool over = mul_overflow(count, top, &c) || mul_overflow(c / (i + 1), r, &values);
    WICK_CHECK(!over && values < (int64_t{1} << 34),
               "combinations: {} elements taken {} at a time give more than 2^34 values; use fewer", n, r);
    count = c / (i + 1);
  }
  std::vector<int64_t> pos;
  pos.reserve(static_cast<size_t>(count * r));
  std::vector<int64_t> c(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) c[static_cast<size_t>(i)] = with_replacement ? 0 : i;
  for (int64_t k = 0; k < count; ++k) {
    pos.insert(pos.end(), c.begin(), c.end());
    int64_t i = r - 1;  // the last position that can still move right
    while (i >= 0 && c[static_cast<size_t>(i)] == (with_replacement ? n - 1 : n - r + i)) --i;
    if (i < 0) break;
    ++c[static_cast<size_t>(i)];
    for (int64_t j = i + 1; j < r; ++j)
      c[static_cast<size_t>(j)] = c[static_cast<size_t>(with_replacement ? i : j - 1)] + (with_replacement ? 0 : 1);
  }
  const Tensor idx = tensor(pos, {static_cast<int64_t>(pos.size())}).to(dev);
  return reshape(index_select(self, 0, idx), {count, r});
}

Tensor vander(const Tensor& x, std::optional<int64_t> N, bool increasing) {
  WICK_CHECK(x.defined(), "vander: x is an undefined tensor");
  WICK_CHECK(x.dim() == 1, "vander: x must be 1-d, got shape {}", shape_str(x));
  const int64_t n = x.size(0), cols = N.value_or(n);
  WICK_CHECK(cols >= 0, "vander: N must be >= 0, got {}", cols);
  const DType t = promote_types(x.dtype(), kInt64);
  const Tensor xc = unsqueeze(x.dtype() == t ? x : to(x, x.device(), t), 1);
  if (cols == 0) return clone(expand(xc, {n, 0}));
  Tensor out = full({n, 1}, 1, TensorOptions(t).device(x.device()));
  if (cols > 1) out = cat({out, cumprod(expand(xc, {n, cols - 1}), 1)}, 1);
  return increasing ? out : flip(out, {1});
}

}  // namespace wick
