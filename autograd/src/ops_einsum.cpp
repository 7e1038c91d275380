// einsum, composed of differentiable ops.
//
// Note [einsum]
// The steps are PyTorch 1.13's (aten/src/ATen/native/Linear.cpp) with no contraction path:
//   1. Parse: each operand's letters become label ids 0..51 (A-Z, then a-z) and one id for
//      "..."; count how often each label appears over all the operands.
//   2. Lay out one aligned shape: the output's dims first (explicit after "->"; else "..." and
//      the labels seen once, in id order), then "..." if the output lacks it, then the summed
//      labels in id order.
//   3. Align each operand: a repeated label takes the diagonal of its two dims, a label the
//      operand lacks becomes a size-1 dim, and a permute puts its dims in the aligned order.
//      Sizes of one label must be equal or 1 (size 1 broadcasts). Each aligned dim counts the
//      operands in which its size is not 1.
//   4. Contract from left to right: the first two operands are replaced by their product. A
//      summed dim that no later operand has (its count falls to 1) is summed now: inside the
//      product when both have it (one bmm over [shared, left-only, summed] x [shared, summed,
//      right-only]), beforehand when only one has it. With nothing to sum the product is mul.
//   5. The summed dims, now of size 1, are dropped (one operand: summed).
// Every step is a differentiable view, sum, mul or bmm, so the gradients, double backward and
// every device come with no formula of their own. A diagonal is the operand's two dims moved
// last, flattened, and sliced with step n + 1 (a copy where the dims were not already last and
// contiguous; PyTorch's is a view).
#include <algorithm>
#include <array>
#include <deque>
#include <string>

#include "op_helpers.h"
#include "wick/autograd/einsum.h"
#include "wick/core/error.h"

namespace wick {

namespace {
constexpr int kLabels = 52;         // A-Z then a-z
constexpr int kEllipsis = kLabels;  // the id of "..."

bool is_label(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
int label_id(char c) { return c <= 'Z' ? c - 'A' : c - 'a' + 26; }
char label_char(int id) { return static_cast<char>(id < 26 ? 'A' + id : 'a' + id - 26); }

std::string shapes_str(const std::vector<Tensor>& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (i > 0) s += ", ";
    s += ts[i].defined() ? detail::shape_str(ts[i]) : std::string("undefined");
  }
  return s;
}

// `t` with its dims d1 < d2 (of one size n) replaced by their diagonal, at d1.
Tensor diagonal_at(const Tensor& t, int64_t d1, int64_t d2) {
  const int64_t nd = t.dim(), n = t.size(d1);
  std::vector<int64_t> perm, flat;
  for (int64_t d = 0; d < nd; ++d)
    if (d != d1 && d != d2) {
      perm.push_back(d);
      flat.push_back(t.size(d));
    }
  perm.push_back(d1);
  perm.push_back(d2);
  flat.push_back(n * n);
  const Tensor diag = slice(reshape(permute(t, perm), flat), -1, 0, n * n, n + 1);  // [others..., n]
  std::vector<int64_t> back;                                                        // the last dim back to position d1
  for (int64_t d = 0; d < nd - 1; ++d) back.push_back(d < d1 ? d : d == d1 ? nd - 2 : d - 1);
  return permute(diag, back);
}

// The product of `left` and `right` (one rank, aligned dims) summed over `sum_dims`, which stay
// as size-1 dims: PyTorch's sumproduct_pair with keepdim.
Tensor sum_product(Tensor left, Tensor right, const std::vector<int64_t>& sum_dims) {
  if (sum_dims.empty()) return mul(left, right);
  const int64_t nd = left.dim();
  std::vector<bool> summed(static_cast<size_t>(nd), false);
  for (int64_t d : sum_dims) summed[static_cast<size_t>(d)] = true;
  std::vector<int64_t> lro, lo, ro;  // dims in both, left only, right only
  int64_t lro_size = 1, lo_size = 1, ro_size = 1, sum_size = 1;
  for (int64_t i = 0; i < nd; ++i) {
    const bool sl = left.size(i) != 1, sr = right.size(i) != 1;
    if (summed[static_cast<size_t>(i)]) {
      if (sl && sr)
        sum_size *= left.size(i);
      else if (sl)
        left = sum(left, {i}, true);
      else if (sr)
        right = sum(right, {i}, true);
    } else if (sl && sr) {
      lro.push_back(i);
      lro_size *= left.size(i);
    } else if (sl) {
      lo.push_back(i);
      lo_size *= left.size(i);
    } else {
      ro.push_back(i);
      ro_size *= right.size(i);
    }
  }
  std::vector<int64_t> out_size, lperm(lro), rperm(lro), operm(static_cast<size_t>(nd));
  for (int64_t d : lro) out_size.push_back(left.size(d));
  for (int64_t d : lo) out_size.push_back(left.size(d));
  out_size.insert(out_size.end(), sum_dims.size(), 1);
  for (int64_t d : ro) out_size.push_back(right.size(d));
  lperm.insert(lperm.end(), lo.begin(), lo.end());
  lperm.insert(lperm.end(), sum_dims.begin(), sum_dims.end());
  lperm.insert(lperm.end(), ro.begin(), ro.end());
  rperm.insert(rperm.end(), sum_dims.begin(), sum_dims.end());
  rperm.insert(rperm.end(), ro.begin(), ro.end());
  rperm.insert(rperm.end(), lo.begin(), lo.end());
  for (size_t i = 0; i < lperm.size(); ++i) operm[static_cast<size_t>(lperm[i])] = static_cast<int64_t>(i);
  const Tensor l = reshape(permute(left, lperm), {lro_size, lo_size, sum_size});
  const Tensor r = reshape(permute(right, rperm), {lro_size, sum_size, ro_size});
  return permute(reshape(bmm(l, r), out_size), operm);
}
}  // namespace

Tensor einsum(std::string_view equation, const std::vector<Tensor>& tensors) {
  const std::string ctx = fmt::format("einsum(\"{}\") with operands of shapes {}", equation, shapes_str(tensors));
  WICK_CHECK(!tensors.empty(), "{}: give at least one operand", ctx);
  const size_t num_ops = tensors.size();
  for (size_t i = 0; i < num_ops; ++i) {
    WICK_CHECK(tensors[i].defined(), "{}: operand {} is undefined", ctx, i);
    WICK_CHECK_TYPE(is_floating(tensors[i].dtype()) && tensors[i].dtype() == tensors[0].dtype(),
                    "{}: operand {} is {} where operand 0 is {}; einsum takes floating-point operands of one dtype",
                    ctx, i, dtype_name(tensors[i].dtype()), dtype_name(tensors[0].dtype()));
    native::check_same_device("einsum", {&tensors[0], &tensors[i]});
  }

  // 1. Parse the operands' labels.
  const size_t arrow = equation.find("->");
  const std::string_view lhs = equation.substr(0, arrow);
  std::vector<std::vector<int>> op_labels(num_ops);
  size_t cur = 0;
  bool ell_here = false;
  for (size_t i = 0; i < lhs.size(); ++i) {
    const char c = lhs[i];
    if (c == ' ') continue;
    if (c == ',') {
      ++cur;
      WICK_CHECK(cur < num_ops, "{}: the equation names more operands than the {} given", ctx, num_ops);
      ell_here = false;
    } else if (c == '.') {
      WICK_CHECK(!ell_here, "{}: a second '.' sequence for operand {}; give at most one \"...\" per operand", ctx, cur);
      WICK_CHECK(i + 2 < lhs.size() && lhs[i + 1] == '.' && lhs[i + 2] == '.',
                 "{}: the '.' at index {} is not part of an ellipsis \"...\"", ctx, i);
      i += 2;
      op_labels[cur].push_back(kEllipsis);
      ell_here = true;
    } else {
      WICK_CHECK(is_label(c), "{}: invalid subscript '{}' at index {}; subscripts are letters [a-zA-Z]", ctx, c, i);
      op_labels[cur].push_back(label_id(c));
    }
  }
  WICK_CHECK(cur == num_ops - 1, "{}: the equation names {} operands but {} were given", ctx, cur + 1, num_ops);

  std::array<int64_t, kLabels> count{};
  int64_t ell_dims = 0;  // the most dims any "..." covers
  for (size_t i = 0; i < num_ops; ++i) {
    const int64_t nd = tensors[i].dim();
    int64_t named = 0;
    bool has_ell = false;
    for (int s : op_labels[i]) {
      if (s == kEllipsis)
        has_ell = true;
      else
        ++named, ++count[static_cast<size_t>(s)];
    }
    WICK_CHECK(has_ell ? named <= nd : named == nd,
               "{}: operand {} has {} dims but the equation gives it {} subscripts{}", ctx, i, nd, named,
               has_ell ? " besides its \"...\"" : " and no \"...\"");
    if (has_ell) ell_dims = std::max(ell_dims, nd - named);
  }

  // 2. The aligned layout: output dims, then "..." (if summed), then the summed labels.
  std::array<int64_t, kLabels> pos;
  pos.fill(-1);
  int64_t next = 0, ell_pos = 0;
  bool ell_out = false;
  if (arrow == std::string_view::npos) {
    ell_out = true;
    next = ell_dims;
    for (int s = 0; s < kLabels; ++s)
      if (count[static_cast<size_t>(s)] == 1) pos[static_cast<size_t>(s)] = next++;
  } else {
    const std::string_view rhs = equation.substr(arrow + 2);
    for (size_t i = 0; i < rhs.size(); ++i) {
      const char c = rhs[i];
      const size_t at = lhs.size() + 2 + i;
      if (c == ' ') continue;
      if (c == '.') {
        WICK_CHECK(!ell_out, "{}: a second \"...\" in the output; give it at most once", ctx);
        WICK_CHECK(i + 2 < rhs.size() && rhs[i + 1] == '.' && rhs[i + 2] == '.',
                   "{}: the '.' at index {} is not part of an ellipsis \"...\"", ctx, at);
        i += 2;
        ell_pos = next;
        next += ell_dims;
        ell_out = true;
        continue;
      }
      WICK_CHECK(is_label(c), "{}: invalid subscript '{}' at index {}; subscripts are letters [a-zA-Z]", ctx, c, at);
      const auto s = static_cast<size_t>(label_id(c));
      WICK_CHECK(count[s] > 0, "{}: output subscript {} does not appear in any operand", ctx, c);
      WICK_CHECK(pos[s] == -1, "{}: output subscript {} appears more than once in the output", ctx, c);
      pos[s] = next++;
    }
  }
  const int64_t out_dims = next;
  if (!ell_out) {
    ell_pos = next;
    next += ell_dims;
  }
  for (size_t s = 0; s < kLabels; ++s)
    if (count[s] > 0 && pos[s] == -1) pos[s] = next++;
  const int64_t total = next;

  // 3. Plan each operand's alignment, checking every size before any op runs: the diagonals to
  // take (dims as they are when each is taken), then size-1 dims for the labels it lacks, then
  // the permutation into the aligned order.
  std::array<int64_t, kLabels> label_size;
  label_size.fill(1);
  std::vector<int64_t> ell_size(static_cast<size_t>(ell_dims), 1), dim_count(static_cast<size_t>(total), 0);
  std::vector<std::vector<std::pair<int64_t, int64_t>>> diagonals(num_ops);
  std::vector<std::vector<int64_t>> perms(num_ops);
  std::vector<int64_t> missing(num_ops, 0);
  for (size_t i = 0; i < num_ops; ++i) {
    std::vector<int64_t> sizes = tensors[i].sizes().vec();
    std::vector<int64_t> perm(static_cast<size_t>(total), -1);
    int64_t dim = 0;
    for (int s : op_labels[i]) {
      if (s == kEllipsis) {
        const int64_t covered = tensors[i].dim() - static_cast<int64_t>(op_labels[i].size() - 1);
        for (int64_t j = ell_dims - covered; j < ell_dims; ++j, ++dim) {
          const int64_t n = sizes[static_cast<size_t>(dim)];
          if (n != 1) {
            int64_t& seen = ell_size[static_cast<size_t>(j)];
            WICK_CHECK(seen == 1 || seen == n,
                       "{}: dim {} of operand {} (under \"...\") has size {}, which does not broadcast with size {} "
                       "seen before",
                       ctx, dim, i, n, seen);
            seen = n;
            ++dim_count[static_cast<size_t>(ell_pos + j)];
          }
          perm[static_cast<size_t>(ell_pos + j)] = dim;
        }
        continue;
      }
      const auto si = static_cast<size_t>(s);
      const int64_t n = sizes[static_cast<size_t>(dim)];
      int64_t& slot = perm[static_cast<size_t>(pos[si])];
      if (slot == -1) {
        if (n != 1) {
          WICK_CHECK(label_size[si] == 1 || label_size[si] == n,
                     "{}: subscript {} has size {} in operand {}, which does not broadcast with size {} seen before",
                     ctx, label_char(s), n, i, label_size[si]);
          label_size[si] = n;
          ++dim_count[static_cast<size_t>(pos[si])];
        }
        slot = dim++;
      } else {  // a repeated label: its diagonal replaces the earlier dim, and this dim goes
        const int64_t first = sizes[static_cast<size_t>(slot)];
        WICK_CHECK(n == first,
                   "{}: subscript {} is repeated in operand {} over dims of sizes {} and {}; a diagonal needs "
                   "equal sizes",
                   ctx, label_char(s), i, first, n);
        diagonals[i].push_back({slot, dim});
        sizes.erase(sizes.begin() + dim);
      }
    }
    for (int64_t& p : perm)
      if (p == -1) p = dim++, ++missing[i];
    perms[i] = std::move(perm);
  }

  std::deque<Tensor> ops;
  for (size_t i = 0; i < num_ops; ++i) {
    Tensor op = tensors[i];
    for (const auto& [d1, d2] : diagonals[i]) op = diagonal_at(op, d1, d2);
    for (int64_t k = 0; k < missing[i]; ++k) op = unsqueeze(op, op.dim());
    ops.push_back(permute(op, perms[i]));
  }

  // 4. Contract from left to right.
  while (ops.size() > 1) {
    Tensor a = ops[0], b = ops[1];
    ops.pop_front();
    ops.pop_front();
    std::vector<int64_t> sum_dims, a_sum, b_sum;
    for (int64_t d = out_dims; d < total; ++d) {
      int64_t& c = dim_count[static_cast<size_t>(d)];
      if (a.size(d) != 1 && b.size(d) != 1) {
        if (--c == 1) {
          sum_dims.push_back(d);
          c = 0;
        }
      } else if (c == 1) {
        if (a.size(d) != 1) {
          a_sum.push_back(d);
          c = 0;
        } else if (b.size(d) != 1) {
          b_sum.push_back(d);
          c = 0;
        }
      }
    }
    if (!a_sum.empty()) a = sum(a, a_sum, true);
    if (!b_sum.empty()) b = sum(b, b_sum, true);
    ops.push_front(sum_product(a, b, sum_dims));
  }

  // 5. Drop the summed dims: all of size 1 after a contraction, summed for a single operand.
  if (total == out_dims) return ops[0];
  if (num_ops > 1) {
    std::vector<int64_t> sizes = ops[0].sizes().vec();
    sizes.resize(static_cast<size_t>(out_dims));
    return reshape(ops[0], sizes);
  }
  std::vector<int64_t> summed;
  for (int64_t d = out_dims; d < total; ++d) summed.push_back(d);
  return sum(ops[0], summed);
}

}  // namespace wick
