// matmul for every shape case of torch.matmul, built on one batched GEMM primitive.
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::native {

namespace {
// How a 2-d (or batch of 2-d) operand is passed to GEMM without a copy: row-major with
// leading dim ld, or transposed. Falls back to a contiguous copy.
struct GemmOperand {
  Tensor t;
  bool trans;
  int64_t ld;
};
GemmOperand gemm_operand(const Tensor& x) {  // x: [..., r, c] where batch dims are contiguous-compatible
  const int64_t n = x.dim();
  const int64_t r = x.sizes()[n - 2], c = x.sizes()[n - 1];
  const int64_t sr = x.strides()[n - 2], sc = x.strides()[n - 1];
  if ((sc == 1 || c == 1) && sr >= std::max<int64_t>(c, 1)) return {x, false, std::max<int64_t>(sr, 1)};
  if ((sr == 1 || r == 1) && sc >= std::max<int64_t>(r, 1)) return {x, true, std::max<int64_t>(sc, 1)};
  Tensor cx = contiguous(x);
  return {cx, false, std::max<int64_t>(c, 1)};
}
void check_matmul_operand(const Tensor& t, const char* which) {
  WICK_CHECK(t.defined(), "matmul: the {} operand is undefined", which);
  WICK_CHECK_TYPE(is_floating(t.dtype()),
                  "matmul: expected floating-point operands (float32 or float64) but the {} "
                  "operand is {}",
                  which, t.dtype());
  WICK_CHECK(t.dim() >= 1, "matmul: both operands need at least 1 dim, but the {} operand is 0-dim", which);
}
// out[m, n] (contiguous) = a[m, k] @ b[k, n] + beta * out, operands handed to GEMM as they lie
// (transposed or with a leading dim) and copied only when no GEMM layout fits.
void gemm_2d(const Tensor& out, const Tensor& a, const Tensor& b, double beta) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  if (out.numel() == 0) return;
  if (k == 0) {
    if (beta == 0) fill_(out, 0);
    return;
  }
  GemmOperand ga = gemm_operand(a), gb = gemm_operand(b);
  GemmArgs g{};
  g.dtype = out.dtype();
  g.batch = 1;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = ga.t.data_ptr();
  g.lda = ga.ld;
  g.stride_a = 0;
  g.trans_a = ga.trans;
  g.b = gb.t.data_ptr();
  g.ldb = gb.ld;
  g.stride_b = 0;
  g.trans_b = gb.trans;
  g.c = out.data_ptr();
  g.ldc = n;
  g.stride_c = m * n;
  g.beta = beta;
  backend(out.device()).gemm(g);
}
}  // namespace

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b) {
  check_matmul_operand(a, "first");
  check_matmul_operand(b, "second");
  if (bias.defined())
    check_same_device("addmm", {&bias, &a, &b});
  else
    check_same_device("addmm", {&a, &b});
  WICK_CHECK(a.dim() == 2 && b.dim() == 2, "addmm: expected 2-d operands, got shapes [{}] and [{}]",
             fmt::join(a.sizes(), ", "), fmt::join(b.sizes(), ", "));
  WICK_CHECK_TYPE(a.dtype() == b.dtype() && (!bias.defined() || bias.dtype() == a.dtype()),
                  "addmm: operands must share one dtype, got {}, {} and bias {}", a.dtype(), b.dtype(),
                  bias.defined() ? dtype_name(bias.dtype()) : "none");
  WICK_CHECK(a.size(1) == b.size(0),
             "addmm: shapes [{}] and [{}] cannot be multiplied ({} != {} in the contracted dim)",
             fmt::join(a.sizes(), ", "), fmt::join(b.sizes(), ", "), a.size(1), b.size(0));
  Tensor out = empty({a.size(0), b.size(1)}, a.dtype(), a.device());
  if (bias.defined()) {
    const DimVector joint = broadcast_shapes(bias.sizes(), out.sizes(), "addmm");  // throws naming both shapes
    WICK_CHECK(IntArrayRef(joint) == out.sizes(), "addmm: bias of shape [{}] does not broadcast to the output's [{}]",
               fmt::join(bias.sizes(), ", "), fmt::join(out.sizes(), ", "));
    if (out.numel()) copy_(out, bias);
  }
  gemm_2d(out, a, b, bias.defined() ? 1.0 : 0.0);
  return out;
}

Tensor mm(const Tensor& a, const Tensor& b) {
  check_same_device("mm", {&a, &b});
  WICK_CHECK(a.dim() == 2 && b.dim() == 2, "mm: expected 2-d operands, got shapes [{}] and [{}]",
             fmt::join(a.sizes(), ", "), fmt::join(b.sizes(), ", "));
  WICK_CHECK_TYPE(a.dtype() == b.dtype(), "mm: operands must have the same dtype, got {} and {}", a.dtype(), b.dtype());
  return matmul(a, b);
}

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  check_matmul_operand(a_in, "first");
  check_matmul_operand(b_in, "second");
  check_same_device("matmul", {&a_in, &b_in});
  const DType dt = promote_types(a_in.dtype(), b_in.dtype());
  Tensor a = a_in.dtype() == dt ? a_in : to(a_in, a_in.device(), dt);
  Tensor b = b_in.dtype() == dt ? b_in : to(b_in, b_in.device(), dt);
  const bool a_vec = a.dim() == 1, b_vec = b.dim() == 1;
  if (a_vec) a = unsqueeze(a, 0);
  if (b_vec) b = unsqueeze(b, 1);
  const int64_t m = a.sizes()[a.dim() - 2], k = a.sizes()[a.dim() - 1];
  const int64_t k2 = b.sizes()[b.dim() - 2], n = b.sizes()[b.dim() - 1];
  WICK_CHECK(k == k2, "matmul: shapes [{}] and [{}] cannot be multiplied ({} != {} in the contracted dim)",
             fmt::join(a_in.sizes(), ", "), fmt::join(b_in.sizes(), ", "), k, k2);
  // Broadcast batch dims.
  DimVector ab(IntArrayRef(a.sizes().data(), a.dim() - 2)), bb(IntArrayRef(b.sizes().data(), b.dim() - 2));
  DimVector batch = broadcast_shapes(ab, bb, "matmul");
  const int64_t nb = checked_numel(batch, "matmul");
  DimVector ae = batch, be = batch;
  ae.push_back(m);
  ae.push_back(k);
  be.push_back(k);
  be.push_back(n);
  a = expand(a, ae);
  b = expand(b, be);
  // Collapse batch dims: needs a layout where the batch has one stride.
  auto collapse = [&](const Tensor& x, int64_t r, int64_t c) {
    if (batch.empty()) return view(x, {1, r, c});
    Tensor y = x;
    // Broadcast batch with stride 0 can be kept only when it is stride 0 throughout.
    bool zero_batch = true;
    for (int64_t d = 0; d < x.dim() - 2; ++d) zero_batch = zero_batch && x.strides()[d] == 0;
    if (zero_batch) return as_strided(x, {nb, r, c}, {0, x.strides()[x.dim() - 2], x.strides()[x.dim() - 1]}, 0);
    return reshape(contiguous(y), {nb, r, c});
  };
  Tensor a3 = collapse(a, m, k), b3 = collapse(b, k, n);
  Tensor out = empty({nb, m, n}, dt, a.device());
  if (out.numel()) {
    if (k == 0) {
      fill_(out, 0);
    } else {
      GemmOperand ga = gemm_operand(a3), gb = gemm_operand(b3);
      GemmArgs g{};
      g.dtype = dt;
      g.batch = nb;
      g.m = m;
      g.n = n;
      g.k = k;
      g.a = ga.t.data_ptr();
      g.lda = ga.ld;
      g.stride_a = ga.t.strides()[0];
      g.trans_a = ga.trans;
      g.b = gb.t.data_ptr();
      g.ldb = gb.ld;
      g.stride_b = gb.t.strides()[0];
      g.trans_b = gb.trans;
      g.c = out.data_ptr();
      g.ldc = n;
      g.stride_c = m * n;
      backend(a.device()).gemm(g);
    }
  }
  DimVector os = batch;
  if (!a_vec) os.push_back(m);
  if (!b_vec) os.push_back(n);
  return view(out, os);
}

}  // namespace wick::native
