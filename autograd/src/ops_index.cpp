// Differentiable indexing: index_select, index_add, gather, scatter_add; and matmul.
#include "op_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index) {
  Tensor out = native::index_select(a, dim, index);
  if (needs_grad({&a})) {
    DimVector shape(a.sizes());
    record_function("IndexSelectBackward", {a}, {out},
                    [shape, dim](const VL& g, const VL& s) -> VL {
                      Tensor idx = s[0].dim() == 0 ? native::unsqueeze(s[0], 0) : s[0];
                      Tensor gg = shape.empty() ? reshape(g[0], {1}) : g[0];
                      Tensor z = zeros(shape.empty() ? DimVector{1} : shape, g[0].options());
                      Tensor r = index_add(z, dim, idx, gg);
                      return {shape.empty() ? reshape(r, {}) : r};
                    },
                    {index});
  }
  return out;
}

Tensor index_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = native::index_add(a, dim, index, src);
  if (needs_grad({&a, &src})) {
    record_function("IndexAddBackward", {a, src}, {out},
                    [dim](const VL& g, const VL& s) -> VL {
                      return {g[0], index_select(g[0], dim, s[0])};
                    },
                    {index});
  }
  return out;
}

Tensor gather(const Tensor& a, int64_t dim, const Tensor& index) {
  Tensor out = native::gather(a, dim, index);
  if (needs_grad({&a})) {
    DimVector shape(a.sizes());
    record_function("GatherBackward", {a}, {out},
                    [shape, dim](const VL& g, const VL& s) -> VL {
                      return {scatter_add(zeros(shape, g[0].options()), dim, s[0], g[0])};
                    },
                    {index});
  }
  return out;
}

Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = native::scatter_add(a, dim, index, src);
  if (needs_grad({&a, &src})) {
    DimVector src_shape(src.sizes());
    record_function("ScatterAddBackward", {a, src}, {out},
                    [dim, src_shape](const VL& g, const VL& s) -> VL {
                      // index may be smaller than src in any dim: src elements it never reads get zero gradient
                      // (gather alone would return index's shape; PyTorch 1.13 fails there).
                      Tensor gs = gather(g[0], dim, s[0]);
                      for (size_t d = 0; d < src_shape.size(); ++d) {
                        const int64_t missing = src_shape[d] - gs.size(static_cast<int64_t>(d));
                        if (missing == 0) continue;
                        DimVector pad(gs.sizes());
                        pad[d] = missing;
                        gs = cat({gs, zeros(pad, gs.options())}, static_cast<int64_t>(d));
                      }
                      return {g[0], gs};
                    },
                    {index});
  }
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  Tensor out = native::matmul(a, b);
  if (needs_grad({&a, &b})) {
    DimVector sa(a.sizes()), sb(b.sizes());
    const DType da = a.dtype(), db = b.dtype();
    const bool ra = a.requires_grad(), rb = b.requires_grad();
    record_function("MatmulBackward", {a, b}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      // Restore the vector dims matmul removed, then use the 2-d/batched formulas and reduce
                      // broadcast batch dims.
                      Tensor x = !rb ? Tensor() : sa.size() == 1 ? unsqueeze(s[0], 0) : s[0];
                      Tensor y = !ra ? Tensor() : sb.size() == 1 ? unsqueeze(s[1], 1) : s[1];
                      Tensor go = g[0];
                      if (sa.size() == 1) go = unsqueeze(go, go.dim() - (sb.size() == 1 ? 0 : 1));
                      if (sb.size() == 1) go = unsqueeze(go, go.dim());
                      Tensor ga, gb;
                      if (ra) {
                        ga = matmul(go, transpose(y, -1, -2));
                        DimVector xs(sa);
                        if (sa.size() == 1) xs.insert(0, 1);
                        ga = sum_to(ga, xs);
                        if (sa.size() == 1) ga = reshape(ga, sa);
                        if (ga.dtype() != da) ga = to(ga, ga.device(), da);
                      }
                      if (rb) {
                        gb = matmul(transpose(x, -1, -2), go);
                        DimVector ys(sb);
                        if (sb.size() == 1) ys.push_back(1);
                        gb = sum_to(gb, ys);
                        if (sb.size() == 1) gb = reshape(gb, sb);
                        if (gb.dtype() != db) gb = to(gb, gb.device(), db);
                      }
                      return {ga, gb};
                    },
                    {rb ? a : Tensor(), ra ? b : Tensor()});
  }
  return out;
}

Tensor mm(const Tensor& a, const Tensor& b) {
  native::check_same_device("mm", {&a, &b});  // before matmul's check, so that errors name mm
  WICK_CHECK(a.dim() == 2 && b.dim() == 2, "mm: expected 2-d operands, got shapes [{}] and [{}]",
             fmt::join(a.sizes(), ", "), fmt::join(b.sizes(), ", "));
  return matmul(a, b);
}

}  // namespace wick
