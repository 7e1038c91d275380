// Joining, splitting and indexing: cat, stack, split, chunk, index_select, index_add, gather,
// scatter_add.
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::native {

Tensor cat(const std::vector<Tensor>& ts, int64_t dim) {
  WICK_CHECK(!ts.empty(), "cat: expected a non-empty list of tensors");
  // PyTorch skips 1-d empty tensors (legacy behaviour); wick requires matching ranks.
  const Tensor& first = ts[0];
  WICK_CHECK(first.defined(), "cat: tensor 0 is undefined");
  WICK_CHECK_INDEX(first.dim() > 0, "cat: zero-dim tensor 0 cannot be concatenated; unsqueeze it first");
  dim = wrap_dim(dim, first.dim(), "cat");
  DType dt = first.dtype();
  int64_t total = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    WICK_CHECK(t.defined(), "cat: tensor {} is undefined", i);
    WICK_CHECK(t.device() == first.device(),
               "cat: expected all tensors on the same device, but tensor 0 is on {} and "
               "tensor {} is on {}",
               first.device(), i, t.device());
    WICK_CHECK(t.dim() == first.dim(), "cat: tensor {} has {} dims (shape [{}]) but tensor 0 has {} (shape [{}])", i,
               t.dim(), fmt::join(t.sizes(), ", "), first.dim(), fmt::join(first.sizes(), ", "));
    for (int64_t d = 0; d < t.dim(); ++d)
      WICK_CHECK(d == dim || t.sizes()[d] == first.sizes()[d],
                 "cat: sizes must match except in dim {}, but tensor {} "
                 "has shape [{}] and tensor 0 has [{}]",
                 dim, i, fmt::join(t.sizes(), ", "), fmt::join(first.sizes(), ", "));
    dt = promote_types(dt, t.dtype());
    WICK_CHECK(!add_overflow(total, t.sizes()[dim], &total),
               "cat: the sizes in dim {} sum past int64 (tensor {} has "
               "shape [{}])",
               dim, i, fmt::join(t.sizes(), ", "));
  }
  DimVector shape(first.sizes());
  shape[dim] = total;
  Tensor out = empty(shape, dt, first.device());
  int64_t off = 0;
  for (const Tensor& t : ts) {
    const int64_t n = t.sizes()[dim];
    if (n) copy_(narrow(out, dim, off, n), t);
    off += n;
  }
  out.impl()->version().value.store(0);
  return out;
}

Tensor stack(const std::vector<Tensor>& ts, int64_t dim) {
  WICK_CHECK(!ts.empty(), "stack: expected a non-empty list of tensors");
  WICK_CHECK(ts[0].defined(), "stack: tensor 0 is undefined");
  dim = wrap_dim(dim, ts[0].dim() + 1, "stack");
  for (size_t i = 1; i < ts.size(); ++i)  // checked here so that the error names stack, not cat
    WICK_CHECK(!ts[i].defined() || ts[i].device() == ts[0].device(),
               "stack: expected all tensors on the same device, "
               "but tensor 0 is on {} and tensor {} is on {}",
               ts[0].device(), i, ts[i].device());
  std::vector<Tensor> us;
  us.reserve(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    WICK_CHECK(ts[i].defined() && ts[i].sizes() == ts[0].sizes(),
               "stack: expected tensors of equal shape, but "
               "tensor {} has shape [{}] and tensor 0 has [{}]",
               i, ts[i].defined() ? fmt::format("{}", fmt::join(ts[i].sizes(), ", ")) : "undefined",
               fmt::join(ts[0].sizes(), ", "));
    us.push_back(unsqueeze(ts[i], dim));
  }
  return cat(us, dim);
}

std::vector<Tensor> split_with_sizes(const Tensor& t, IntArrayRef sizes, int64_t dim) {
  WICK_CHECK_INDEX(t.dim() > 0, "split: cannot split a 0-dim tensor");
  dim = wrap_dim(dim, t.dim(), "split");
  int64_t total = 0;
  for (auto s : sizes) {
    WICK_CHECK(s >= 0, "split_with_sizes: negative size {} in [{}]", s, fmt::join(sizes, ", "));
    WICK_CHECK(!add_overflow(total, s, &total), "split_with_sizes: sizes [{}] sum past int64 but dim {} has size {}",
               fmt::join(sizes, ", "), dim, t.sizes()[dim]);
  }
  WICK_CHECK(total == t.sizes()[dim], "split_with_sizes: sizes [{}] sum to {} but dim {} has size {}",
             fmt::join(sizes, ", "), total, dim, t.sizes()[dim]);
  std::vector<Tensor> out;
  int64_t off = 0;
  for (auto s : sizes) {
    out.push_back(narrow(t, dim, off, s));
    off += s;
  }
  return out;
}

std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim) {
  WICK_CHECK_INDEX(t.dim() > 0, "split: cannot split a 0-dim tensor");
  dim = wrap_dim(dim, t.dim(), "split");
  WICK_CHECK(split_size > 0 || t.sizes()[dim] == 0, "split: split_size must be positive, got {}", split_size);
  const int64_t n = t.sizes()[dim];
  std::vector<Tensor> out;
  if (n == 0) return {t};
  for (int64_t off = 0; off < n;) {
    const int64_t len = std::min(split_size, n - off);  // never off + split_size: it may overflow
    out.push_back(narrow(t, dim, off, len));
    off += len;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  WICK_CHECK(chunks > 0, "chunk: the number of chunks must be positive, got {}", chunks);
  WICK_CHECK_INDEX(t.dim() > 0, "chunk: cannot chunk a 0-dim tensor");
  dim = wrap_dim(dim, t.dim(), "chunk");
  const int64_t n = t.sizes()[dim];
  if (n == 0) {
    // An empty dim gives `chunks` empty chunks, as torch.chunk (split gives one piece).
    WICK_CHECK(chunks <= (int64_t{1} << 24),
               "chunk: {} chunks of an empty dim would hold that many tensors; ask for at most 2^24", chunks);
    std::vector<Tensor> out;
    out.reserve(static_cast<size_t>(chunks));
    for (int64_t i = 0; i < chunks; ++i) out.push_back(narrow(t, dim, 0, 0));  // each its own view
    return out;
  }
  const int64_t size = n / chunks + (n % chunks != 0);  // ceil(n / chunks), as torch.chunk: may give fewer chunks
  return split(t, size, dim);
}

namespace {
void check_index_tensor(const Tensor& index, const char* op) {
  WICK_CHECK_TYPE(index.defined() && index.dtype() == kInt64, "{}: expected an int64 index tensor, got {}", op,
                  index.defined() ? dtype_name(index.dtype()) : "an undefined tensor");
}
void check_index_values(const Tensor& index, int64_t bound, const char* op, int64_t dim) {
  if (index.numel() == 0) return;
  Tensor lo = amin(index, {}, false), hi = amax(index, {}, false);
  const int64_t l = lo.item<int64_t>(), h = hi.item<int64_t>();
  WICK_CHECK_INDEX(l >= 0 && h < bound,
                   "{}: index out of range: values span [{}, {}] but dim {} has size {} (valid: "
                   "[0, {}])",
                   op, l, h, dim, bound, bound - 1);
}
}  // namespace

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index) {
  check_same_device("index_select", {&t, &index});
  check_index_tensor(index, "index_select");
  WICK_CHECK(index.dim() <= 1, "index_select: the index must be 0-d or 1-d, got shape [{}]",
             fmt::join(index.sizes(), ", "));
  Tensor idx = index.dim() == 0 ? unsqueeze(index, 0) : index;
  const int64_t d = wrap_dim(dim, t.dim(), "index_select");
  Tensor src = t.dim() == 0 ? unsqueeze(t, 0) : t;
  check_index_values(idx, src.sizes()[d], "index_select", d);
  DimVector shape(src.sizes());
  shape[d] = idx.numel();
  Tensor out = empty(shape, t.dtype(), t.device());
  if (out.numel()) backend(t.device()).index_select(kernel_tensor(out), kernel_tensor(src), d, kernel_tensor(idx));
  return t.dim() == 0 ? view(out, {}) : out;
}

Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
  check_same_device("index_add", {&t, &index, &src});
  check_index_tensor(index, "index_add");
  WICK_CHECK_TYPE(src.dtype() == t.dtype(),
                  "index_add: self ({}) and src ({}) must have the same dtype; convert src first", t.dtype(),
                  src.dtype());
  if (t.dim() == 0) {  // a 0-dim self is a 1-element vector here, as in index_select
    wrap_dim(dim, 0, "index_add");
    return view(index_add(unsqueeze(t, 0), 0, index.dim() == 0 ? unsqueeze(index, 0) : index,
                          src.dim() == 0 ? unsqueeze(src, 0) : src),
                {});
  }
  const int64_t d = wrap_dim(dim, t.dim(), "index_add");
  WICK_CHECK(index.dim() == 1 && src.dim() == t.dim() && src.sizes()[d] == index.numel(),
             "index_add: expected a 1-d index of length src.size({}); got index [{}], src [{}], self [{}]", d,
             fmt::join(index.sizes(), ", "), fmt::join(src.sizes(), ", "), fmt::join(t.sizes(), ", "));
  for (int64_t k = 0; k < t.dim(); ++k)
    WICK_CHECK(k == d || src.sizes()[k] == t.sizes()[k],
               "index_add: src [{}] must match self [{}] in every dim but dim {} (they differ in dim {})",
               fmt::join(src.sizes(), ", "), fmt::join(t.sizes(), ", "), d, k);
  check_index_values(index, t.sizes()[d], "index_add", d);
  Tensor out = clone(t);
  if (src.numel()) backend(t.device()).index_add(kernel_tensor(out), d, kernel_tensor(index), kernel_tensor(src));
  return out;
}

Tensor gather(const Tensor& t, int64_t dim, const Tensor& index) {
  check_same_device("gather", {&t, &index});
  check_index_tensor(index, "gather");
  const int64_t d = wrap_dim(dim, t.dim(), "gather");
  WICK_CHECK(index.dim() == t.dim(), "gather: index has {} dims (shape [{}]) but the input has {} (shape [{}])",
             index.dim(), fmt::join(index.sizes(), ", "), t.dim(), fmt::join(t.sizes(), ", "));
  for (int64_t k = 0; k < t.dim(); ++k)
    WICK_CHECK(k == d || index.sizes()[k] <= t.sizes()[k],
               "gather: index shape [{}] exceeds input shape [{}] in dim {}", fmt::join(index.sizes(), ", "),
               fmt::join(t.sizes(), ", "), k);
  check_index_values(index, t.dim() ? t.sizes()[d] : 1, "gather", d);
  Tensor out = empty(index.sizes(), t.dtype(), t.device());
  if (out.numel()) backend(t.device()).gather(kernel_tensor(out), kernel_tensor(t), d, kernel_tensor(index));
  return out;
}

Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
  check_same_device("scatter_add", {&t, &index, &src});
  check_index_tensor(index, "scatter_add");
  WICK_CHECK_TYPE(src.dtype() == t.dtype(),
                  "scatter_add: self ({}) and src ({}) must have the same dtype; convert src first", t.dtype(),
                  src.dtype());
  const int64_t d = wrap_dim(dim, t.dim(), "scatter_add");
  WICK_CHECK(index.dim() == t.dim() && src.dim() == t.dim(),
             "scatter_add: self [{}], index [{}] and src [{}] must "
             "have the same number of dims",
             fmt::join(t.sizes(), ", "), fmt::join(index.sizes(), ", "), fmt::join(src.sizes(), ", "));
  for (int64_t k = 0; k < t.dim(); ++k) {
    WICK_CHECK(index.sizes()[k] <= src.sizes()[k], "scatter_add: index shape [{}] exceeds src shape [{}] in dim {}",
               fmt::join(index.sizes(), ", "), fmt::join(src.sizes(), ", "), k);
    WICK_CHECK(k == d || index.sizes()[k] <= t.sizes()[k],
               "scatter_add: index shape [{}] exceeds self shape [{}] in "
               "dim {}",
               fmt::join(index.sizes(), ", "), fmt::join(t.sizes(), ", "), k);
  }
  check_index_values(index, t.dim() ? t.sizes()[d] : 1, "scatter_add", d);
  Tensor out = clone(t);
  if (index.numel()) backend(t.device()).scatter_add(kernel_tensor(out), d, kernel_tensor(index), kernel_tensor(src));
  return out;
}

}  // namespace wick::native
