// wick::linalg's matrix functions and products: matrix_power, matrix_exp, cross, multi_dot and
// vecdot (wick/autograd/linalg_more.h), composed of differentiable ops as PyTorch 1.13's
// LinearAlgebra.cpp composes them; matrix_exp records PyTorch's block-matrix gradient.
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "linalg_internal.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"

namespace wick::linalg {

using namespace wick::detail;
using namespace detail;

Tensor matrix_power(const Tensor& A, int64_t n) {
  native::linalg_check_matrix(A, "linalg.matrix_power", true);
  if (n == 0) {  // I, connected to A with a zero gradient (as PyTorch's copy into a clone)
    const Tensor mask = native::full(A.sizes(), true, kBool, A.device());
    return where(mask, expand(eye_like(A, A.size(-1)), A.sizes()), A);
  }
  Tensor a = n < 0 ? inv(A) : A;
  uint64_t e = n < 0 ? uint64_t(0) - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);  // |n|, INT64_MIN too
  if (e == 1) return n < 0 ? a : clone(a);
  if (e == 2) return matmul(a, a);
  if (e == 3) return matmul(matmul(a, a), a);
  Tensor z, result;  // binary powering from the lowest bit, as PyTorch's
  while (e > 0) {
    const bool bit = e % 2;
    e /= 2;
    z = z.defined() ? matmul(z, z) : a;
    if (bit) result = result.defined() ? matmul(result, z) : z;
  }
  return result;
}

namespace {
// Taylor degrees and the 1-norm bounds up to which each is accurate in float64 and float32
// (PyTorch's thetas for its matrix_exp).
constexpr int kDegrees[6] = {1, 2, 4, 8, 12, 18};
constexpr double kTheta64[6] = {2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                                4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00};
constexpr double kTheta32[6] = {1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                                5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00};

// Note [matrix_exp per matrix]: each matrix takes the lowest Taylor degree whose theta bounds its
// own 1-norm, else degree 18 on A / 2^s and s squarings with its own s (PyTorch 1.13 decides per
// matrix too). Matrices of one (degree, s) are computed together and put back in place, so a
// matrix's value does not depend on the others in its batch (docs/tensors.md).
struct ExpPlan {
  int degree = 18;
  int64_t squarings = 0;
  auto operator<=>(const ExpPlan&) const = default;
};

// The plan for one 1-norm; NaN or inf takes degree 18 and no squaring, which spreads it (as
// PyTorch's result).
ExpPlan plan_for(double norm, const double* theta) {
  ExpPlan p;
  if (!std::isfinite(norm)) return p;
  int i = 0;
  while (i < 5 && norm > theta[i]) ++i;
  p.degree = kDegrees[i];
  if (norm > theta[5]) p.squarings = static_cast<int64_t>(std::ceil(std::log2(norm / theta[5])));
  return p;
}

// exp of every matrix of A [..., n, n] by one plan, without recording: Horner's rule for the
// Taylor polynomial on A / 2^s, then s squarings.
Tensor taylor_exp(const Tensor& A, ExpPlan p) {
  const Tensor I = eye_like(A, A.size(-1));
  const Tensor X = p.squarings > 0 ? A * std::ldexp(1.0, static_cast<int>(-p.squarings)) : A;
  Tensor R = I + X * (1.0 / p.degree);  // I + X/1 (I + X/2 (... (I + X/deg)))
  for (int j = p.degree - 1; j >= 1; --j) R = I + matmul(X, R) * (1.0 / j);
  for (int64_t k = 0; k < p.squarings; ++k) R = matmul(R, R);
  return R;
}

// exp(A) for a non-empty A without recording, each matrix by its own plan.
Tensor matrix_exp_values(const Tensor& A) {
  NoGradGuard no_grad;
  const int64_t n = A.size(-1);
  const Tensor flat = reshape(A, {-1, n, n});
  const std::vector<double> norms = amax(sum(abs(flat), {-2}), {-1}).to_vector<double>();
  const double* theta = A.dtype() == kFloat32 ? kTheta32 : kTheta64;
  std::map<ExpPlan, std::vector<int64_t>> groups;
  for (size_t i = 0; i < norms.size(); ++i) groups[plan_for(norms[i], theta)].push_back(static_cast<int64_t>(i));
  if (groups.size() == 1) return taylor_exp(A, groups.begin()->first);
  std::vector<Tensor> parts;                // the groups' results, concatenated in group order
  std::vector<int64_t> slot(norms.size());  // matrix i's row in that concatenation
  int64_t row = 0;
  const TensorOptions index_options = TensorOptions(kInt64).device(A.device());
  for (const auto& [plan, members] : groups) {
    parts.push_back(taylor_exp(
        index_select(flat, 0, tensor(members, {static_cast<int64_t>(members.size())}, index_options)), plan));
    for (int64_t i : members) slot[static_cast<size_t>(i)] = row++;
  }
  const Tensor order = tensor(slot, {static_cast<int64_t>(slot.size())}, index_options);
  return reshape(index_select(cat(parts, 0), 0, order), A.sizes());
}
}  // namespace

Tensor matrix_exp(const Tensor& A) {
  native::linalg_check_matrix(A, "linalg.matrix_exp", true);
  const int64_t n = A.size(-1);
  Tensor E = A.numel() == 0 ? zeros_like(A) : matrix_exp_values(A);
  if (needs_grad({&A})) {
    // PyTorch's linalg_matrix_exp_differential (adjoint): exp([[A^T, g], [0, A^T]])'s upper right block.
    record_function("LinalgMatrixExpBackward", {A}, {E},
                    [n](const VL& g, const VL& s) -> VL {
                      const Tensor At = mT(s[0]);
                      const Tensor M = cat({cat({At, g[0]}, -1), cat({zeros_like(At), At}, -1)}, -2);
                      return {narrow(narrow(matrix_exp(M), -2, 0, n), -1, n, n)};
                    },
                    {A});
  }
  return E;
}

Tensor cross(const Tensor& a, const Tensor& b, int64_t dim) {
  const char* op = "linalg.cross";
  WICK_CHECK(a.defined() && b.defined(), "{}: an input is an undefined tensor", op);
  native::check_same_device(op, {&a, &b});
  WICK_CHECK_TYPE(a.dtype() == b.dtype(), "{}: input is {} but other is {}; give both one dtype", op, a.dtype(),
                  b.dtype());
  WICK_CHECK(a.dim() == b.dim(), "{}: inputs must have the same number of dimensions, got {} and {}", op, shape_str(a),
             shape_str(b));
  const int64_t d = native::wrap_dim(dim, a.dim(), op);
  WICK_CHECK(a.size(d) == 3 && b.size(d) == 3, "{}: inputs dimension {} must have length 3. Got {} and {} ({} and {})",
             op, dim, a.size(d), b.size(d), shape_str(a), shape_str(b));
  native::broadcast_shapes(a.sizes(), b.sizes(), op);
  const auto at = [&](const Tensor& t, int64_t i) { return narrow(t, d, i, 1); };
  return cat({at(a, 1) * at(b, 2) - at(a, 2) * at(b, 1), at(a, 2) * at(b, 0) - at(a, 0) * at(b, 2),
              at(a, 0) * at(b, 1) - at(a, 1) * at(b, 0)},
             d);
}

namespace {
// a * b * c + d saturated at INT64_MAX: chain costs of huge (expanded) operands stay ordered.
int64_t cost_of(int64_t a, int64_t b, int64_t c, int64_t d) {
  int64_t r = 0;
  if (mul_overflow(a, b, &r) || mul_overflow(r, c, &r) || add_overflow(r, d, &r))
    return std::numeric_limits<int64_t>::max();
  return r;
}

// The product of ms[i..j] in the order split[i][j] chose.
Tensor chain_product(const std::vector<Tensor>& ms, const std::vector<std::vector<size_t>>& split, size_t i, size_t j) {
  if (i == j) return ms[i];
  return mm(chain_product(ms, split, i, split[i][j]), chain_product(ms, split, split[i][j] + 1, j));
}
}  // namespace

Tensor multi_dot(const std::vector<Tensor>& tensors) {
  const char* op = "multi_dot()";
  const size_t n = tensors.size();
  WICK_CHECK(n >= 2, "{}: expected at least 2 tensors but got {}", op, n);
  for (size_t i = 0; i < n; ++i) {
    const Tensor& t = tensors[i];
    WICK_CHECK(t.defined(), "{}: tensor {} is undefined", op, i);
    const bool end = i == 0 || i + 1 == n;
    WICK_CHECK((end && t.dim() == 1) || t.dim() == 2, "{}: {} must be {} but got {}D (shape {})", op,
               i == 0       ? std::string("the first tensor")
               : i + 1 == n ? std::string("the last tensor")
                            : fmt::format("tensor {}", i),
               end ? "1D or 2D" : "2D", t.dim(), shape_str(t));
    WICK_CHECK_TYPE(t.dtype() == tensors[0].dtype(),
                    "{}: all tensors must have the same dtype but tensor 0 is {} and tensor {} is {}", op,
                    tensors[0].dtype(), i, t.dtype());
    native::check_same_device(op, {&tensors[0], &t});
    WICK_CHECK_TYPE(is_floating(t.dtype()), "{}: expected floating-point tensors but tensor {} is {}", op, i,
                    t.dtype());
  }
  std::vector<Tensor> ms(tensors);
  const bool first_vec = ms.front().dim() == 1, last_vec = ms.back().dim() == 1;
  if (first_vec) ms.front() = unsqueeze(ms.front(), 0);
  if (last_vec) ms.back() = unsqueeze(ms.back(), -1);
  for (size_t i = 0; i + 1 < n; ++i)
    WICK_CHECK(ms[i].size(1) == ms[i + 1].size(0), "{}: tensors {} and {} with shapes {} and {} cannot be multiplied",
               op, i, i + 1, shape_str(tensors[i]), shape_str(tensors[i + 1]));
  Tensor result;
  if (n == 2) {
    result = mm(ms[0], ms[1]);
  } else if (n == 3) {  // (a x b)(b x c)(c x d): the cheaper of (AB)C and A(BC)
    const int64_t a = ms[0].size(0), b = ms[1].size(0), c = ms[2].size(0), d = ms[2].size(1);
    const bool right_first = cost_of(a, c, b + d, 0) > cost_of(b, d, a + c, 0);
    result = right_first ? mm(ms[0], mm(ms[1], ms[2])) : mm(mm(ms[0], ms[1]), ms[2]);
  } else {  // the matrix-chain order: cost[i][j] of ms[i..j], the first cheapest split kept
    std::vector<int64_t> p(n + 1);
    for (size_t i = 0; i < n; ++i) p[i] = ms[i].size(0);
    p[n] = ms[n - 1].size(1);
    std::vector<std::vector<int64_t>> cost(n, std::vector<int64_t>(n, 0));
    std::vector<std::vector<size_t>> split(n, std::vector<size_t>(n, 0));
    for (size_t len = 1; len < n; ++len)
      for (size_t i = 0; i + len < n; ++i) {
        const size_t j = i + len;
        cost[i][j] = std::numeric_limits<int64_t>::max();
        for (size_t k = i; k < j; ++k) {
          const int64_t q =
              cost_of(p[i], p[k + 1], p[j + 1], std::min(cost[i][k], INT64_MAX - cost[k + 1][j]) + cost[k + 1][j]);
          if (q < cost[i][j]) {
            cost[i][j] = q;
            split[i][j] = k;
          }
        }
      }
    result = chain_product(ms, split, 0, n - 1);
  }
  if (first_vec && last_vec) return reshape(result, {});
  if (first_vec) return squeeze(result, 0);
  if (last_vec) return squeeze(result, -1);
  return result;
}

Tensor vecdot(const Tensor& x, const Tensor& y, int64_t dim) {
  const char* op = "linalg.vecdot";
  WICK_CHECK(x.defined() && y.defined(), "{}: an input is an undefined tensor", op);
  WICK_CHECK_TYPE(x.dtype() == y.dtype(),
                  "{}: Expected x and y to have the same dtype, but found x of type {} and y of type {} instead", op,
                  x.dtype(), y.dtype());
  return sum(x * y, {dim});
}

}  // namespace wick::linalg
