// Tensor's core methods: layout queries, element access, version counter.
#include "wick/core/tensor.h"

#include <cstring>

#include "wick/core/backend.h"
#include "wick/core/error.h"
#include "wick/core/kernel_layout.h"
#include "wick/core/native.h"

namespace wick {

bool TensorImpl::is_contiguous() const { return is_contiguous_layout(sizes, strides); }

namespace {
const TensorImpl& checked(const std::shared_ptr<TensorImpl>& p, const char* what) {
  WICK_CHECK(p != nullptr,
             "Tensor::{}: the tensor is undefined (default-constructed); create it with a factory "
             "such as wick::zeros first",
             what);
  return *p;
}
}  // namespace

IntArrayRef Tensor::sizes() const { return checked(impl_, "sizes").sizes; }
IntArrayRef Tensor::strides() const { return checked(impl_, "strides").strides; }
int64_t Tensor::dim() const { return static_cast<int64_t>(checked(impl_, "dim").sizes.size()); }
int64_t Tensor::numel() const { return checked(impl_, "numel").numel(); }
DType Tensor::dtype() const { return checked(impl_, "dtype").dtype; }
Device Tensor::device() const { return checked(impl_, "device").device(); }
int64_t Tensor::storage_offset() const { return checked(impl_, "storage_offset").offset; }
bool Tensor::is_contiguous() const { return checked(impl_, "is_contiguous").is_contiguous(); }
void* Tensor::data_ptr() const { return checked(impl_, "data_ptr").data(); }
uint32_t Tensor::version() const { return checked(impl_, "version").version().value.load(std::memory_order_relaxed); }
void Tensor::bump_version() const {
  checked(impl_, "bump_version").version().value.fetch_add(1, std::memory_order_relaxed);
}

// A 0-dim tensor has no size or stride to give (wrap_dim accepts dim 0 and -1 there, for the ops
// that treat it as one element).
int64_t Tensor::size(int64_t d) const {
  WICK_CHECK_INDEX(dim() > 0, "Tensor::size: dim {} requested of a 0-dim tensor, which has no dims", d);
  return sizes()[native::wrap_dim(d, dim(), "Tensor::size")];
}
int64_t Tensor::stride(int64_t d) const {
  WICK_CHECK_INDEX(dim() > 0, "Tensor::stride: dim {} requested of a 0-dim tensor, which has no dims", d);
  return strides()[native::wrap_dim(d, dim(), "Tensor::stride")];
}

void Tensor::check_dtype_for_access(DType requested, const char* what) const {
  WICK_CHECK_TYPE(dtype() == requested,
                  "Tensor::{}: the tensor holds {} but {} was requested; convert with .to({}) first", what, dtype(),
                  requested, requested);
}

namespace {
Scalar read_scalar(const Tensor& t, int64_t elem_offset) {
  // Reads one element at `elem_offset` (relative to data_ptr) to the host.
  const size_t es = t.element_size();
  alignas(8) unsigned char buf[8] = {};
  const char* src = static_cast<const char*>(t.data_ptr()) + elem_offset * static_cast<int64_t>(es);
  if (t.is_cpu()) {
    std::memcpy(buf, src, es);
  } else {
    backend(t.device()).copy_bytes_host(buf, src, es, t.device(), /*to_device=*/false);
  }
  return dispatch(t.dtype(), "item", [&]<typename T>() -> Scalar {
    T v;
    std::memcpy(&v, buf, sizeof(T));
    return Scalar(v);
  });
}
}  // namespace

Scalar Tensor::item() const {
  WICK_CHECK(numel() == 1,
             "Tensor::item: expected a tensor with one element but got shape {}; reduce it first "
             "(e.g. .sum()) or index one element with .at()",
             fmt::join(sizes(), "x"));
  return read_scalar(*this, 0);
}

Scalar Tensor::at_scalar(IntArrayRef index) const {
  WICK_CHECK_INDEX(static_cast<int64_t>(index.size()) == dim(),
                   "Tensor::at: the tensor has {} dims (shape [{}]) but {} "
                   "indices were given",
                   dim(), fmt::join(sizes(), ", "), index.size());
  int64_t off = 0;
  for (size_t d = 0; d < index.size(); ++d) {
    int64_t i = index[d];
    const int64_t n = sizes()[d];
    if (i < 0) i += n;
    WICK_CHECK_INDEX(i >= 0 && i < n, "Tensor::at: index {} is out of bounds for dim {} of size {} (shape [{}])",
                     index[d], d, n, fmt::join(sizes(), ", "));
    off += i * strides()[d];
  }
  return read_scalar(*this, off);
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  Tensor c = native::to(*this, kCPU, dtype_v<T>);
  c = native::contiguous(c);
  const T* p = static_cast<const T*>(c.data_ptr());
  return std::vector<T>(p, p + c.numel());
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<bool> Tensor::to_vector<bool>() const;

}  // namespace wick
