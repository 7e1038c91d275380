// scatter_reduce and index_put: flat target positions, then index_add, a segmented scan and
// where, so every device runs them with no kernel of their own.
//
// Note [scatter_reduce]: the index is turned into flat target positions in self; sum and mean
// are an index_add (mean divides by the count, plus one with include_self); prod, amax and amin
// sort the values by target and run a segmented log-depth scan (each step combines an element
// with the one 2^k before it when both have the same target), then each written position takes
// its segment's last value. The node's backward is PyTorch 1.13's scatter_reduce_backward
// written on this API: amax/amin split the gradient evenly among self (counted even when
// include_self is false, as PyTorch) and the src values equal to the result; prod divides by the
// input except at a lone zero, which gets the product of the others.
#include "op_helpers.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {
enum class Reduce { Sum, Prod, Mean, Amax, Amin };

struct Targets {
  Tensor t;      // int64 [K]: the flat position in self that each index element names
  Tensor hit;    // bool [M]: the positions written
  Tensor count;  // int64 [M]: how many values land on each position
};

Tensor combine(Reduce r, const Tensor& a, const Tensor& b) {
  return r == Reduce::Prod ? mul(a, b) : r == Reduce::Amax ? maximum(a, b) : minimum(a, b);
}

// The forward (no graph): Note [scatter_reduce].
Tensor reduce_forward(Reduce r, const Tensor& self, const Tensor& v, const Targets& tg, bool include_self) {
  NoGradGuard no_grad;
  const int64_t m = self.numel(), k = v.numel();
  const Device dev = self.device();
  if (k == 0) return clone(self);
  if (r == Reduce::Sum || r == Reduce::Mean) {
    Tensor base = include_self ? self : where(tg.hit, native::zeros({}, self.dtype(), dev), self);
    Tensor s = index_add(base, 0, tg.t, v);
    if (r == Reduce::Sum) return s;
    Tensor n = include_self ? tg.count + 1 : tg.count;
    n = where(n.eq(0), native::ones({}, kInt64, dev), n);
    if (is_floating(self.dtype())) return div(s, to(n, dev, self.dtype()));
    return to(floor(div(to(s, dev, kFloat64), to(n, dev, kFloat64))), dev, self.dtype());  // floor division
  }
  Tensor order = native::argsort(tg.t, 0, false);
  Tensor ts = index_select(tg.t, 0, order), x = index_select(v, 0, order);
  for (int64_t s = 1; s < k; s *= 2) {
    Tensor same = eq(narrow(ts, 0, s, k - s), narrow(ts, 0, 0, k - s));
    Tensor later = narrow(x, 0, s, k - s);
    x = cat({narrow(x, 0, 0, s), where(same, combine(r, narrow(x, 0, 0, k - s), later), later)}, 0);
  }
  Tensor last = cat({ne(narrow(ts, 0, 0, k - 1), narrow(ts, 0, 1, k - 1)), native::ones({1}, kBool, dev)}, 0);
  Tensor pos = true_positions(last);
  Tensor targets = index_select(ts, 0, pos), seg = index_select(x, 0, pos);
  if (include_self) seg = combine(r, index_select(self, 0, targets), seg);
  // Each written position reads its segment's result (the targets are distinct).
  Tensor slot = native::index_add(native::zeros({m}, kInt64, dev), 0, targets,
                                  native::arange(0, targets.numel(), 1, kInt64, dev));
  return where(tg.hit, index_select(seg, 0, slot), self);
}

// self [M] and v [K] reduced at tg, recorded with PyTorch's gradient formulas.
Tensor reduce_flat(Reduce r, const Tensor& self, const Tensor& v, const Targets& tg, bool include_self) {
  Tensor out = reduce_forward(r, self, v, tg, include_self);
  if (!needs_grad({&self, &v})) return out;
  record_function("ScatterReduceBackward", {self, v}, {out},
                  [r, tg, include_self](const VL& g, const VL& s) -> VL {
                    const Tensor &x = s[0], &src = s[1], &res = s[2], &gr = g[0];
                    Tensor gs, gv;
                    if (r == Reduce::Sum) {
                      gs = gr;
                      gv = index_select(gr, 0, tg.t);
                    } else if (r == Reduce::Mean) {
                      Tensor n = include_self ? tg.count + 1 : tg.count;
                      n = where(n.eq(0), Scalar(int64_t{1}), n);
                      gs = div(gr, to(n, gr.device(), gr.dtype()));
                      gv = index_select(gs, 0, tg.t);
                    } else if (r == Reduce::Prod) {
                      Tensor ms = where(x.eq(0), Scalar(1.0), x);
                      gs = div(mul(gr, reduce_flat(r, ms, src, tg, include_self)), ms);
                      Tensor zero = src.eq(0);
                      Tensor zeros_at =
                          index_select(index_add(zeros_like(x), 0, tg.t, to(zero, x.device(), x.dtype())), 0, tg.t);
                      Tensor single = logical_and(zero, zeros_at.eq(1));
                      Tensor alt = index_select(
                          mul(gr, reduce_flat(r, x, where(single, Scalar(1.0), src), tg, include_self)), 0, tg.t);
                      gv = where(single, alt, div(index_select(mul(gr, res), 0, tg.t), where(zero, Scalar(1.0), src)));
                    } else {
                      Tensor self_is = to(x.eq(res), x.device(), x.dtype());
                      Tensor src_is = to(src.eq(index_select(res, 0, tg.t)), x.device(), x.dtype());
                      Tensor share = div(gr, index_add(self_is, 0, tg.t, src_is));
                      gs = mul(self_is, share);
                      gv = mul(src_is, index_select(share, 0, tg.t));
                    }
                    if (!include_self) gs = where(tg.hit, Scalar(0.0), gs);
                    return {gs, gv};
                  },
                  {self, v}, {out});
  return out;
}
}  // namespace

Tensor scatter_reduce(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self) {
  WICK_CHECK(a.defined() && index.defined() && src.defined(), "scatter_reduce: an operand is an undefined tensor");
  Reduce r = Reduce::Sum;
  if (reduce == "prod")
    r = Reduce::Prod;
  else if (reduce == "mean")
    r = Reduce::Mean;
  else if (reduce == "amax")
    r = Reduce::Amax;
  else if (reduce == "amin")
    r = Reduce::Amin;
  else
    WICK_CHECK(reduce == "sum", "scatter_reduce: reduce must be sum, prod, mean, amax or amin, got '{}'", reduce);
  WICK_CHECK_TYPE(index.dtype() == kInt64, "scatter_reduce: index must be int64, got {}", index.dtype());
  WICK_CHECK_TYPE(src.dtype() == a.dtype(), "scatter_reduce: src is {} but self is {}; convert src to self's dtype",
                  src.dtype(), a.dtype());
  native::check_same_device("scatter_reduce", {&a, &index, &src});
  if (a.dim() == 0 && index.dim() == 0 && src.dim() == 0) {
    native::wrap_dim(dim, 0, "scatter_reduce");  // only 0 and -1 name a 0-dim tensor's dim
    return reshape(scatter_reduce(reshape(a, {1}), 0, reshape(index, {1}), reshape(src, {1}), reduce, include_self),
                   {});
  }
  WICK_CHECK(index.dim() == a.dim() && src.dim() == a.dim(),
             "scatter_reduce: self {}, index {} and src {} need the same number of dims", shape_str(a.sizes()),
             shape_str(index.sizes()), shape_str(src.sizes()));
  const int64_t d = native::wrap_dim(dim, a.dim(), "scatter_reduce");
  for (int64_t k = 0; k < a.dim(); ++k)
    WICK_CHECK_INDEX(index.size(k) <= src.size(k) && (k == d || index.size(k) <= a.size(k)),
                     "scatter_reduce: index {} is larger than src {} or self {} in dim {} (scattering along dim {})",
                     shape_str(index.sizes()), shape_str(src.sizes()), shape_str(a.sizes()), k, d);
  if (index.numel() > 0) {
    const int64_t lo = min_of(index), hi = max_of(index);
    WICK_CHECK_INDEX(lo >= 0 && hi < a.size(d),
                     "scatter_reduce: index values span [{}, {}] but dim {} of self {} has size {} (valid: [0, {}])",
                     lo, hi, d, shape_str(a.sizes()), a.size(d), a.size(d) - 1);
  }
  Targets tg;
  const Device dev = a.device();
  {
    NoGradGuard no_grad;
    const DimVector strides = native::contiguous_strides(a.sizes());
    Tensor t = native::binary(BinaryOp::Mul, index, Scalar(strides[static_cast<size_t>(d)]));
    for (int64_t k = 0; k < a.dim(); ++k) {
      if (k == d) continue;
      DimVector s(static_cast<size_t>(a.dim()), 1);
      s[static_cast<size_t>(k)] = index.size(k);
      Tensor ar = native::view(native::arange(0, index.size(k), 1, kInt64, dev), s);
      t = native::binary(BinaryOp::Add, t, native::binary(BinaryOp::Mul, ar, Scalar(strides[static_cast<size_t>(k)])));
    }
    tg.t = native::contiguous(native::reshape(t, {-1}));
    tg.count =
        native::index_add(native::zeros({a.numel()}, kInt64, dev), 0, tg.t, native::ones({tg.t.numel()}, kInt64, dev));
    tg.hit = tg.count.gt(0);
  }
  Tensor v = src;
  for (int64_t k = 0; k < a.dim(); ++k)
    if (v.size(k) != index.size(k)) v = narrow(v, k, 0, index.size(k));
  return reshape(reduce_flat(r, reshape(a, {-1}), reshape(v, {-1}), tg, include_self), a.sizes());
}

Tensor index_put(const Tensor& a, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  WICK_CHECK(a.defined() && values.defined(), "index_put: the tensor or the values are undefined");
  WICK_CHECK(!indices.empty(), "index_put: no index tensors given for the tensor of shape {}", shape_str(a.sizes()));
  WICK_CHECK_TYPE(values.dtype() == a.dtype(), "index_put: the values are {} but the tensor is {}; convert the values",
                  values.dtype(), a.dtype());
  native::check_same_device("index_put", {&a, &values});
  const Device dev = a.device();
  // Bool masks become one int64 index per dim they cover.
  std::vector<Tensor> idx;
  for (size_t j = 0; j < indices.size(); ++j) {
    const Tensor& ix = indices[j];
    WICK_CHECK(ix.defined(), "index_put: index {} is undefined; give an int64 or bool tensor for each leading dim", j);
    native::check_same_device("index_put", {&a, &ix});
    if (ix.dtype() != kBool) {
      WICK_CHECK_TYPE(ix.dtype() == kInt64, "index_put: index {} is {}; indices must be int64 or bool", j, ix.dtype());
      idx.push_back(ix);
      continue;
    }
    // PyTorch 1.13 reads a 0-d mask as a new dim of size 1 and then fails inside its kernel for
    // tensors of 2+ dims; wick refuses it before reading any index.
    WICK_CHECK_INDEX(ix.dim() > 0,
                     "index_put: index {} is a 0-d bool mask; a mask needs the shape of the dims it selects "
                     "(use wick::where(mask, values, tensor) for a whole-tensor condition)",
                     j);
    const int64_t at = static_cast<int64_t>(idx.size());
    bool fits = at + ix.dim() <= a.dim();
    for (int64_t k = 0; fits && k < ix.dim(); ++k) fits = a.size(at + k) == ix.size(k);
    WICK_CHECK_INDEX(fits, "index_put: the bool mask {} of shape {} does not match dims {}.. of the tensor of shape {}",
                     j, shape_str(ix.sizes()), at, shape_str(a.sizes()));
    Tensor pos = true_positions(native::contiguous(native::reshape(ix, {-1})));
    for (int64_t k = 0; k < ix.dim(); ++k) {
      DimVector s(static_cast<size_t>(ix.dim()), 1);
      s[static_cast<size_t>(k)] = ix.size(k);
      Tensor coord = native::view(native::arange(0, ix.size(k), 1, kInt64, dev), s);
      idx.push_back(native::index_select(native::reshape(native::expand(coord, ix.sizes()), {-1}), 0, pos));
    }
  }
  const size_t n = idx.size();
  WICK_CHECK_INDEX(static_cast<int64_t>(n) <= a.dim(), "index_put: {} indices for a tensor of shape {}", n,
                   shape_str(a.sizes()));
  DimVector b(idx[0].sizes());
  for (const Tensor& ix : idx) b = native::broadcast_shapes(b, ix.sizes(), "index_put (the index tensors)");
  Tensor lin;
  for (size_t j = 0; j < n; ++j) {
    const int64_t s = a.size(static_cast<int64_t>(j));
    if (idx[j].numel() > 0) {
      const int64_t lo = min_of(idx[j]), hi = max_of(idx[j]);
      WICK_CHECK_INDEX(lo >= -s && hi < s,
                       "index_put: index {} holds values in [{}, {}] but dim {} of the tensor of shape {} has size {} "
                       "(valid: [{}, {}])",
                       j, lo, hi, j, shape_str(a.sizes()), s, -s, s - 1);
    }
    Tensor w = native::where(idx[j].lt(0), native::binary(BinaryOp::Add, idx[j], Scalar(s)), idx[j]);
    lin = j == 0 ? w : native::binary(BinaryOp::Add, native::binary(BinaryOp::Mul, lin, Scalar(s)), w);
  }
  lin = native::contiguous(native::reshape(native::expand(lin, b), {-1}));
  DimVector vshape(b), flat{lin.numel()}, self_flat{1};
  for (size_t j = 0; j < n; ++j) self_flat[0] *= a.size(static_cast<int64_t>(j));
  for (int64_t k = static_cast<int64_t>(n); k < a.dim(); ++k) {
    vshape.push_back(a.size(k));
    flat.push_back(a.size(k));
    self_flat.push_back(a.size(k));
  }
  const DimVector vb = native::broadcast_shapes(vshape, values.sizes(), "index_put (the values)");
  WICK_CHECK(vb == vshape, "index_put: values of shape {} cannot be broadcast to the indexed shape {}",
             shape_str(values.sizes()), shape_str(vshape));
  const int64_t total = lin.numel();
  if (total == 0) return clone(a);
  Tensor a2 = reshape(a, self_flat), v2 = reshape(expand(values, vshape), flat);
  if (accumulate) return reshape(index_add(a2, 0, lin, v2), a.sizes());
  // Without accumulate the last of repeated positions wins: keep it, then each written row reads
  // its value (where, so -0.0 and NaN arrive as they are).
  Tensor order = native::argsort(lin, 0, false);
  Tensor ls = native::index_select(lin, 0, order);
  Tensor last = native::cat(
      {native::narrow(ls, 0, 0, total - 1).ne(native::narrow(ls, 0, 1, total - 1)), native::ones({1}, kBool, dev)}, 0);
  Tensor keep = native::index_select(order, 0, true_positions(last));
  Tensor lu = native::index_select(lin, 0, keep);
  const int64_t m = self_flat[0], u = lu.numel();
  Tensor slot = native::index_add(native::zeros({m}, kInt64, dev), 0, lu, native::arange(0, u, 1, kInt64, dev));
  Tensor hit = native::index_add(native::zeros({m}, kInt64, dev), 0, lu, native::ones({u}, kInt64, dev)).gt(0);
  DimVector hs(self_flat.size(), 1);
  hs[0] = m;
  // The values' gradient is PyTorch 1.13's grad.index(indices): every repeat of a position gets
  // that position's gradient, the repeats that lost included.
  Tensor written = native::index_select(native::index_select(v2, 0, keep), 0, slot);
  if (needs_grad({&v2})) {
    record_function("IndexPutBackward", {v2}, {written},
                    [lin](const VL& g, const VL&) -> VL { return {index_select(g[0], 0, lin)}; });
  }
  return reshape(where(native::view(hit, hs), written, a2), a.sizes());
}

}  // namespace wick
