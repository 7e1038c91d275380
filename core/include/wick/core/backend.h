#pragma once
// Backend: the per-device-type primitives every op front-end is built from (docs/architecture.md, "Backends").
//
// The CPU backend lives in core/src/cpu; the CUDA backend in cuda/ implements the same interface.
// Front-ends (core/src/native_*.cpp) check arguments, broadcast, promote and allocate, then call
// these with already-validated operands: kernels never check user input.
//
// Note [Backend registration]
// The CPU backend is always present. The CUDA backend is registered explicitly and lazily: the
// first lookup of DeviceType::CUDA calls wick_cuda_register_backend() if the cuda library was
// linked (a weak reference, kept alive by the cuda target's `--undefined` link option); without
// it the lookup raises "wick was built without CUDA support". No static initialisers.
#include <cstdint>
#include <string_view>

#include "wick/core/allocator.h"
#include "wick/core/device.h"
#include "wick/core/dtype.h"
#include "wick/core/kernel_layout.h"
#include "wick/core/random_functors.h"
#include "wick/core/reduce_functors.h"

namespace wick {

enum class UnaryOp : int8_t {
  Neg,
  Abs,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Tanh,
  Sigmoid,
  Relu,
  Gelu,
  Sin,
  Cos,
  Sign,
  Reciprocal,
  Square,
  Erf,
  Log1p,
  Expm1,
  Floor,
  PowScalar,
  ClampMin,
  ClampMax,
  LogicalNot,
  Ceil,
  Round,
  Trunc,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Digamma,
  Lgamma,
  Polygamma,
  Erfinv,
  Erfc,
  I0,
  I1,
  Sinc,
  Exp2,
  BitwiseNot,
  FrexpMantissa,
  FrexpExponent
};
enum class BinaryOp : int8_t {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Maximum,
  Minimum,
  ReluBackward,
  GeluBackward,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  LogicalAnd,
  LogicalOr,
  Remainder,
  Fmod,
  Atan2,
  Logaddexp2,
  Copysign,
  Heaviside,
  FloorDivide,
  BitwiseAnd,
  BitwiseOr,
  BitwiseXor,
  LogicalXor,
  Gcd,
  Lcm
};

/// True for comparisons and logical ops, whose output is bool.
constexpr bool binary_op_returns_bool(BinaryOp op) {
  return (op >= BinaryOp::Eq && op <= BinaryOp::LogicalOr) || op == BinaryOp::LogicalXor;
}

/// A strided operand as kernels see it.
struct KernelTensor {
  char* data = nullptr;  ///< address of element 0 (offset already applied)
  DType dtype = DType::Float32;
  DimVector sizes;
  DimVector strides;  ///< in elements
  Device device;
};

/// The coalesced layout (make_layout) of operands that share ops[0]'s sizes; CPU loops and CUDA
/// launches alike.
template <int N>
StridedLayout<N> layout_of(const KernelTensor* const (&ops)[N]) {
  IntArrayRef strides[N];
  for (int k = 0; k < N; ++k) strides[k] = ops[k]->strides;
  return make_layout<N>(ops[0]->sizes, strides);
}

/// A batched, row-major GEMM: C[b] = alpha * op(A[b]) @ op(B[b]) + beta * C[b], with
/// op(A[b]) of shape m x k and op(B[b]) of shape k x n. Leading dims and batch strides are in
/// elements; C is m x n with leading dim ldc.
struct GemmArgs {
  DType dtype;
  int64_t batch, m, n, k;
  const void* a;
  int64_t lda, stride_a;
  bool trans_a;
  const void* b;
  int64_t ldb, stride_b;
  bool trans_b;
  void* c;
  int64_t ldc, stride_c;
  double alpha = 1.0, beta = 0.0;
};

/// 2-d convolution geometry for im2col/col2im (one image: C x H x W; columns:
/// (C*kh*kw) x (out_h*out_w), row-major, contiguous).
struct Im2ColArgs {
  DType dtype;
  int64_t channels, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, out_h,
      out_w;
};

// Every method is pure virtual, those with an obvious "nothing to do" answer included: a backend
// that wraps another (the tracer's, core/src/trace_backend.cpp) then cannot silently drop one.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Allocator& allocator() = 0;
  /// Number of devices of this type (CPU: unbounded, reports 1).
  virtual int device_count() = 0;
  /// Makes `d` the calling thread's current device (a no-op on CPU devices).
  virtual void set_device(Device d) = 0;
  virtual Device current_device() = 0;
  /// Waits until all work queued on `d` finished.
  virtual void synchronize(Device d) = 0;
  /// The calling thread's current stream on `d` as an opaque handle (0 for backends without
  /// streams). Code that moves work to another thread (parallel_apply) reads it in the caller
  /// and makes it current in the worker, so the work stays ordered with the caller's.
  virtual uintptr_t current_stream(Device d) = 0;
  /// Makes `stream` (a handle from current_stream for `d`) current on `d` for the calling thread.
  virtual void set_current_stream(Device d, uintptr_t stream) = 0;

  /// out = op(in) elementwise; out and in share dtype and sizes (in may have stride 0).
  virtual void unary(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1) = 0;
  /// out = op(a, b); a and b share dtype; out has that dtype or bool (comparisons).
  virtual void binary(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b) = 0;
  /// out = cond ? a : b; cond is bool, a/b/out share dtype.
  virtual void where(const KernelTensor& out, const KernelTensor& cond, const KernelTensor& a,
                     const KernelTensor& b) = 0;
  /// dst = src (same sizes), converting dtype; both on this backend's devices (cross-device
  /// copies between two device types go through copy_between in core/src/native_copy.cpp).
  virtual void copy(const KernelTensor& dst, const KernelTensor& src) = 0;
  /// Copies `bytes` contiguous bytes host->device (to_device) or device->host.
  virtual void copy_bytes_host(void* dst, const void* src, size_t bytes, Device device, bool to_device) = 0;
  /// Copies contiguous bytes between two devices of this type.
  virtual void copy_bytes_peer(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) = 0;
  virtual void fill(const KernelTensor& dst, double value) = 0;
  /// out[i] = start + i * step for a contiguous out.
  virtual void arange(const KernelTensor& out, double start, double step) = 0;
  /// Counter-based random numbers: element i of a contiguous out depends only on (seed,
  /// offset + i), never on the launch configuration. Uniform: [a, b); Normal: mean a, std b;
  /// RandInt: integers in [a, b); Bernoulli: 1 with probability a.
  virtual void random(const KernelTensor& out, RandomKind kind, double a, double b, uint64_t seed, uint64_t offset) = 0;
  /// Reduces `in` into `out`, which has in's rank with size 1 in every reduced dim.
  virtual void reduce(ReduceOp op, const KernelTensor& out, const KernelTensor& in) = 0;
  /// Index of the max/min along `dim` of `in` into int64 `out` (keepdim shape); first wins.
  virtual void arg_reduce(ArgReduceOp op, const KernelTensor& out, const KernelTensor& in, int64_t dim) = 0;
  /// out = in.index_select(dim, index) (index: 1-d int64, already bounds-checked).
  virtual void index_select(const KernelTensor& out, const KernelTensor& in, int64_t dim,
                            const KernelTensor& index) = 0;
  /// out.index_add_(dim, index, src).
  virtual void index_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) = 0;
  /// out = in.gather(dim, index) (index has out's sizes).
  virtual void gather(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) = 0;
  /// out.scatter_add_(dim, index, src) (index has src's sizes).
  virtual void scatter_add(const KernelTensor& out, int64_t dim, const KernelTensor& index,
                           const KernelTensor& src) = 0;
  /// indices = the positions that sort each line of `in` along `dim` (int64, in's sizes): stable,
  /// NaN after every number ascending and before every number descending (math::sorts_before).
  virtual void sort_indices(const KernelTensor& indices, const KernelTensor& in, int64_t dim, bool descending) = 0;
  /// out = running sums of `in` along `dim` (same dtype and sizes), from the end when `reverse`
  /// (cumsum's backward); accumulated in math::acc_type.
  virtual void cumsum(const KernelTensor& out, const KernelTensor& in, int64_t dim, bool reverse) = 0;
  virtual void gemm(const GemmArgs& args) = 0;
  /// Unfolds one contiguous image into contiguous columns.
  virtual void im2col(const Im2ColArgs& g, const void* image, void* columns) = 0;
  /// Folds columns back, summing overlaps into a zeroed contiguous image.
  virtual void col2im(const Im2ColArgs& g, const void* columns, void* image) = 0;
  /// 2-d max pooling of g.channels contiguous planes (g.height x g.width) into contiguous
  /// out_h x out_w planes, with padding (never selected), stride and dilation from g. indices
  /// get each maximum's flat position h * width + w in its plane. Ties keep the first position in
  /// window order; a NaN wins over every number (the last NaN in the window), as PyTorch's.
  /// Every window must hold at least one position inside the plane (the caller checks).
  virtual void max_pool2d(const Im2ColArgs& g, const void* image, void* out, int64_t* indices) = 0;
  /// max_pool2d's backward: grad_image (g.channels planes, overwritten) = zeros plus, for every
  /// output, its grad_out added at its index. Overlapping windows sum in a fixed order.
  virtual void max_pool2d_backward(const Im2ColArgs& g, const void* grad_out, const int64_t* indices,
                                   void* grad_image) = 0;
};

/// The backend for a device type; throws wick::DeviceUnavailable ("wick was built without CUDA
/// support") when the type's backend is not linked.
Backend& backend(DeviceType type);
inline Backend& backend(Device d) { return backend(d.type); }
/// Installs a backend (the cuda library calls this from wick_cuda_register_backend()).
void register_backend(DeviceType type, Backend* b);

/// Registers a new device type served by `backend` (Note [Device registry]) and returns it;
/// from then on Device("name:N") parses, prints as "name:N", and every op on it runs through
/// `backend`, which must live until the process ends. Dispatch stubs (dispatch_stub.h) start
/// empty for the new type, so ops take their composite paths until the backend sets its own.
/// ValueError for a malformed, built-in or already registered name; StateError when all
/// kMaxDeviceTypes slots are taken. Thread-safe; a type cannot be unregistered.
DeviceType register_device_type(std::string_view name, Backend& backend);

/// RAII: makes a device current for the calling thread and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(Device d);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  Device prev_;
  bool active_ = false;
  bool cpu_ = false;  ///< a CPU device: restores the thread's current CPU device (cpu_threads.h)
};

/// RAII: makes `stream` (a Backend::current_stream handle) current on `d` for the calling
/// thread and restores the previous one; a no-op for backends without streams.
class CurrentStreamScope {
 public:
  CurrentStreamScope(Device d, uintptr_t stream);
  ~CurrentStreamScope();
  CurrentStreamScope(const CurrentStreamScope&) = delete;
  CurrentStreamScope& operator=(const CurrentStreamScope&) = delete;

 private:
  Device device_;
  uintptr_t prev_ = 0;
  bool active_ = false;
};

}  // namespace wick
