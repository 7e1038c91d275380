// meshgrid, cartesian_prod, tril_indices / triu_indices, diag_embed, block_diag and kron: tensors
// built from others. Every differentiable one is composed of differentiable ops (reshape,
// expand, transpose, stack, where, cat, permute, mul, to), so gradients, double backward and
// every device come with no formula or kernel of its own; the index factories are host loops.
//
// Note [Building tensors]
// meshgrid views each input as [1, .., n_i, .., 1] and expands it (the grids are views, as
// PyTorch's); "xy" swaps the first two inputs before and the first two grids after, so the
// first input varies along dim 1 and the second along dim 0.
// cartesian_prod stacks the flattened "ij" grids as columns (one input is returned as it is, as
// PyTorch). diag_embed puts the last dim on the diagonal of an [n, n] block with `where`, pads it
// with zero blocks to [n + |offset|, n + |offset|] and permutes the two new dims to dim1 and dim2
// (where, unlike a product with an identity, keeps an inf off the other entries). block_diag cats
// each block between zero blocks into its rows, then cats the rows; the dtype is the inputs'
// result type. kron multiplies a viewed as [a0, 1, a1, 1, ...] by b as [1, b0, 1, b1, ...] and
// reshapes to [a0 b0, a1 b1, ...], PyTorch's own algorithm.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "host_ops.h"
#include "op_helpers.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {

// The dtype PyTorch's result_type gives a list: dimensioned tensors first, 0-d ones only where
// they are of a higher category (wick's dtypes: bool < int64 < float32 < float64).
DType list_result_type(const std::vector<Tensor>& ts) {
  std::optional<DType> dims, zero;
  for (const Tensor& t : ts) {
    std::optional<DType>& slot = t.dim() > 0 ? dims : zero;
    slot = slot ? promote_types(*slot, t.dtype()) : t.dtype();
  }
  if (!dims) return zero.value_or(kFloat32);
  if (!zero || is_floating(*dims)) return *dims;
  return (*dims == kBool || is_floating(*zero)) ? promote_types(*dims, *zero) : *dims;
}

void check_list(const char* op, const std::vector<Tensor>& ts) {
  for (size_t i = 0; i < ts.size(); ++i) {
    WICK_CHECK(ts[i].defined(), "{}: tensor {} is undefined", op, i);
    WICK_CHECK(ts[i].device() == ts[0].device(),
               "{}: tensor {} is on {} but tensor 0 is on {}; move them to one device", op, i, ts[i].device(),
               ts[0].device());
  }
}

// The sum of clamp(x, 0, col) over x in [a, b) (a <= b, b - a < 2^63, 0 <= col < 2^63): exact in
// 128 bits, so the count of a triangle needs no loop over its rows.
__int128 clamped_sum(__int128 a, __int128 b, __int128 col) {
  const __int128 lo = std::max<__int128>(a, 0), hi = std::min(b, col);
  const __int128 ramp = hi > lo ? (lo + hi - 1) * (hi - lo) / 2 : 0;
  const __int128 from = std::max(a, col);
  return ramp + (b > from ? col * (b - from) : 0);
}

// Row r's columns [c0, c1) of the triangle: c - r <= offset (lower) or c - r >= offset (upper),
// within [0, col). r + offset is saturated to [-1, col] first, so no sum overflows.
std::pair<int64_t, int64_t> tri_row(int64_t r, int64_t col, int64_t offset, bool lower) {
  const int64_t d = offset < -r ? -1 : offset > col - r ? col : r + offset;
  return lower ? std::pair<int64_t, int64_t>{0, std::min(col, d + 1)}
               : std::pair<int64_t, int64_t>{std::max<int64_t>(0, d), col};
}

Tensor tri_indices(const char* op, int64_t row, int64_t col, int64_t offset, TensorOptions opts, bool lower) {
  WICK_CHECK(row >= 0 && col >= 0, "{}: row and col must be non-negative, got row {} and col {}", op, row, col);
  WICK_CHECK_TYPE(opts.dtype_ == kInt64, "{}: the indices are int64, got dtype {}; pass TensorOptions(kInt64)", op,
                  opts.dtype_);
  const __int128 r = row, c = col, o = offset;
  const __int128 total = lower ? clamped_sum(o + 1, r + o + 1, c) : r * c - clamped_sum(o, r + o, c);
  WICK_CHECK(total <= INT64_MAX / 2,
             "{}: row {} and col {} with offset {} give more indices than an int64 tensor can count", op, row, col,
             offset);
  const int64_t n = static_cast<int64_t>(total);
  Tensor h = native::empty({2, n}, kInt64, opts.device_.is_cpu() ? opts.device_ : kCPU);  // typed error if too big
  int64_t* rows = static_cast<int64_t*>(h.data_ptr());
  int64_t* cols = rows + n;
  // Only the rows that hold an index are visited (lower: from r = -offset on; upper: up to col - offset).
  const int64_t first = lower ? static_cast<int64_t>(std::clamp<__int128>(-o, 0, r)) : 0;
  const int64_t last = lower ? row : static_cast<int64_t>(std::clamp<__int128>(c - o, 0, r));
  int64_t k = 0;
  for (int64_t i = first; i < last && k < n; ++i) {
    const auto [c0, c1] = tri_row(i, col, offset, lower);
    for (int64_t j = c0; j < c1; ++j, ++k) {
      rows[k] = i;
      cols[k] = j;
    }
  }
  if (opts.device_ == h.device()) return h;
  Tensor out = native::empty({2, n}, kInt64, opts.device_);
  native::copy_(out, h);
  return out;
}

}  // namespace

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing) {
  WICK_CHECK(!tensors.empty(), "meshgrid: expects at least one tensor, got none");
  WICK_CHECK(indexing == "ij" || indexing == "xy", "meshgrid: indexing must be \"ij\" or \"xy\", got \"{}\"", indexing);
  check_list("meshgrid", tensors);
  for (size_t i = 0; i < tensors.size(); ++i) {
    WICK_CHECK(tensors[i].dim() <= 1, "meshgrid: expects 0-d or 1-d tensors, tensor {} has shape {}", i,
               shape_str(tensors[i]));
    WICK_CHECK_TYPE(tensors[i].dtype() == tensors[0].dtype(),
                    "meshgrid: tensor {} is {} but tensor 0 is {}; give them one dtype", i, tensors[i].dtype(),
                    tensors[0].dtype());
  }
  std::vector<Tensor> in = tensors;
  const bool swap = indexing == "xy" && in.size() >= 2;
  if (swap) std::swap(in[0], in[1]);
  DimVector shape;
  for (const Tensor& t : in) shape.push_back(t.numel());
  std::vector<Tensor> grids;
  for (size_t i = 0; i < in.size(); ++i) {
    DimVector line(in.size(), 1);
    line[i] = -1;
    grids.push_back(expand(reshape(in[i], line), shape));
  }
  if (swap) std::swap(grids[0], grids[1]);
  return grids;
}

Tensor cartesian_prod(const std::vector<Tensor>& tensors) {
  WICK_CHECK(!tensors.empty(), "cartesian_prod: expects at least one 1-d tensor, got none");
  for (size_t i = 0; i < tensors.size(); ++i)
    WICK_CHECK(tensors[i].defined() && tensors[i].dim() == 1, "cartesian_prod: expects 1-d tensors, tensor {} has {}",
               i, tensors[i].defined() ? "shape " + shape_str(tensors[i]) : std::string("no value (undefined)"));
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> grids = meshgrid(tensors, "ij");
  for (Tensor& g : grids) g = reshape(g, {-1});
  return stack(grids, 1);
}

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, TensorOptions opts) {
  return tri_indices("tril_indices", row, col, offset, opts, true);
}

Tensor triu_indices(int64_t row, int64_t col, int64_t offset, TensorOptions opts) {
  return tri_indices("triu_indices", row, col, offset, opts, false);
}

Tensor diag_embed(const Tensor& a, int64_t offset, int64_t dim1, int64_t dim2) {
  WICK_CHECK(a.defined(), "diag_embed: the input is an undefined tensor");
  WICK_CHECK_INDEX(a.dim() > 0,
                   "diag_embed: the input must have at least one dim (its last goes on the diagonal), "
                   "got a 0-d tensor");
  const int64_t out_dims = a.dim() + 1;
  const int64_t d1 = native::wrap_dim(dim1, out_dims, "diag_embed"),
                d2 = native::wrap_dim(dim2, out_dims, "diag_embed");
  WICK_CHECK(d1 != d2, "diag_embed: dim1 and dim2 are both dim {} of the {}-d result; the diagonal needs two dims", d1,
             out_dims);
  const Device dev = a.device();
  WICK_CHECK(offset != INT64_MIN, "diag_embed: the offset {} has no absolute value in int64", offset);
  const int64_t n = a.size(-1), k = std::abs(offset);
  int64_t m = 0;
  WICK_CHECK(!add_overflow(n, k, &m),
             "diag_embed: the input {} with offset {} gives a diagonal block of more than "
             "2^63 rows",
             shape_str(a), offset);
  const Tensor pos = native::arange(0, n, 1, kInt64, dev);
  const Tensor on_diag = native::binary(BinaryOp::Eq, native::view(pos, {n, 1}), pos);
  Tensor block = where(on_diag, unsqueeze(a, -1), native::zeros({}, a.dtype(), dev));  // [..., n, n]
  if (k > 0) {
    DimVector batch;
    for (int64_t j = 0; j + 1 < a.dim(); ++j) batch.push_back(a.size(j));
    auto zero_block = [&](int64_t r, int64_t c) {
      DimVector s = batch;
      s.push_back(r);
      s.push_back(c);
      return native::zeros(s, a.dtype(), dev);
    };
    if (offset > 0)  // block[i, i] -> [i, i + k]: zero columns on the left, zero rows below
      block = cat({cat({zero_block(n, k), block}, -1), zero_block(k, m)}, -2);
    else  // block[i, i] -> [i + k, i]: zero rows above, zero columns on the right
      block = cat({cat({zero_block(k, n), block}, -2), zero_block(m, k)}, -1);
  }
  DimVector perm(static_cast<size_t>(out_dims));
  int64_t next = 0;
  for (int64_t j = 0; j < out_dims; ++j)
    perm[static_cast<size_t>(j)] = j == d1 ? out_dims - 2 : j == d2 ? out_dims - 1 : next++;
  return contiguous(permute(block, perm));
}

Tensor block_diag(const std::vector<Tensor>& tensors) {
  check_list("block_diag", tensors);
  for (size_t i = 0; i < tensors.size(); ++i)
    WICK_CHECK(tensors[i].dim() <= 2, "block_diag: expects tensors of 2 or fewer dims, tensor {} has shape {}", i,
               shape_str(tensors[i]));
  const DType dtype = list_result_type(tensors);
  const Device dev = tensors.empty() ? kCPU : tensors[0].device();
  std::vector<Tensor> blocks;
  int64_t cols = 0;
  for (const Tensor& t : tensors) {
    const Tensor b = t.dim() == 2 ? t : reshape(t, {1, t.numel()});
    blocks.push_back(b.dtype() == dtype ? b : to(b, dev, dtype));
    cols += b.size(1);
  }
  if (blocks.empty()) return native::empty({1, 0}, dtype, dev);
  std::vector<Tensor> rows;
  int64_t before = 0;
  for (const Tensor& b : blocks) {
    const int64_t r = b.size(0), c = b.size(1);
    rows.push_back(
        cat({native::zeros({r, before}, dtype, dev), b, native::zeros({r, cols - before - c}, dtype, dev)}, 1));
    before += c;
  }
  return cat(rows, 0);
}

Tensor kron(const Tensor& a, const Tensor& b) {
  WICK_CHECK(a.defined() && b.defined(), "kron: both operands must be defined");
  native::check_same_device("kron", {&a, &b});
  const int64_t n = std::max(a.dim(), b.dim()), pad_a = n - a.dim(), pad_b = n - b.dim();
  DimVector a_view, b_view, out;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t sa = i >= pad_a ? a.size(i - pad_a) : 1, sb = i >= pad_b ? b.size(i - pad_b) : 1;
    a_view.push_back(sa);
    a_view.push_back(1);
    b_view.push_back(1);
    b_view.push_back(sb);
    int64_t p = 0;
    WICK_CHECK(!mul_overflow(sa, sb, &p),
               "kron: the operands {} and {} give dim {} of size {} * {}, which overflows int64", shape_str(a),
               shape_str(b), i, sa, sb);
    out.push_back(p);
  }
  return reshape(mul(reshape(a, a_view), reshape(b, b_view)), out);
}

}  // namespace wick
