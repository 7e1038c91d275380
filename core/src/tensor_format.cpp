// Printing: tensor([[...]], shape=[...], dtype=..., device=...), elided like PyTorch's.
#include <string>

#include "wick/core/native.h"
#include "wick/core/tensor.h"

namespace wick {
namespace {

constexpr int64_t kElideThreshold = 1000;
constexpr int64_t kEdgeItems = 3;

void format_rec(std::string& out, const Tensor& t, const std::vector<double>& vals, std::vector<int64_t>& idx,
                int64_t d, bool elide, DType dtype, int indent) {
  const auto sizes = t.sizes();
  if (d == t.dim()) {
    int64_t off = 0, mul = 1;
    for (int64_t k = t.dim() - 1; k >= 0; --k) {
      off += idx[k] * mul;
      mul *= sizes[k];
    }
    double v = vals[off];
    if (dtype == DType::Bool)
      out += v != 0 ? "True" : "False";
    else if (dtype == DType::Int64)
      out += fmt::format("{}", static_cast<int64_t>(v));
    else
      out += fmt::format("{:.4f}", v);
    return;
  }
  out += '[';
  const int64_t n = sizes[d];
  for (int64_t i = 0; i < n; ++i) {
    if (elide && n > 2 * kEdgeItems && i == kEdgeItems) {
      out += "...";
      i = n - kEdgeItems - 1;
      out += d + 1 == t.dim() ? ", " : ",\n" + std::string(static_cast<size_t>(indent + d + 1), ' ');
      continue;
    }
    idx[d] = i;
    format_rec(out, t, vals, idx, d + 1, elide, dtype, indent);
    if (i + 1 < n) out += d + 1 == t.dim() ? ", " : ",\n" + std::string(static_cast<size_t>(indent + d + 1), ' ');
  }
  out += ']';
}

}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(undefined)";
  Tensor host = native::contiguous(native::to(*this, kCPU, kFloat64));
  const double* p = static_cast<const double*>(host.data_ptr());
  std::vector<double> vals(p, p + host.numel());
  std::string out = "tensor(";
  std::vector<int64_t> idx(static_cast<size_t>(dim()), 0);
  format_rec(out, *this, vals, idx, 0, numel() > kElideThreshold, dtype(), 7);
  out += fmt::format(", shape=[{}], dtype={}, device={})", fmt::join(sizes(), ", "), dtype(), device());
  return out;
}

}  // namespace wick
