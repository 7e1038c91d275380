// The recording backend (Note [Tracer] in trace.h): while a trace is on, backend() hands out
// this wrapper, which forwards every primitive to the real backend inside an "op" event named
// after the primitive and its op ("binary:Add"), with operand shapes, dtype and device as args.
// A primitive added to Backend must be forwarded here too (it is pure virtual: the build says so).
#include "trace_backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <memory>
#include <mutex>

#include "wick/core/trace.h"

namespace wick::profiler::detail {

namespace {

constexpr std::array<const char*, 47> kUnary = {
    "Neg",   "Abs",   "Exp",   "Log",       "Sqrt",       "Rsqrt",         "Tanh",         "Sigmoid",
    "Relu",  "Gelu",  "Sin",   "Cos",       "Sign",       "Reciprocal",    "Square",       "Erf",
    "Log1p", "Expm1", "Floor", "PowScalar", "ClampMin",   "ClampMax",      "LogicalNot",   "Ceil",
    "Round", "Trunc", "Tan",   "Asin",      "Acos",       "Atan",          "Sinh",         "Cosh",
    "Asinh", "Acosh", "Atanh", "Digamma",   "Lgamma",     "Polygamma",     "Erfinv",       "Erfc",
    "I0",    "I1",    "Sinc",  "Exp2",      "BitwiseNot", "FrexpMantissa", "FrexpExponent"};
constexpr std::array<const char*, 30> kBinary = {
    "Add",          "Sub",       "Mul",        "Div",        "Pow",        "Maximum",  "Minimum",   "ReluBackward",
    "GeluBackward", "Eq",        "Ne",         "Lt",         "Le",         "Gt",       "Ge",        "LogicalAnd",
    "LogicalOr",    "Remainder", "Fmod",       "Atan2",      "Logaddexp2", "Copysign", "Heaviside", "FloorDivide",
    "BitwiseAnd",   "BitwiseOr", "BitwiseXor", "LogicalXor", "Gcd",        "Lcm"};
constexpr std::array<const char*, 4> kReduce = {"Sum", "Prod", "Max", "Min"};

template <size_t N, class E>
std::string op_name(const char* kind, const std::array<const char*, N>& names, E op) {
  const auto i = static_cast<size_t>(op);
  return i < N ? fmt::format("{}:{}", kind, names[i]) : fmt::format("{}:{}", kind, i);
}

std::string shapes(std::initializer_list<const KernelTensor*> ts) {
  std::vector<std::string> parts;
  for (const KernelTensor* t : ts) parts.push_back(fmt::format("[{}]", fmt::join(t->sizes, ", ")));
  const KernelTensor& first = **ts.begin();
  return fmt::format("\"shapes\": \"{}\", \"dtype\": \"{}\", \"device\": \"{}\"", fmt::join(parts, " "),
                     dtype_name(first.dtype), first.device.str());
}

std::string bytes_args(size_t bytes) { return fmt::format("\"bytes\": {}", bytes); }

class TracingBackend final : public Backend {
 public:
  explicit TracingBackend(Backend& inner) : b_(inner) {}
  Allocator& allocator() override { return b_.allocator(); }
  int device_count() override { return b_.device_count(); }
  void set_device(Device d) override { b_.set_device(d); }
  Device current_device() override { return b_.current_device(); }
  void synchronize(Device d) override {
    RecordScope s("op", "synchronize");
    b_.synchronize(d);
  }
  uintptr_t current_stream(Device d) override { return b_.current_stream(d); }
  void set_current_stream(Device d, uintptr_t stream) override { b_.set_current_stream(d, stream); }
  void unary(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1) override {
    auto s = scope(op_name("unary", kUnary, op), shapes({&out, &in}));
    b_.unary(op, out, in, p0, p1);
  }
  void binary(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b) override {
    auto s = scope(op_name("binary", kBinary, op), shapes({&out, &a, &b}));
    b_.binary(op, out, a, b);
  }
  void where(const KernelTensor& out, const KernelTensor& cond, const KernelTensor& a, const KernelTensor& b) override {
    auto s = scope("where", shapes({&out, &cond, &a, &b}));
    b_.where(out, cond, a, b);
  }
  void copy(const KernelTensor& dst, const KernelTensor& src) override {
    auto s = scope("copy", shapes({&dst, &src}) + fmt::format(", \"from\": \"{}\"", src.device.str()));
    b_.copy(dst, src);
  }
  void copy_bytes_host(void* dst, const void* src, size_t bytes, Device device, bool to_device) override {
    auto s = scope("copy_bytes_host", bytes_args(bytes) + fmt::format(", \"device\": \"{}\"", device.str()));
    b_.copy_bytes_host(dst, src, bytes, device, to_device);
  }
  void copy_bytes_peer(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) override {
    auto s = scope("copy_bytes_peer", bytes_args(bytes) + fmt::format(", \"from\": \"{}\", \"to\": \"{}\"",
                                                                      src_device.str(), dst_device.str()));
    b_.copy_bytes_peer(dst, dst_device, src, src_device, bytes);
  }
  void fill(const KernelTensor& dst, double value) override {
    auto s = scope("fill", shapes({&dst}));
    b_.fill(dst, value);
  }
  void arange(const KernelTensor& out, double start, double step) override {
    auto s = scope("arange", shapes({&out}));
    b_.arange(out, start, step);
  }
  void random(const KernelTensor& out, RandomKind kind, double a, double b, uint64_t seed, uint64_t offset) override {
    auto s = scope("random", shapes({&out}));
    b_.random(out, kind, a, b, seed, offset);
  }
  void reduce(ReduceOp op, const KernelTensor& out, const KernelTensor& in) override {
    auto s = scope(op_name("reduce", kReduce, op), shapes({&out, &in}));
    b_.reduce(op, out, in);
  }
  void arg_reduce(ArgReduceOp op, const KernelTensor& out, const KernelTensor& in, int64_t dim) override {
    auto s = scope(op == ArgReduceOp::ArgMax ? "arg_reduce:ArgMax" : "arg_reduce:ArgMin", shapes({&out, &in}));
    b_.arg_reduce(op, out, in, dim);
  }
  void index_select(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) override {
    auto s = scope("index_select", shapes({&out, &in, &index}));
    b_.index_select(out, in, dim, index);
  }
  void index_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) override {
    auto s = scope("index_add", shapes({&out, &index, &src}));
    b_.index_add(out, dim, index, src);
  }
  void gather(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) override {
    auto s = scope("gather", shapes({&out, &in, &index}));
    b_.gather(out, in, dim, index);
  }
  void scatter_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) override {
    auto s = scope("scatter_add", shapes({&out, &index, &src}));
    b_.scatter_add(out, dim, index, src);
  }
  void sort_indices(const KernelTensor& indices, const KernelTensor& in, int64_t dim, bool descending) override {
    auto s = scope("sort_indices", shapes({&indices, &in}));
    b_.sort_indices(indices, in, dim, descending);
  }
  void cumsum(const KernelTensor& out, const KernelTensor& in, int64_t dim, bool reverse) override {
    auto s = scope("cumsum", shapes({&out, &in}));
    b_.cumsum(out, in, dim, reverse);
  }
  void gemm(const GemmArgs& g) override {
    auto s = scope("gemm", fmt::format("\"batch\": {}, \"m\": {}, \"n\": {}, \"k\": {}, \"dtype\": \"{}\"", g.batch,
                                       g.m, g.n, g.k, dtype_name(g.dtype)));
    b_.gemm(g);
  }
  void im2col(const Im2ColArgs& g, const void* image, void* columns) override {
    auto s = scope("im2col", geometry(g));
    b_.im2col(g, image, columns);
  }
  void col2im(const Im2ColArgs& g, const void* columns, void* image) override {
    auto s = scope("col2im", geometry(g));
    b_.col2im(g, columns, image);
  }
  void max_pool2d(const Im2ColArgs& g, const void* image, void* out, int64_t* indices) override {
    auto s = scope("max_pool2d", geometry(g));
    b_.max_pool2d(g, image, out, indices);
  }
  void max_pool2d_backward(const Im2ColArgs& g, const void* grad_out, const int64_t* indices,
                           void* grad_image) override {
    auto s = scope("max_pool2d_backward", geometry(g));
    b_.max_pool2d_backward(g, grad_out, indices, grad_image);
  }

 private:
  static RecordScope scope(const std::string& name, std::string args) {
    RecordScope s = RecordScope::named("op", [&] { return name; });
    s.set_args(std::move(args));
    return s;
  }
  static std::string geometry(const Im2ColArgs& g) {
    return fmt::format("\"channels\": {}, \"height\": {}, \"width\": {}, \"kernel\": \"{}x{}\"", g.channels, g.height,
                       g.width, g.kernel_h, g.kernel_w);
  }
  Backend& b_;
};

}  // namespace

Backend& traced_backend(DeviceType type, Backend& inner) {
  static std::once_flag once[kMaxDeviceTypes];
  static TracingBackend* wrappers[kMaxDeviceTypes] = {};
  const auto i = static_cast<size_t>(type);                                   // a valid type: `inner` was found for it
  std::call_once(once[i], [&] { wrappers[i] = new TracingBackend(inner); });  // never destroyed
  return *wrappers[i];
}

}  // namespace wick::profiler::detail
