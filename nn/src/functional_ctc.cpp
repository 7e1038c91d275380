// F::ctc_loss: the CTC alpha recursion of PyTorch 1.13 (aten/src/ATen/native/LossCTC.cpp) on
// differentiable ops.
//
// Note [CTC as a composite]
// Target n of length S_n is extended with blanks to l' = (blank, l_1, blank, ..., l_S, blank), of
// 2 S_n + 1 states; the batch shares S' = 2 max(S_n) + 1 states (a shorter sequence's extra states
// are blanks that nothing reads). With lp'[t, n, s] = log_probs[t, n, l'_s] (one gather),
//   alpha_t[s] = logsumexp(alpha_{t-1}[s], alpha_{t-1}[s-1], alpha_{t-1}[s-2]) + lp'[t, s],
// where the s-2 term counts only for a label state whose label differs from the previous label,
// and alpha_{-1} is 0 at s = 0 and -inf elsewhere (so alpha_0 is PyTorch's initial row: lp' at
// states 0 and 1). One step is a few [N, S'] ops (the shifts are cat with a -inf column), so the
// T steps cost O(T) small ops and autograd gives the backward (the beta recursion). The loss of
// sequence n is -logsumexp(alpha_{L_n - 1}[2 S_n], alpha_{L_n - 1}[2 S_n - 1]) (the first only
// when S_n = 0), picked from the stacked alphas with index_select and gather; L_n = 0 picks
// alpha_{-1}: loss 0 for an empty target, inf otherwise.
//
// Each logsumexp is PyTorch's formula, log(sum exp(x_i - m)) + m with m the (constant) maximum,
// m = 0 where every x_i is -inf. There the sum is replaced by 1 before the log and the result by
// -inf, so a state no path reaches gets exactly 0 gradient, never 0 / 0: an impossible alignment
// (inf loss) has a finite gradient that zero_infinity then zeroes. lp' is 0 at the steps t >=
// L_n, so whatever the padding of log_probs holds (NaN included) never reaches the loss or the
// gradient.
//
// PyTorch's gradient w.r.t. log_probs is exp(lp) - (the posterior of class c at step t) for t <
// L_n, the exact gradient w.r.t. the logits of a log_softmax, not the derivative of the loss
// w.r.t. log_probs (-posterior). To give PyTorch's values, each sequence's loss gets the term
// sum_{t < L_n, c} (exp(lp) - detach(exp(lp))): exactly 0 in value, exp(lp) in gradient.
#include "wick/nn/functional_ctc.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "loss_more_parts.h"
#include "shape_text.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::nn::functional {

namespace {
using detail::shape_str;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr const char* kOp = "ctc_loss";

// log(sum_i exp(x_i)) of tensors of one shape, as above: m constant, -inf and a zero gradient
// where every x_i is -inf.
Tensor log_add_exp(const std::vector<Tensor>& xs) {
  if (xs.size() == 1) return xs[0];
  Tensor m = native::binary(BinaryOp::Maximum, xs[0], xs[1]);
  for (size_t i = 2; i < xs.size(); ++i) m = native::binary(BinaryOp::Maximum, m, xs[i]);
  const Tensor dead = native::binary(BinaryOp::Eq, m, Scalar(-kInf));
  m = native::where(dead, native::scalar_tensor(0.0, m.dtype(), m.device()), m);
  Tensor s = exp(sub(xs[0], m));
  for (size_t i = 1; i < xs.size(); ++i) s = add(s, exp(sub(xs[i], m)));
  s = where(dead, Scalar(1.0), s);
  return where(dead, Scalar(-kInf), add(log(s), m));
}

// The host copy of an int64 tensor of lengths, checked to hold one entry per sequence.
std::vector<int64_t> read_lengths(const Tensor& lengths, const char* name, int64_t N, const Tensor& log_probs) {
  WICK_CHECK(lengths.defined(), "{}: {} is undefined; give one int64 length per sequence", kOp, name);
  WICK_CHECK_TYPE(lengths.dtype() == kInt64, "{}: {} must be int64, got {} of shape {}; convert with .to(kInt64)", kOp,
                  name, lengths.dtype(), shape_str(lengths));
  WICK_CHECK(lengths.numel() == N,
             "{}: {} {} must hold one length per sequence, {} for log_probs {} ([T, N, C], or [T, C] for one)", kOp,
             name, shape_str(lengths), N, shape_str(log_probs));
  return lengths.to_vector<int64_t>();
}

// The extended targets: per sequence its labels (checked), as index and mask tensors on `dev`.
struct Extended {
  Tensor index;    // [T, N, S'] int64: the class of state s
  Tensor skip;     // [N, S'] bool: the s-2 term counts
  Tensor ends;     // [N, 2] int64: states 2 S_n and max(2 S_n - 1, 0)
  Tensor has_two;  // [N, 1] bool: S_n > 0
  int64_t states = 1;
};

Extended extend_targets(const Tensor& targets, const std::vector<int64_t>& tl, int64_t T, int64_t C, int64_t blank,
                        Device dev) {
  const int64_t N = static_cast<int64_t>(tl.size());
  const bool padded = targets.dim() == 2;
  const int64_t max_len = tl.empty() ? 0 : *std::max_element(tl.begin(), tl.end());
  // max_len <= targets.numel() (checked by the caller); the sizes below are checked all the same.
  int64_t S2 = 0;
  WICK_CHECK(!mul_overflow(max_len, int64_t{2}, &S2) && !add_overflow(S2, int64_t{1}, &S2),
             "{}: the longest target length {} gives 2 * {} + 1 extended states, past int64", kOp, max_len, max_len);
  checked_numel({N, S2}, "ctc_loss (the extended targets [N, 2 * max(target_lengths) + 1])");
  checked_numel({T, N, S2}, "ctc_loss (the extended targets [T, N, 2 * max(target_lengths) + 1])");
  const std::vector<int64_t> tv = targets.to_vector<int64_t>();  // after the checks: the sizes are sane
  std::vector<int64_t> index(static_cast<size_t>(N * S2), blank), ends(static_cast<size_t>(N * 2));
  std::vector<int64_t> skip(static_cast<size_t>(N * S2), 0), has_two(static_cast<size_t>(N));
  int64_t offset = 0;
  for (int64_t n = 0; n < N; ++n) {
    const int64_t first = padded ? n * targets.size(1) : offset;
    offset += tl[static_cast<size_t>(n)];
    for (int64_t k = 0; k < tl[static_cast<size_t>(n)]; ++k) {
      const int64_t label = tv[static_cast<size_t>(first + k)];
      WICK_CHECK_INDEX(label >= 0 && label < C,
                       "{}: target {} label {} is {}, out of range for {} classes (log_probs [.., {}])", kOp, n, k,
                       label, C, C);
      WICK_CHECK(label != blank,
                 "{}: target {} label {} is the blank ({}); targets hold labels only, the blank is implied", kOp, n, k,
                 blank);
      index[static_cast<size_t>(n * S2 + 2 * k + 1)] = label;
      if (k > 0 && label != tv[static_cast<size_t>(first + k - 1)]) skip[static_cast<size_t>(n * S2 + 2 * k + 1)] = 1;
    }
    ends[static_cast<size_t>(2 * n)] = 2 * tl[static_cast<size_t>(n)];
    ends[static_cast<size_t>(2 * n + 1)] = std::max<int64_t>(2 * tl[static_cast<size_t>(n)] - 1, 0);
    has_two[static_cast<size_t>(n)] = tl[static_cast<size_t>(n)] > 0 ? 1 : 0;
  }
  const TensorOptions i64 = TensorOptions(kInt64).device(dev);
  auto mask = [&](const std::vector<int64_t>& v, IntArrayRef shape) {
    return native::binary(BinaryOp::Ne, wick::tensor(v, shape, i64), Scalar(int64_t{0}));
  };
  Extended e;
  e.states = S2;
  e.index = native::contiguous(native::expand(wick::tensor(index, {1, N, S2}, i64), {T, N, S2}));
  e.skip = mask(skip, {N, S2});
  e.ends = wick::tensor(ends, {N, 2}, i64);
  e.has_two = mask(has_two, {N, 1});
  return e;
}
}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& options) {
  detail::check_reduction(kOp, options.reduction());
  WICK_CHECK(log_probs.defined(), "{}: log_probs is undefined", kOp);
  WICK_CHECK_TYPE(log_probs.is_floating_point(), "{}: log_probs must be float32 or float64, got {} of shape {}", kOp,
                  log_probs.dtype(), shape_str(log_probs));
  WICK_CHECK(log_probs.dim() == 3 || log_probs.dim() == 2,
             "{}: log_probs must be [T, N, C] (or [T, C] for one sequence), got {}", kOp, shape_str(log_probs));
  const bool batched = log_probs.dim() == 3;
  const Tensor lp = batched ? log_probs : unsqueeze(log_probs, 1);
  const int64_t T = lp.size(0), N = lp.size(1), C = lp.size(2);
  const int64_t blank = options.blank();
  WICK_CHECK(blank >= 0 && blank < C, "{}: blank {} is not a class of log_probs {} ({} classes)", kOp, blank,
             shape_str(log_probs), C);
  WICK_CHECK(targets.defined(), "{}: targets is undefined", kOp);
  WICK_CHECK_TYPE(targets.dtype() == kInt64, "{}: targets must hold int64 labels, got {} of shape {}", kOp,
                  targets.dtype(), shape_str(targets));
  WICK_CHECK(targets.dim() == 1 || (targets.dim() == 2 && targets.size(0) == N),
             "{}: targets {} must be padded [N, S] with N = {} (log_probs {}) or the targets concatenated (1-d)", kOp,
             shape_str(targets), N, shape_str(log_probs));
  const std::vector<int64_t> il = read_lengths(input_lengths, "input_lengths", N, log_probs);
  const std::vector<int64_t> tl = read_lengths(target_lengths, "target_lengths", N, log_probs);
  for (int64_t n = 0; n < N; ++n) {
    const int64_t L = il[static_cast<size_t>(n)], S = tl[static_cast<size_t>(n)];
    WICK_CHECK(L >= 0 && L <= T, "{}: input_lengths[{}] is {}, outside [0, {}] for log_probs {}", kOp, n, L, T,
               shape_str(log_probs));
    WICK_CHECK(S >= 0, "{}: target_lengths[{}] is {}, negative", kOp, n, S);
    WICK_CHECK(S <= targets.size(targets.dim() - 1), "{}: target_lengths[{}] is {}, longer than the {} targets {}", kOp,
               n, S, targets.dim() == 1 ? "concatenated" : "padded", shape_str(targets));
  }
  if (targets.dim() == 1) {
    int64_t total = 0;
    for (int64_t n = 0; n < N; ++n)
      WICK_CHECK(!add_overflow(total, tl[static_cast<size_t>(n)], &total),
                 "{}: the sum of target_lengths overflows int64 at target_lengths[{}] = {}; the concatenated targets "
                 "{} hold {} labels",
                 kOp, n, tl[static_cast<size_t>(n)], shape_str(targets), targets.size(0));
    WICK_CHECK(targets.size(0) == total,
               "{}: concatenated targets {} must hold sum(target_lengths) = {} labels; pad them to [N, S] otherwise",
               kOp, shape_str(targets), total);
  }
  const Device dev = log_probs.device();
  const Extended ext = extend_targets(targets, tl, T, C, blank, dev);
  const int64_t S2 = ext.states;

  // valid[t, n]: step t belongs to sequence n.
  std::vector<int64_t> valid_v(static_cast<size_t>(T * N), 0), rows(static_cast<size_t>(N));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t n = 0; n < N; ++n) valid_v[static_cast<size_t>(t * N + n)] = t < il[static_cast<size_t>(n)];
  for (int64_t n = 0; n < N; ++n) rows[static_cast<size_t>(n)] = il[static_cast<size_t>(n)] * N + n;
  const TensorOptions i64 = TensorOptions(kInt64).device(dev);
  const Tensor valid = native::binary(BinaryOp::Ne, wick::tensor(valid_v, {T, N, 1}, i64), Scalar(int64_t{0}));

  const Tensor lpe = where(valid, gather(lp, 2, ext.index), Scalar(0.0));  // [T, N, S']
  const TensorOptions fo = TensorOptions(lp.dtype()).device(dev);
  std::vector<double> start(static_cast<size_t>(N * S2), -kInf);
  for (int64_t n = 0; n < N; ++n) start[static_cast<size_t>(n * S2)] = 0.0;
  std::vector<Tensor> alphas{wick::tensor(start, {N, S2}, fo)};
  alphas.reserve(static_cast<size_t>(T + 1));
  const Tensor gap1 = wick::full({N, 1}, -kInf, fo), gap2 = wick::full({N, 2}, -kInf, fo);
  for (int64_t t = 0; t < T; ++t) {
    const Tensor& a = alphas.back();
    std::vector<Tensor> terms{a};
    if (S2 > 1) terms.push_back(cat({gap1, narrow(a, 1, 0, S2 - 1)}, 1));
    if (S2 > 2) terms.push_back(where(ext.skip, cat({gap2, narrow(a, 1, 0, S2 - 2)}, 1), Scalar(-kInf)));
    alphas.push_back(add(log_add_exp(terms), select(lpe, 0, t)));
  }
  const Tensor last = index_select(reshape(stack(alphas, 0), {(T + 1) * N, S2}), 0, wick::tensor(rows, {N}, i64));
  const Tensor end_states = gather(last, 1, ext.ends);
  const Tensor likelihood =
      log_add_exp({narrow(end_states, 1, 0, 1), where(ext.has_two, narrow(end_states, 1, 1, 1), Scalar(-kInf))});
  // PyTorch's gradient term (Note [CTC as a composite]): 0 in value.
  const Tensor e = exp(where(valid, lp, Scalar(0.0)));
  Tensor loss = add(neg(reshape(likelihood, {N})), sum(sub(e, e.detach()), {0, 2}));
  if (options.zero_infinity()) loss = where(native::binary(BinaryOp::Eq, loss, Scalar(kInf)), Scalar(0.0), loss);

  if (options.reduction() == Reduction::Mean) {
    std::vector<double> divisor(tl.size());
    for (size_t n = 0; n < tl.size(); ++n) divisor[n] = static_cast<double>(std::max<int64_t>(tl[n], 1));
    return mean(div(loss, wick::tensor(divisor, {N}, fo)));
  }
  if (options.reduction() == Reduction::Sum) return sum(loss);
  return batched ? loss : reshape(loss, {});
}

}  // namespace wick::nn::functional
