// Printing: tensor([[...]], shape=[...], dtype=..., device=...), elided like PyTorch's.
#include <string>
#include <vector>

#include "wick/core/native.h"
#include "wick/core/tensor.h"

namespace wick {
namespace {

constexpr int64_t kElideThreshold = 1000;
constexpr int64_t kEdgeItems = 3;

// The elements as host values: int64 tensors keep their own values (a double holds integers
// only up to 2^53, and converting one back past INT64_MAX is undefined); the others go through
// double.
struct HostValues {
  std::vector<double> doubles;
  std::vector<int64_t> ints;
};

void format_rec(std::string& out, const Tensor& t, const HostValues& vals, std::vector<int64_t>& idx, int64_t d,
                bool elide, DType dtype, int indent) {
  const auto sizes = t.sizes();
  if (d == t.dim()) {
    int64_t off = 0, mul = 1;
    for (int64_t k = t.dim() - 1; k >= 0; --k) {
      off += idx[k] * mul;
      mul *= sizes[k];
    }
    if (dtype == DType::Int64)
      out += fmt::format("{}", vals.ints[static_cast<size_t>(off)]);
    else if (dtype == DType::Bool)
      out += vals.doubles[static_cast<size_t>(off)] != 0 ? "True" : "False";
    else
      out += fmt::format("{:.4f}", vals.doubles[static_cast<size_t>(off)]);
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
  HostValues vals;
  if (dtype() == DType::Int64) {
    Tensor host = native::contiguous(native::to(*this, kCPU, kInt64));
    const int64_t* p = static_cast<const int64_t*>(host.data_ptr());
    vals.ints.assign(p, p + host.numel());
  } else {
    Tensor host = native::contiguous(native::to(*this, kCPU, kFloat64));
    const double* p = static_cast<const double*>(host.data_ptr());
    vals.doubles.assign(p, p + host.numel());
  }
  std::string out = "tensor(";
  std::vector<int64_t> idx(static_cast<size_t>(dim()), 0);
  // An empty tensor prints as [] whatever its shape, as PyTorch's: walking the rows of a
  // [2^40, 0] tensor would build a string of terabytes.
  if (numel() == 0)
    out += "[]";
  else
    format_rec(out, *this, vals, idx, 0, numel() > kElideThreshold, dtype(), 7);
  out += fmt::format(", shape=[{}], dtype={}, device={})", fmt::join(sizes(), ", "), dtype(), device());
  return out;
}

}  // namespace wick
