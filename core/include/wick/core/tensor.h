#pragma once
// Tensor: a cheap, reference-counted handle to a TensorImpl. Identity is the TensorImpl pointer.
//
// Note [Two levels of ops]
// Core implements every op once as a *native* function (wick::native::add, ...): argument checks,
// broadcasting, dtype promotion, output allocation, then a per-device kernel. Natives know
// nothing about gradients. The public API (wick::add, t.add(...), operators, factories taking
// requires_grad) is the autograd layer's: it calls the native and records a graph node when
// grad mode is on and an input requires grad. The op methods below are therefore *declared*
// here, with the class, and *defined* in autograd/ (libwick_autograd); code inside core calls
// natives only, so core never depends on autograd. See docs/architecture.md.
//
// Note [Tensor method lists]
// The class declares some 300 methods, most one per free function. The later topics' lists live
// in files of their own (tensor_methods_index.inc, tensor_methods_special.inc) that tensor.h
// includes inside the class body: a C++ class cannot be declared in parts, and one file of every
// method would be a thousand lines. An .inc file holds member declarations only and is never
// included anywhere else. Each such method calls the free function with the tensor first, as
// LibTorch's Tensor methods do, and a test compares the two on every device.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "wick/core/dim_vector.h"
#include "wick/core/removable_handle.h"
#include "wick/core/scalar.h"
#include "wick/core/tensor_impl.h"
#include "wick/core/tensor_options.h"

namespace wick {

namespace autograd {
class Node;
}

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- core: layout and data (core/src/tensor.cpp) ----
  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  /// True when both handles name the same TensorImpl.
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  IntArrayRef sizes() const;
  IntArrayRef strides() const;
  /// Size of dim `d` (negative dims count from the end); throws for a bad dim.
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t dim() const;
  int64_t numel() const;
  DType dtype() const;
  DType scalar_type() const { return dtype(); }
  Device device() const;
  TensorOptions options() const { return TensorOptions().dtype(dtype()).device(device()); }
  int64_t storage_offset() const;
  size_t element_size() const { return wick::element_size(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  bool is_contiguous() const;
  bool is_floating_point() const { return is_floating(dtype()); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  /// Address of the first element (storage data + offset).
  void* data_ptr() const;
  /// Typed address of the first element; throws if T does not match dtype().
  template <typename T>
  T* data_ptr() const {
    check_dtype_for_access(dtype_v<T>, "data_ptr");
    return static_cast<T*>(data_ptr());
  }
  /// The value of a one-element tensor (copied to the host when needed).
  Scalar item() const;
  template <typename T>
  T item() const {
    return item().to<T>();
  }
  /// Bounds-checked read of one element (any device), as T.
  template <typename T>
  T at(IntArrayRef index) const {
    return at_scalar(index).to<T>();
  }
  Scalar at_scalar(IntArrayRef index) const;
  /// Number of in-place writes to this tensor's data through any of its views.
  uint32_t version() const;
  /// Marks an in-place write (ops call this; users rarely need to).
  void bump_version() const;
  /// Values, shape, dtype and device, as printed by fmt::format("{}", t).
  std::string to_string() const;
  /// Elements as a std::vector<T> (copied to the host, converted to T).
  template <typename T>
  std::vector<T> to_vector() const;

  // ---- autograd state (defined in autograd/) ----
  bool requires_grad() const;
  /// Sets requires_grad on a leaf; returns *this.
  Tensor& requires_grad_(bool r = true);
  Tensor& set_requires_grad(bool r) { return requires_grad_(r); }
  /// The accumulated gradient of a leaf (undefined when none).
  const Tensor& grad() const;
  Tensor& mutable_grad();
  void set_grad(const Tensor& g);
  /// Makes this leaf use `data`'s memory, shape, strides and dtype while keeping its identity
  /// and autograd state (requires_grad, grad, hooks), as LibTorch's set_data; Module::to() moves
  /// parameters this way so that optimizers holding them stay valid. The tensor gets a new
  /// version counter one past the old value, so a graph that saved the old data refuses to run
  /// backward. Throws StateError for a non-leaf, TypeError when a tensor that requires grad
  /// would get a non-floating dtype.
  void set_data(const Tensor& data);
  std::shared_ptr<autograd::Node> grad_fn() const;
  bool is_leaf() const;
  /// Back-propagates from this tensor. A non-scalar tensor needs `gradient`. The graph is kept
  /// for another backward when `retain_graph` is true; unset, it follows `create_graph`, as in
  /// LibTorch.
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  /// A tensor sharing data (and version counter) that is not part of the graph.
  Tensor detach() const;
  Tensor& detach_();
  /// Keeps .grad() for this non-leaf after backward.
  void retain_grad() const;
  /// Registers `hook(grad)` to run each time the gradient with respect to this tensor is
  /// computed (torch.Tensor.register_hook); a defined return value replaces the gradient for
  /// everything downstream (.grad, retain_grad, the rest of backward). On a non-leaf the hook
  /// belongs to the tensor's current grad_fn output, so it keeps firing for this value after a
  /// later in-place op. Hooks never see an undefined (zero) gradient. StateError when the tensor
  /// does not require grad. Note [Gradient hooks] in autograd/hooks.h.
  RemovableHandle register_hook(std::function<Tensor(const Tensor&)> hook) const;
  /// The same for a hook that returns nothing (it only observes the gradient).
  template <class F>
  requires std::is_void_v<std::invoke_result_t<F&, const Tensor&>> RemovableHandle register_hook(F hook)
  const {
    return register_hook(std::function<Tensor(const Tensor&)>([h = std::move(hook)](const Tensor& g) mutable {
      h(g);
      return Tensor();
    }));
  }
  /// Registers `hook(leaf)` to run after backward has accumulated into this leaf's .grad
  /// (torch.Tensor.register_post_accumulate_grad_hook). StateError on a non-leaf.
  RemovableHandle register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const;

  // ---- views (defined in autograd/) ----
  Tensor view(IntArrayRef shape) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor t() const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor expand(IntArrayRef shape) const;
  Tensor expand_as(const Tensor& o) const { return expand(o.sizes()); }
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor view_as(const Tensor& o) const { return view(o.sizes()); }
  Tensor contiguous() const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;

  // ---- conversion and copies (defined in autograd/) ----
  Tensor to(Device d) const;
  Tensor to(DType t) const;
  Tensor to(Device d, DType t) const;
  Tensor clone() const;
  Tensor& copy_(const Tensor& src);

  // ---- math (defined in autograd/) ----
  Tensor add(const Tensor& o, Scalar alpha = 1) const;
  Tensor add(Scalar o) const;
  Tensor sub(const Tensor& o, Scalar alpha = 1) const;
  Tensor sub(Scalar o) const;
  Tensor mul(const Tensor& o) const;
  Tensor mul(Scalar o) const;
  Tensor div(const Tensor& o) const;
  Tensor div(Scalar o) const;
  Tensor pow(const Tensor& e) const;
  Tensor pow(Scalar e) const;
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor square() const;
  Tensor reciprocal() const;
  Tensor sign() const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max) const;
  Tensor eq(const Tensor& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor le(const Tensor& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor eq(Scalar o) const;
  Tensor ne(Scalar o) const;
  Tensor lt(Scalar o) const;
  Tensor le(Scalar o) const;
  Tensor gt(Scalar o) const;
  Tensor ge(Scalar o) const;
  Tensor sum() const;
  Tensor sum(IntArrayRef dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(IntArrayRef dims, bool keepdim = false) const;
  Tensor amax(IntArrayRef dims, bool keepdim = false) const;
  Tensor amin(IntArrayRef dims, bool keepdim = false) const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor argmin(int64_t dim, bool keepdim = false) const;
  Tensor var(IntArrayRef dims, bool unbiased = true, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dims, bool keepdim = false) const;
  // The tensor API of issue 14 (the free functions in wick/autograd/functions.h).
  Tensor max() const;
  Tensor min() const;
  Tensor var() const;
  Tensor std() const;
  Tensor std(IntArrayRef dims, bool unbiased = true, bool keepdim = false) const;
  Tensor norm(double p = 2) const;
  Tensor norm(double p, IntArrayRef dims, bool keepdim = false) const;
  Tensor all() const;
  Tensor any() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  bool equal(const Tensor& o) const;
  bool allclose(const Tensor& o, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) const;
  Tensor cumsum(int64_t dim) const;
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor bmm(const Tensor& o) const;
  Tensor dot(const Tensor& o) const;
  Tensor outer(const Tensor& o) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  Tensor diag(int64_t diagonal = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor matmul(const Tensor& o) const;
  Tensor mm(const Tensor& o) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  // Products, order statistics, rounding and trigonometry (the free functions of the same names;
  // autograd/src/tensor_methods.cpp).
  Tensor prod() const;
  Tensor prod(int64_t dim, bool keepdim = false) const;
  Tensor cumprod(int64_t dim) const;
  std::tuple<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
  Tensor median() const;
  std::tuple<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
  /// The most frequent value along dim and its index (wick::mode).
  std::tuple<Tensor, Tensor> mode(int64_t dim = -1, bool keepdim = false) const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  Tensor trunc() const;
  Tensor frac() const;
  Tensor remainder(const Tensor& o) const;
  Tensor remainder(Scalar o) const;
  Tensor fmod(const Tensor& o) const;
  Tensor fmod(Scalar o) const;
  Tensor tan() const;
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor atan2(const Tensor& o) const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor atanh() const;
  // Counting and building (the free functions of the same names in wick/autograd/functions.h).
  Tensor bincount(const Tensor& weights = {}, int64_t minlength = 0) const;
  Tensor histc(int64_t bins = 100, Scalar min = 0, Scalar max = 0) const;
  Tensor diag_embed(int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1) const;
  Tensor kron(const Tensor& o) const;

  // ---- in place (defined in autograd/); each bumps the version counter ----
  Tensor& add_(const Tensor& o, Scalar alpha = 1);
  Tensor& add_(Scalar o);
  Tensor& sub_(const Tensor& o, Scalar alpha = 1);
  Tensor& mul_(const Tensor& o);
  Tensor& mul_(Scalar o);
  Tensor& div_(const Tensor& o);
  Tensor& div_(Scalar o);
  Tensor& zero_();
  Tensor& fill_(Scalar v);
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max);
  /// Writes `value` where the bool `mask` (broadcast to this tensor's shape) is true.
  Tensor& masked_fill_(const Tensor& mask, Scalar value);
  /// The same with a 0-dim tensor value (differentiable in it).
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value);
  // The out-of-place op's result written into this tensor (its shape and a dtype it can hold:
  // TypeError for tan_ of an integer tensor; ValueError when `o` would broadcast this tensor).
  Tensor& relu_();
  Tensor& floor_();
  Tensor& ceil_();
  Tensor& round_();
  Tensor& trunc_();
  Tensor& frac_();
  Tensor& remainder_(const Tensor& o);
  Tensor& remainder_(Scalar o);
  Tensor& fmod_(const Tensor& o);
  Tensor& fmod_(Scalar o);
  Tensor& tan_();
  Tensor& asin_();
  Tensor& acos_();
  Tensor& atan_();
  Tensor& atan2_(const Tensor& o);
  Tensor& sinh_();
  Tensor& cosh_();
  Tensor& asinh_();
  Tensor& acosh_();
  Tensor& atanh_();
  Tensor& cumprod_(int64_t dim);
  // Scans, math, selection and scattered writes (wick/autograd/functions.h's free functions); the
  // in-place forms write the out-of-place result back once every check has passed.
  Tensor logcumsumexp(int64_t dim) const;
  std::tuple<Tensor, Tensor> cummax(int64_t dim) const;
  std::tuple<Tensor, Tensor> cummin(int64_t dim) const;
  Tensor renorm(double p, int64_t dim, double maxnorm) const;
  Tensor nan_to_num(std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;
  Tensor logit(std::optional<double> eps = std::nullopt) const;
  Tensor xlogy(const Tensor& y) const;
  Tensor xlogy(Scalar y) const;
  Tensor lerp(const Tensor& end, Scalar weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor hypot(const Tensor& o) const;
  Tensor rot90(int64_t k = 1, IntArrayRef dims = {0, 1}) const;
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                           std::optional<int64_t> output_size = std::nullopt) const;
  Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                           std::optional<int64_t> output_size = std::nullopt) const;
  Tensor tile(IntArrayRef dims) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt) const;
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                        bool include_self = true) const;
  Tensor index_put(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false) const;
  Tensor& renorm_(double p, int64_t dim, double maxnorm);
  Tensor& nan_to_num_(std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                      std::optional<double> neginf = std::nullopt);
  Tensor& logit_(std::optional<double> eps = std::nullopt);
  Tensor& xlogy_(const Tensor& y);
  Tensor& xlogy_(Scalar y);
  Tensor& lerp_(const Tensor& end, Scalar weight);
  Tensor& lerp_(const Tensor& end, const Tensor& weight);
  Tensor& hypot_(const Tensor& o);
  Tensor& scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                          bool include_self = true);
  /// Writes (accumulate: adds) values at `indices`; nothing is written when a check fails.
  Tensor& index_put_(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false);
  // Indexed writes, products, special functions, bitwise ops and statistics: the declarations
  // are in the two files below, included here inside the class (Note [Tensor method lists]).
#include "wick/core/tensor_methods_index.inc"
#include "wick/core/tensor_methods_special.inc"

 private:
  void check_dtype_for_access(DType requested, const char* what) const;
  std::shared_ptr<TensorImpl> impl_;
};

}  // namespace wick

#include "wick/core/tensor_format.h"     // fmt::formatter<Tensor>, with every Tensor
#include "wick/core/tensor_operators.h"  // operator+ & co. and TensorList
