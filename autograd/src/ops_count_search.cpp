// bincount, histc, searchsorted and bucketize: counting and binary search on the host (Note [Host
// ops] in host_ops.h), each loop PyTorch 1.13's CPU kernel step for step.
//
// Note [histc and searchsorted]
// histc: the range is [min, max], or the data's own when min == max (widened by 1 each way when
// that is a single value); it must be finite and min < max. Each element x in the range goes to
// bin int((x - min) * bins / (max - min)), computed in the input's dtype as PyTorch's
// LINEAR_INTERPOLATION (so float32 data are binned with float32 rounding: histc([0.1, 0.2, 0.3],
// 10, 0, 1) puts 0.3f in bin 3), with max itself in the last bin (a quotient that overflows the
// dtype is recomputed in double, and the bin is clamped to [0, bins - 1] before any conversion); elements outside the
// range and NaNs are left out, as torch.histc's documentation says (PyTorch 1.13's kernel converts a NaN position to an
// integer and counts the NaN in bin 0). searchsorted: PyTorch's lower and upper bounds written with
// `!(mid >= x)` and
// `!(mid > x)`, so a NaN probe or boundary lands where that loop puts it; with a sorter the
// boundaries are read through it and the positions are in sorted order. Both operands are
// promoted to their result type first (a Scalar as a wrapped number); bool is refused.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "host_ops.h"
#include "op_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {

// A zero-filled host tensor of `n` elements of dtype `dt` for a result on `dev`: allocated by
// native::zeros, so a length no memory holds is a typed error (never std::length_error).
Tensor host_zeros(int64_t n, DType dt, Device dev) { return native::zeros({n}, dt, dev.is_cpu() ? dev : kCPU); }

// `h` (a host tensor) on `dev`.
Tensor moved_to(const Tensor& h, Device dev) {
  if (h.device() == dev) return h;
  Tensor r = native::empty(h.sizes(), h.dtype(), dev);
  native::copy_(r, h);
  return r;
}

template <typename W>
Tensor bincount_loop(const std::vector<int64_t>& x, const std::vector<W>& w, int64_t length, DType dt, Device dev) {
  Tensor out = host_zeros(length, dt, dev);
  W* p = static_cast<W*>(out.data_ptr());
  for (size_t i = 0; i < x.size(); ++i) p[x[i]] += w.empty() ? W(1) : w[i];  // 0 <= x[i] < length
  return moved_to(out, dev);
}

// The bin of v in [lo, hi] (lo < hi in T): computed in T as PyTorch, clamped to [0, bins - 1]
// in double, so a quotient that overflows T (a range wider than T's largest value) or rounds
// past the last bin never reaches an out-of-range conversion.
template <typename T>
int64_t histc_bin(T v, int64_t bins, T lo, T hi) {
  if (!(hi > lo)) return 0;  // a span that rounds to 0 in T (min and max one float apart in float64)
  double q = static_cast<double>((v - lo) * static_cast<T>(bins) / (hi - lo));
  if (!std::isfinite(q)) q = (static_cast<double>(v) - lo) * static_cast<double>(bins) / (static_cast<double>(hi) - lo);
  if (!(q > 0)) return 0;
  return q >= static_cast<double>(bins) ? bins - 1 : static_cast<int64_t>(q);  // the last bin holds its right edge
}

template <typename T>
Tensor histc_loop(const std::vector<T>& x, int64_t bins, T lo, T hi, DType dt, Device dev) {
  Tensor hist = host_zeros(bins, dt, dev);
  T* p = static_cast<T*>(hist.data_ptr());
  for (const T v : x)
    if (v >= lo && v <= hi) p[histc_bin(v, bins, lo, hi)] += T(1);  // skips outside the range, and NaN
  return moved_to(hist, dev);
}

// PyTorch's cus_lower_bound / cus_upper_bound over bd[start, end), read through `sorter` if any.
template <typename T>
int64_t bound(int64_t start, int64_t end, T v, const T* bd, const int64_t* sorter, bool right) {
  const int64_t orig = start;
  while (start < end) {
    const int64_t mid = start + ((end - start) >> 1);
    const T m = sorter ? bd[sorter[mid] + orig] : bd[mid];
    if (right ? !(m > v) : !(m >= v))
      start = mid + 1;
    else
      end = mid;
  }
  return start;
}

template <typename T>
std::vector<int64_t> search_loop(const Tensor& boundaries, const Tensor& input, const Tensor& sorter, bool right) {
  const std::vector<T> bd = boundaries.to_vector<T>(), in = input.to_vector<T>();
  const std::vector<int64_t> st = sorter.defined() ? sorter.to_vector<int64_t>() : std::vector<int64_t>{};
  const int64_t row_in = input.dim() == 0 ? 1 : input.size(-1), row_bd = boundaries.size(-1);
  const bool one_d = boundaries.dim() == 1;
  std::vector<int64_t> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t start = one_d ? 0 : static_cast<int64_t>(i) / row_in * row_bd;
    out[i] = bound(start, start + row_bd, in[i], bd.data(), st.empty() ? nullptr : st.data(), right) - start;
  }
  return out;
}

Tensor search(const char* op, const Tensor& boundaries, const Tensor& input, bool out_int32, bool right,
              std::optional<std::string_view> side, const Tensor& sorter) {
  WICK_CHECK(boundaries.defined() && input.defined(), "{}: the boundaries and the input must be defined", op);
  native::check_same_device(op, {&boundaries, &input});
  WICK_CHECK_NOT_IMPLEMENTED(!out_int32,
                             "{}: out_int32 = true asks for int32 positions, and wick has no int32 dtype; "
                             "leave it false (the positions are int64)",
                             op);
  if (side) {
    WICK_CHECK(*side == "left" || *side == "right", "{}: side must be \"left\" or \"right\", got \"{}\"", op, *side);
    WICK_CHECK(!(right && *side == "left"),
               "{}: side = \"left\" and right = true ask for opposite sides; pass only one of them", op);
    right = *side == "right";
  }
  WICK_CHECK(boundaries.dim() > 0, "{}: the boundaries must have at least one dim, got a 0-d tensor", op);
  WICK_CHECK(input.dim() > 0 || boundaries.dim() == 1,
             "{}: a 0-d input needs 1-d boundaries, got boundaries {}; give the input its leading dims", op,
             shape_str(boundaries));
  bool lead_match = boundaries.dim() == input.dim();
  for (int64_t k = 0; lead_match && k + 1 < input.dim(); ++k) lead_match = boundaries.size(k) == input.size(k);
  WICK_CHECK(boundaries.dim() == 1 || lead_match,
             "{}: boundaries {} and input {} do not match: the boundaries must be 1-d, or have the input's "
             "number of dims and the same sizes in all but the last",
             op, shape_str(boundaries), shape_str(input));
  if (sorter.defined()) {
    native::check_same_device(op, {&boundaries, &sorter});
    WICK_CHECK_TYPE(sorter.dtype() == kInt64, "{}: the sorter must be int64 (positions), got {}", op, sorter.dtype());
    WICK_CHECK(sorter.sizes() == boundaries.sizes(),
               "{}: the sorter {} must have the boundaries' shape {} (the argsort of the boundaries along the last "
               "dim)",
               op, shape_str(sorter), shape_str(boundaries));
    if (sorter.numel() > 0) {
      const int64_t lo = native::amin(sorter, {}, false).item<int64_t>();
      const int64_t hi = native::amax(sorter, {}, false).item<int64_t>();
      WICK_CHECK_INDEX(lo >= 0 && hi < boundaries.size(-1),
                       "{}: the sorter holds {}, out of range for a last dim of size {} (boundaries {})", op,
                       lo < 0 ? lo : hi, boundaries.size(-1), shape_str(boundaries));
    }
  }
  const DType common = native::result_type(boundaries, input);
  WICK_CHECK_TYPE(common != kBool, "{}: bool boundaries and input are not supported; convert them to int64", op);
  const std::vector<int64_t> pos = with_host_type(common, [&](auto tag) {
    using T = decltype(tag);
    return search_loop<T>(boundaries, input, sorter, right);
  });
  return host_int64(pos, input.sizes(), input.device());
}

}  // namespace

Tensor bincount(const Tensor& a, const Tensor& weights, int64_t minlength) {
  WICK_CHECK(a.defined(), "bincount: the input is an undefined tensor");
  WICK_CHECK_TYPE(a.dtype() == kInt64, "bincount: the input must be int64 (non-negative integers), got {}", a.dtype());
  WICK_CHECK(minlength >= 0, "bincount: minlength must be >= 0, got {}", minlength);
  WICK_CHECK(a.dim() == 1, "bincount: the input must be 1-d, got shape {}; flatten it first", shape_str(a));
  const Device dev = a.device();
  if (weights.defined()) {
    native::check_same_device("bincount", {&a, &weights});
    WICK_CHECK(weights.dim() == 1 && weights.size(0) == a.size(0),
               "bincount: the weights {} must be 1-d with the input's length {}", shape_str(weights), a.size(0));
  }
  if (a.numel() == 0) return native::zeros({minlength}, kInt64, dev);  // int64 even with weights, as PyTorch
  const std::vector<int64_t> x = a.to_vector<int64_t>();
  const int64_t lo = *std::min_element(x.begin(), x.end()), hi = *std::max_element(x.begin(), x.end());
  WICK_CHECK(lo >= 0, "bincount: the input holds {}; only non-negative values can be counted", lo);
  WICK_CHECK(hi < INT64_MAX, "bincount: the input holds {}, and a result of {} + 1 counts does not fit in int64", hi,
             hi);
  const int64_t length = std::max(hi + 1, minlength);  // native::zeros refuses a length no memory holds
  if (!weights.defined()) return bincount_loop<int64_t>(x, {}, length, kInt64, dev);
  if (weights.dtype() == kFloat32)  // float32 weights sum in float32, every other dtype in float64
    return bincount_loop<float>(x, weights.to_vector<float>(), length, kFloat32, dev);
  return bincount_loop<double>(x, weights.to_vector<double>(), length, kFloat64, dev);
}

Tensor histc(const Tensor& a, int64_t bins, Scalar min, Scalar max) {
  WICK_CHECK(a.defined(), "histc: the input is an undefined tensor");
  WICK_CHECK_TYPE(is_floating(a.dtype()), "histc: the input must be floating point, got {}", a.dtype());
  WICK_CHECK(bins > 0, "histc: bins must be > 0, got {}", bins);
  return with_host_type(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> x = a.to_vector<T>();
    double lo = min.to<double>(), hi = max.to<double>();
    if (lo == hi && !x.empty()) {  // the data's range; NaN anywhere makes it NaN, as aminmax
      lo = hi = static_cast<double>(x[0]);
      for (const T v : x) {
        if (std::isnan(static_cast<double>(v)) || std::isnan(lo)) {
          lo = hi = NAN;
          break;
        }
        lo = std::min(lo, static_cast<double>(v));
        hi = std::max(hi, static_cast<double>(v));
      }
    }
    if (lo == hi) {
      lo -= 1;
      hi += 1;
    }
    WICK_CHECK(std::isfinite(lo) && std::isfinite(hi), "histc: the range [{}, {}] of input {} is not finite", lo, hi,
               shape_str(a));
    WICK_CHECK(lo < hi, "histc: max must be larger than min, got min {} and max {}", lo, hi);
    const T tlo = static_cast<T>(lo), thi = static_cast<T>(hi);
    WICK_CHECK(std::isfinite(tlo) && std::isfinite(thi),
               "histc: the range [{}, {}] is not finite in the input's dtype {} (input {}); give a range within it", lo,
               hi, a.dtype(), shape_str(a));
    return histc_loop<T>(x, bins, tlo, thi, a.dtype(), a.device());
  });
}

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& input, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  return search("searchsorted", sorted_sequence, input, out_int32, right, side, sorter);
}

Tensor searchsorted(const Tensor& sorted_sequence, Scalar input, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  WICK_CHECK(sorted_sequence.defined(), "searchsorted: the boundaries are an undefined tensor");
  const Tensor x = native::scalar_tensor(input, native::result_type(sorted_sequence, input), sorted_sequence.device());
  return search("searchsorted", sorted_sequence, x, out_int32, right, side, sorter);
}

Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32, bool right) {
  WICK_CHECK(boundaries.defined() && input.defined(), "bucketize: the input and the boundaries must be defined");
  WICK_CHECK(boundaries.dim() == 1, "bucketize: the boundaries must be 1-d, got shape {}", shape_str(boundaries));
  return search("bucketize", boundaries, input, out_int32, right, std::nullopt, Tensor());
}

Tensor bucketize(Scalar input, const Tensor& boundaries, bool out_int32, bool right) {
  WICK_CHECK(boundaries.defined(), "bucketize: the boundaries are an undefined tensor");
  return bucketize(native::scalar_tensor(input, native::result_type(boundaries, input), boundaries.device()),
                   boundaries, out_int32, right);
}

}  // namespace wick
