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

// Note [Batched GEMM without copies]
// matmul's operands, broadcast to [batch..., m, k] and [batch..., k, n], go to GEMM as they lie
// whenever each matrix is row-major or transposed with a leading dim (gemm_layout). The batch
// dims are split at the outermost dim from which on both operands' batch dims merge into one
// stride (size-1 dims merge with anything, broadcast dims have stride 0): those inner dims are
// one strided batched GEMM call, the outer ones a loop of such calls. So q @ k.transpose(-2, -1)
// on [B, H, L, E] views (heads split out of a [B, L, H*E] projection) and broadcast operands
// reach BLAS with no copy; only a matrix whose own two dims fit no GEMM layout is copied.
bool gemm_layout(const Tensor& x, bool& trans, int64_t& ld) {
  const int64_t n = x.dim();
  const int64_t r = x.sizes()[n - 2], c = x.sizes()[n - 1];
  const int64_t sr = x.strides()[n - 2], sc = x.strides()[n - 1];
  if ((sc == 1 || c == 1) && sr >= std::max<int64_t>(c, 1)) {
    trans = false;
    ld = std::max<int64_t>(sr, 1);
    return true;
  }
  if ((sr == 1 || r == 1) && sc >= std::max<int64_t>(r, 1)) {
    trans = true;
    ld = std::max<int64_t>(sc, 1);
    return true;
  }
  return false;
}

// out [nb, m, n] (contiguous) = a [batch..., m, k] @ b [batch..., k, n], nb = prod(batch), k > 0.
void batched_gemm(const Tensor& out, Tensor a, Tensor b, const DimVector& batch) {
  GemmArgs g{};
  if (!gemm_layout(a, g.trans_a, g.lda)) {
    a = contiguous(a);
    gemm_layout(a, g.trans_a, g.lda);
  }
  if (!gemm_layout(b, g.trans_b, g.ldb)) {
    b = contiguous(b);
    gemm_layout(b, g.trans_b, g.ldb);
  }
  const int64_t nbd = static_cast<int64_t>(batch.size());
  // Inner (merged) batch dims [split, nbd): their count and each operand's one stride.
  int64_t split = nbd, inner = 1, stride_a = 0, stride_b = 0;
  for (int64_t d = nbd - 1; d >= 0; --d) {
    const int64_t size = batch[d], sa = a.strides()[d], sb = b.strides()[d];
    if (size != 1 && inner != 1 && (sa != stride_a * inner || sb != stride_b * inner)) break;
    if (size != 1 && inner == 1) {
      stride_a = sa;
      stride_b = sb;
    }
    inner *= size;
    split = d;
  }
  const int64_t m = out.size(1), n = out.size(2);
  const size_t es = element_size(out.dtype());
  g.dtype = out.dtype();
  g.batch = inner;
  g.m = m;
  g.n = n;
  g.k = a.sizes()[a.dim() - 1];
  g.stride_a = stride_a;
  g.stride_b = stride_b;
  g.ldc = n;
  g.stride_c = m * n;
  int64_t outer = 1;
  for (int64_t d = 0; d < split; ++d) outer *= batch[d];
  DimVector index(static_cast<size_t>(split), 0);
  auto* pa = static_cast<const char*>(a.data_ptr());
  auto* pb = static_cast<const char*>(b.data_ptr());
  auto* pc = static_cast<char*>(out.data_ptr());
  for (int64_t o = 0; o < outer; ++o) {
    int64_t off_a = 0, off_b = 0;
    for (int64_t d = 0; d < split; ++d) {
      off_a += index[d] * a.strides()[d];
      off_b += index[d] * b.strides()[d];
    }
    g.a = pa + off_a * static_cast<int64_t>(es);
    g.b = pb + off_b * static_cast<int64_t>(es);
    g.c = pc + o * inner * m * n * static_cast<int64_t>(es);
    backend(out.device()).gemm(g);
    for (int64_t d = split - 1; d >= 0; --d) {  // next outer multi-index
      if (++index[d] < batch[d]) break;
      index[d] = 0;
    }
  }
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
  Tensor out = empty({nb, m, n}, dt, a.device());
  if (out.numel() > 0 && k == 0) fill_(out, 0);
  if (out.numel() > 0 && k > 0) batched_gemm(out, a, b, batch);  // Note [Batched GEMM without copies]
  DimVector os = batch;
  if (!a_vec) os.push_back(m);
  if (!b_vec) os.push_back(n);
  return view(out, os);
}

}  // namespace wick::native
