// Views: new TensorImpls over the same storage, sharing the version counter. No copies.
#include <string>

#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::native {

namespace {
Tensor make_view(const Tensor& t, DimVector sizes, DimVector strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  const TensorImpl* src = t.impl();
  impl->storage = src->storage;
  impl->offset = offset;
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->dtype = src->dtype;
  impl->own_version = src->own_version;
  return Tensor(std::move(impl));
}

// The strides for viewing t with `shape` without a copy, or nothing when impossible
// (the rule of PyTorch's computeStride).
std::optional<DimVector> view_strides(IntArrayRef old_sizes, IntArrayRef old_strides, IntArrayRef shape) {
  DimVector new_strides(shape.size());
  if (old_sizes.empty()) {
    for (auto& s : new_strides) s = 1;
    return new_strides;
  }
  int64_t numel = 1;
  for (auto s : old_sizes) numel *= s;
  if (numel == 0) {
    if (old_sizes == shape) return DimVector(old_strides);
    return contiguous_strides(shape);
  }
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    if (d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

DimVector infer_shape(IntArrayRef shape, int64_t numel, IntArrayRef from, const char* op) {
  DimVector out(shape);
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      WICK_CHECK(infer < 0, "{}: only one dim may be -1 in shape [{}]", op, fmt::join(shape, ", "));
      infer = static_cast<int>(i);
    } else {
      WICK_CHECK(shape[i] >= 0, "{}: invalid size {} in shape [{}]", op, shape[i], fmt::join(shape, ", "));
      WICK_CHECK(!mul_overflow(known, shape[i], &known),
                 "{}: shape [{}] is too large: its element count overflows int64", op, fmt::join(shape, ", "));
    }
  }
  if (infer >= 0) {
    WICK_CHECK(known != 0 && numel % known == 0, "{}: shape [{}] is invalid for a tensor of shape [{}] ({} elements)",
               op, fmt::join(shape, ", "), fmt::join(from, ", "), numel);
    out[infer] = numel / known;
  } else {
    WICK_CHECK(known == numel, "{}: shape [{}] is invalid for a tensor of shape [{}] ({} elements)", op,
               fmt::join(shape, ", "), fmt::join(from, ", "), numel);
  }
  checked_numel(out, op);  // the strides of an empty tensor's new shape must fit too (Note [Checked sizes])
  return out;
}
}  // namespace

// Note [as_strided bounds]: the view must lie inside its storage. Like PyTorch's setStorage
// check, the storage offset must be >= 0, strides must be >= 0, and a non-empty view's last
// element (offset + sum (size - 1) * stride) must be an element of the storage; otherwise the
// view would read and write past the allocation. All of it in checked int64 arithmetic.
Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  WICK_CHECK(t.defined(), "as_strided: the input is an undefined tensor");
  WICK_CHECK(sizes.size() == strides.size(), "as_strided: sizes [{}] and strides [{}] have different lengths",
             fmt::join(sizes, ", "), fmt::join(strides, ", "));
  const int64_t numel = checked_numel(sizes, "as_strided");
  for (size_t i = 0; i < strides.size(); ++i)
    WICK_CHECK(strides[i] >= 0, "as_strided: negative stride {} in dim {} (strides [{}]); strides must be >= 0",
               strides[i], i, fmt::join(strides, ", "));
  int64_t start = 0;
  bool overflow = add_overflow(t.storage_offset(), offset, &start);
  WICK_CHECK(!overflow && start >= 0,
             "as_strided: the offset {} moves the view of a tensor at storage offset {} before the start of its "
             "storage; the resulting storage offset must be >= 0",
             offset, t.storage_offset());
  const int64_t capacity = static_cast<int64_t>(t.impl()->storage->nbytes() / element_size(t.dtype()));
  int64_t last = start;  // the storage index of the view's last element
  for (size_t i = 0; i < sizes.size() && numel > 0; ++i) {
    int64_t span = 0;
    overflow = overflow || mul_overflow(sizes[i] - 1, strides[i], &span) || add_overflow(last, span, &last);
  }
  WICK_CHECK(numel == 0 || (!overflow && last < capacity),
             "as_strided: sizes [{}] with strides [{}] at storage offset {} reach element {} of a storage that "
             "holds {} elements of {}; the view must lie inside its storage",
             fmt::join(sizes, ", "), fmt::join(strides, ", "), start,
             overflow ? std::string("past int64") : std::to_string(last), capacity, t.dtype());
  return make_view(t, DimVector(sizes), DimVector(strides), start);
}

Tensor alias(const Tensor& t) {
  WICK_CHECK(t.defined(), "alias: the input is an undefined tensor");
  return make_view(t, t.impl()->sizes, t.impl()->strides, t.storage_offset());
}

Tensor alias_with_new_version(const Tensor& t) {
  Tensor a = alias(t);
  a.impl()->own_version = std::make_shared<VersionCounter>();
  return a;
}

Tensor view(const Tensor& t, IntArrayRef shape) {
  DimVector s = infer_shape(shape, t.numel(), t.sizes(), "view");
  auto st = view_strides(t.sizes(), t.strides(), s);
  WICK_CHECK(st.has_value(),
             "view: shape [{}] is incompatible with the strides [{}] of a tensor of shape [{}] "
             "(the view would need a copy); use .reshape() instead",
             fmt::join(shape, ", "), fmt::join(t.strides(), ", "), fmt::join(t.sizes(), ", "));
  return make_view(t, std::move(s), std::move(*st), t.storage_offset());
}

Tensor reshape(const Tensor& t, IntArrayRef shape) {
  DimVector s = infer_shape(shape, t.numel(), t.sizes(), "reshape");
  if (auto st = view_strides(t.sizes(), t.strides(), s))
    return make_view(t, std::move(s), std::move(*st), t.storage_offset());
  return view(contiguous(t), s);
}

Tensor transpose(const Tensor& t, int64_t d0, int64_t d1) {
  const int64_t n = t.dim();
  d0 = wrap_dim(d0, n, "transpose");  // a 0-dim tensor takes only 0 and -1, as PyTorch
  d1 = wrap_dim(d1, n, "transpose");
  if (n == 0) return alias(t);
  DimVector sz = t.impl()->sizes, st = t.impl()->strides;
  std::swap(sz[d0], sz[d1]);
  std::swap(st[d0], st[d1]);
  return make_view(t, std::move(sz), std::move(st), t.storage_offset());
}

Tensor permute(const Tensor& t, IntArrayRef dims) {
  const int64_t n = t.dim();
  WICK_CHECK(static_cast<int64_t>(dims.size()) == n, "permute: got {} dims [{}] for a tensor with {} dims", dims.size(),
             fmt::join(dims, ", "), n);
  DimVector sz(n), st(n);
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[i], n, "permute");
    WICK_CHECK(!seen[d], "permute: dim {} repeats in [{}]", d, fmt::join(dims, ", "));
    seen[d] = true;
    sz[i] = t.sizes()[d];
    st[i] = t.strides()[d];
  }
  return make_view(t, std::move(sz), std::move(st), t.storage_offset());
}

Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  WICK_CHECK_INDEX(t.dim() > 0, "slice: cannot slice a 0-dim tensor");
  dim = wrap_dim(dim, t.dim(), "slice");
  WICK_CHECK(step > 0, "slice: step must be positive (got {})", step);
  const int64_t n = t.sizes()[dim];
  int64_t s = start.value_or(0), e = end.value_or(n);
  if (s < 0) s += n;
  if (e < 0) e += n;
  s = std::clamp<int64_t>(s, 0, n);
  e = std::clamp<int64_t>(e, s, n);
  DimVector sz = t.impl()->sizes, st = t.impl()->strides;
  sz[dim] = e > s ? (e - s - 1) / step + 1 : 0;  // never e - s + step - 1, which overflows for a huge step
  // A step past the dim's size takes one element; its stride is then never used to move, so it is
  // kept as it is rather than multiplied past int64.
  if (sz[dim] > 1) {
    WICK_CHECK(!mul_overflow(st[dim], step, &st[dim]), "slice: stride {} times step {} overflows int64",
               t.strides()[dim], step);
  }
  return make_view(t, std::move(sz), std::move(st), t.storage_offset() + s * t.strides()[dim]);
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  WICK_CHECK_INDEX(t.dim() > 0, "narrow: cannot narrow a 0-dim tensor");
  dim = wrap_dim(dim, t.dim(), "narrow");
  const int64_t n = t.sizes()[dim];
  if (start < 0) start += n;
  WICK_CHECK_INDEX(start >= 0 && length >= 0 && start <= n && length <= n - start,
                   "narrow: start {} + length {} exceeds size {} of dim {} (shape [{}])", start, length, n, dim,
                   fmt::join(t.sizes(), ", "));
  return slice(t, dim, start, start + length, 1);
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  WICK_CHECK_INDEX(t.dim() > 0, "select: cannot select from a 0-dim tensor");
  dim = wrap_dim(dim, t.dim(), "select");
  const int64_t n = t.sizes()[dim];
  WICK_CHECK_INDEX(index >= -n && index < n, "select: index {} is out of range for dim {} of size {} (shape [{}])",
                   index, dim, n, fmt::join(t.sizes(), ", "));
  if (index < 0) index += n;
  DimVector sz = t.impl()->sizes, st = t.impl()->strides;
  const int64_t off = t.storage_offset() + index * st[dim];
  sz.erase(dim);
  st.erase(dim);
  return make_view(t, std::move(sz), std::move(st), off);
}

Tensor expand(const Tensor& t, IntArrayRef shape) {
  const int64_t n = static_cast<int64_t>(shape.size());
  WICK_CHECK(n >= t.dim(), "expand: the target shape [{}] has fewer dims than the tensor's shape [{}]",
             fmt::join(shape, ", "), fmt::join(t.sizes(), ", "));
  DimVector sz(n), st(n);
  const int64_t off = n - t.dim();
  for (int64_t i = 0; i < n; ++i) {
    if (i < off) {
      WICK_CHECK(shape[i] >= 0, "expand: size -1 is not allowed in a new leading dim (shape [{}])",
                 fmt::join(shape, ", "));
      sz[i] = shape[i];
      st[i] = 0;
      continue;
    }
    const int64_t have = t.sizes()[i - off];
    const int64_t want = shape[i] == -1 ? have : shape[i];
    WICK_CHECK(want >= 0, "expand: invalid size {} in dim {} of shape [{}] (only -1 may be negative)", shape[i], i,
               fmt::join(shape, ", "));
    WICK_CHECK(have == want || have == 1, "expand: cannot expand shape [{}] to [{}] (dim {}: {} is not 1)",
               fmt::join(t.sizes(), ", "), fmt::join(shape, ", "), i, have);
    sz[i] = want;
    st[i] = have == want ? t.strides()[i - off] : 0;
  }
  checked_numel(sz, "expand");  // Note [Checked sizes]: a stride-0 view may not claim more elements than int64 counts
  return make_view(t, std::move(sz), std::move(st), t.storage_offset());
}

Tensor squeeze(const Tensor& t) {
  DimVector sz, st;
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (t.sizes()[i] == 1) continue;
    sz.push_back(t.sizes()[i]);
    st.push_back(t.strides()[i]);
  }
  return make_view(t, std::move(sz), std::move(st), t.storage_offset());
}

Tensor squeeze(const Tensor& t, int64_t dim) {
  dim = wrap_dim(dim, t.dim(), "squeeze");  // checked on a 0-dim tensor too
  if (t.dim() == 0) return alias(t);
  if (t.sizes()[dim] != 1) return alias(t);
  DimVector sz = t.impl()->sizes, st = t.impl()->strides;
  sz.erase(dim);
  st.erase(dim);
  return make_view(t, std::move(sz), std::move(st), t.storage_offset());
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  dim = wrap_dim(dim, t.dim() + 1, "unsqueeze");
  DimVector sz = t.impl()->sizes, st = t.impl()->strides;
  const int64_t new_stride = dim < t.dim() ? sz[dim] * st[dim] : 1;
  sz.insert(dim, 1);
  st.insert(dim, new_stride);
  return make_view(t, std::move(sz), std::move(st), t.storage_offset());
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  start_dim = wrap_dim(start_dim, t.dim(), "flatten");  // checked on a 0-dim tensor too
  end_dim = wrap_dim(end_dim, t.dim(), "flatten");
  if (t.dim() == 0) return reshape(t, {1});
  WICK_CHECK(start_dim <= end_dim, "flatten: start_dim {} must not come after end_dim {}", start_dim, end_dim);
  DimVector shape;
  int64_t prod = 1;
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (i < start_dim || i > end_dim) {
      shape.push_back(t.sizes()[i]);
    } else {
      prod *= t.sizes()[i];
      if (i == end_dim) shape.push_back(prod);
    }
  }
  return reshape(t, shape);
}

}  // namespace wick::native
