#include "support/allclose.h"

#include <cmath>

#include "wick/core/native.h"

namespace wick::test {

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

CloseResult allclose(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  CloseResult r;
  if (!actual.defined() || !expected.defined()) {
    r.ok = actual.defined() == expected.defined();
    if (!r.ok)
      r.message = fmt::format("one tensor is undefined (actual {}, expected {})",
                              actual.defined() ? "defined" : "undefined", expected.defined() ? "defined" : "undefined");
    return r;
  }
  if (actual.sizes() != expected.sizes()) {
    r.ok = false;
    r.message = fmt::format("shape mismatch: actual [{}], expected [{}]", fmt::join(actual.sizes(), ", "),
                            fmt::join(expected.sizes(), ", "));
    return r;
  }
  const std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
  int64_t first_bad = -1, bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    bool ok;
    if (std::isfinite(a[i]) && std::isfinite(e[i])) {
      const double d = std::abs(a[i] - e[i]);
      r.max_abs_err = std::max(r.max_abs_err, d);
      if (e[i] != 0) r.max_rel_err = std::max(r.max_rel_err, d / std::abs(e[i]));
      ok = d <= atol + rtol * std::abs(e[i]);
    } else {
      ok = (std::isnan(a[i]) && std::isnan(e[i])) || a[i] == e[i];
    }
    if (!ok) {
      ++bad;
      if (first_bad < 0) first_bad = static_cast<int64_t>(i);
    }
  }
  r.ok = bad == 0;
  if (!r.ok) {
    // The multi-index of the first mismatch, for a readable report.
    std::vector<int64_t> idx(static_cast<size_t>(actual.dim()));
    int64_t rem = first_bad;
    for (int64_t d = actual.dim() - 1; d >= 0; --d) {
      idx[static_cast<size_t>(d)] = rem % actual.size(d);
      rem /= actual.size(d);
    }
    r.message = fmt::format(
        "{} of {} elements differ (rtol {}, atol {}); first at [{}]: actual {:.17g}, expected {:.17g}; max abs err "
        "{:.3g}, max rel err {:.3g}; shape [{}]",
        bad, a.size(), rtol, atol, fmt::join(idx, ", "), a[static_cast<size_t>(first_bad)],
        e[static_cast<size_t>(first_bad)], r.max_abs_err, r.max_rel_err, fmt::join(actual.sizes(), ", "));
  } else {
    r.message = fmt::format("ok: max abs err {:.3g}, max rel err {:.3g}", r.max_abs_err, r.max_rel_err);
  }
  return r;
}

}  // namespace wick::test
