// Shared front-end helpers: dims, broadcasting, promotion, device checks, kernel views.
#include <optional>

#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::native {

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t n = ndim == 0 ? 1 : ndim;  // a 0-dim tensor accepts dim 0 and -1, as PyTorch
  WICK_CHECK_INDEX(dim >= -n && dim < n,
                   "{}: dim {} is out of range for a tensor with {} dims (expected a dim in [{}, {}])", op, dim, ndim,
                   -n, n - 1);
  return dim < 0 ? dim + n : dim;
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    WICK_CHECK(da == db || da == 1 || db == 1,
               "{}: shapes [{}] and [{}] cannot be broadcast together (dim {}: {} vs {}); sizes must match or be 1", op,
               fmt::join(a, ", "), fmt::join(b, ", "), i, da, db);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector st(sizes.size());
  int64_t s = 1;
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    st[d] = s;
    s *= std::max<int64_t>(sizes[d], 1);
  }
  return st;
}

void check_same_device(const char* op, std::initializer_list<const Tensor*> ts) {
  const Tensor* first = nullptr;
  int i = 0;
  for (const Tensor* t : ts) {
    WICK_CHECK(t->defined(), "{}: operand {} is an undefined tensor", op, i);
    if (!first) {
      first = t;
    } else {
      WICK_CHECK(t->device() == first->device(),
                 "{}: expected all operands on the same device, but operand 0 is on {} and operand {} is on {}; "
                 "move them with .to(device) first",
                 op, first->device(), i, t->device());
    }
    ++i;
  }
}

namespace {
struct PromotionState {
  std::optional<DType> dimensioned, zero_dim, wrapped;
};
std::optional<DType> promote_opt(std::optional<DType> a, DType b) { return a ? promote_types(*a, b) : b; }
std::optional<DType> combine_categories(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (is_floating(*higher) || !lower) return higher;
  if (*higher == DType::Bool || is_floating(*lower)) return promote_types(*higher, *lower);
  return higher;
}
void update(PromotionState& s, const Tensor& t) {
  if (t.dim() == 0)
    s.zero_dim = promote_opt(s.zero_dim, t.dtype());
  else
    s.dimensioned = promote_opt(s.dimensioned, t.dtype());
}
void update(PromotionState& s, Scalar v) {
  // A Python-style number takes part by category only; floats count as the default float32.
  s.wrapped = promote_opt(s.wrapped, v.is_floating() ? DType::Float32 : v.dtype());
}
DType finish(const PromotionState& s) {
  return *combine_categories(s.dimensioned, combine_categories(s.zero_dim, s.wrapped));
}
}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  PromotionState s;
  update(s, a);
  update(s, b);
  return finish(s);
}

DType result_type(const Tensor& a, Scalar b) {
  PromotionState s;
  update(s, a);
  update(s, b);
  return finish(s);
}

KernelTensor kernel_tensor(const Tensor& t) {
  const TensorImpl* impl = t.impl();
  KernelTensor k;
  k.data = impl->data();
  k.dtype = impl->dtype;
  k.sizes = impl->sizes;
  k.strides = impl->strides;
  k.device = impl->device();
  return k;
}

KernelTensor kernel_tensor_broadcast(const Tensor& t, IntArrayRef shape) {
  const TensorImpl* impl = t.impl();
  KernelTensor k;
  k.data = impl->data();
  k.dtype = impl->dtype;
  k.device = impl->device();
  k.sizes = DimVector(shape);
  k.strides = DimVector(shape.size(), 0);
  const size_t off = shape.size() - impl->sizes.size();
  for (size_t i = 0; i < impl->sizes.size(); ++i) {
    k.strides[off + i] = impl->sizes[i] == 1 && shape[off + i] != 1 ? 0 : impl->strides[i];
  }
  return k;
}

}  // namespace wick::native
