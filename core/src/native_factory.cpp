// Factories: empty, zeros, ones, full, arange, linspace, eye, random, from host memory.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fill_value.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/generator.h"
#include "wick/core/native.h"
#include "wick/core/scalar_fit.h"

namespace wick::native {

Tensor empty_strided(IntArrayRef shape, IntArrayRef strides, DType dtype, Device device) {
  WICK_CHECK(shape.size() == strides.size(), "empty_strided: shape [{}] and strides [{}] have different lengths",
             fmt::join(shape, ", "), fmt::join(strides, ", "));
  const int64_t numel = checked_numel(shape, "empty_strided");
  // extent = 1 + sum (size - 1) * stride elements (Note [Checked sizes]).
  int64_t extent = 1;
  bool overflow = false;
  for (size_t i = 0; i < shape.size() && numel; ++i) {
    WICK_CHECK(strides[i] >= 0, "empty_strided: negative stride {} in dim {} (strides [{}])", strides[i], i,
               fmt::join(strides, ", "));
    int64_t span = 0;
    overflow = overflow || mul_overflow(shape[i] - 1, strides[i], &span) || add_overflow(extent, span, &extent);
  }
  if (numel == 0) extent = 0;
  int64_t bytes = 0;
  overflow = overflow || mul_overflow(extent, static_cast<int64_t>(element_size(dtype)), &bytes);
  WICK_CHECK(!overflow, "empty_strided: shape [{}] with strides [{}] is too large: its extent in bytes overflows int64",
             fmt::join(shape, ", "), fmt::join(strides, ", "));
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(static_cast<size_t>(bytes), device);
  impl->sizes = DimVector(shape);
  impl->strides = DimVector(strides);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor empty(IntArrayRef shape, DType dtype, Device device) {
  const size_t bytes = checked_nbytes(shape, element_size(dtype), "empty");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(bytes, device);
  impl->sizes = DimVector(shape);
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor full(IntArrayRef shape, Scalar value, DType dtype, Device device) {
  // A floating value filled into an integer tensor must convert without undefined behaviour. A
  // float32 target is not checked here: binary ops make their 0-d operands with full, and
  // float32 + 1e300 is inf (Note [Scalar fits dtype]); wick::full and fill_ check every dtype.
  if (is_integral(dtype, false)) check_scalar_fits("full", "value", value, dtype, shape);
  Tensor t = empty(shape, dtype, device);
  fill_value(t, value);  // exact for every int64 (Note [Integer overflow and conversions])
  return t;
}
Tensor zeros(IntArrayRef shape, DType dtype, Device device) { return full(shape, 0, dtype, device); }
Tensor ones(IntArrayRef shape, DType dtype, Device device) { return full(shape, 1, dtype, device); }

Tensor scalar_tensor(Scalar s, DType dtype, Device device) { return full({}, s, dtype, device); }

Tensor arange(Scalar start, Scalar end, Scalar step, DType dtype, Device device) {
  // The range is computed in double, exact for integers up to 2^53 (Note [Integer overflow and
  // conversions]): past that an element would be rounded, so it is refused rather than wrong.
  for (const Scalar* s : {&start, &end, &step})
    WICK_CHECK(s->is_floating() || int64_fits_double(s->to_int()),
               "arange: start={}, end={} and step={} must be integers within +-2^53 for exact elements; {} is not",
               start.to_double(), end.to_double(), step.to_double(), s->to_int());
  const double a = start.to_double(), b = end.to_double(), st = step.to_double();
  WICK_CHECK(st != 0, "arange: step must be nonzero (got start={}, end={}, step={})", a, b, st);
  WICK_CHECK((st > 0 && b >= a) || (st < 0 && b <= a),
             "arange: the range [{}, {}) with step {} is empty in the wrong direction; check the sign of step", a, b,
             st);
  WICK_CHECK(std::isfinite(a) && std::isfinite(b) && std::isfinite(st),
             "arange: start={}, end={} and step={} must be finite", a, b, st);
  const double count = std::ceil((b - a) / st);
  WICK_CHECK(double_fits_int64(count), "arange: the range [{}, {}) with step {} has {} elements, too many for a tensor",
             a, b, st, count);
  WICK_CHECK(!is_integral(dtype, false) || (double_fits_int64(a) && double_fits_int64(b)),
             "arange: start={} and end={} must fit in {}", a, b, dtype);
  const int64_t n = static_cast<int64_t>(count);
  Tensor t = empty({n}, dtype, device);
  if (n) backend(device).arange(kernel_tensor(t), a, st);
  return t;
}

// As PyTorch: step = (end - start) / (steps - 1); the first half counts up from start
// (start + i * step), the second half down from end (end - (steps - 1 - i) * step), so both ends
// are exact and the rounding is symmetric. The second half is an arange from end with -step,
// written reversed.
Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device) {
  WICK_CHECK(steps >= 0, "linspace: steps must be non-negative (got {})", steps);
  WICK_CHECK(!is_integral(dtype, false) || (double_fits_int64(start) && double_fits_int64(end)),
             "linspace: start={} and end={} must fit in {}", start, end, dtype);
  Tensor t = empty({steps}, dtype, device);
  if (steps == 1) backend(device).fill(kernel_tensor(t), start);
  if (steps <= 1) return t;
  const double step = (end - start) / static_cast<double>(steps - 1);
  const int64_t half = steps / 2, rest = steps - half;
  Backend& be = backend(device);
  if (half) be.arange(kernel_tensor(narrow(t, 0, 0, half)), start, step);
  Tensor down = empty({rest}, dtype, device);  // down[k] = end - k * step
  be.arange(kernel_tensor(down), end, -step);
  Tensor reversed = empty({rest}, kInt64, device);
  be.arange(kernel_tensor(reversed), static_cast<double>(rest - 1), -1.0);
  be.index_select(kernel_tensor(narrow(t, 0, half, rest)), kernel_tensor(down), 0, kernel_tensor(reversed));
  return t;
}

Tensor eye(int64_t n, int64_t m, DType dtype, Device device) {
  WICK_CHECK(n >= 0 && m >= 0, "eye: sizes must be non-negative (got {} x {})", n, m);
  Tensor t = zeros({n, m}, dtype, device);
  const int64_t k = std::min(n, m);
  if (k) backend(device).fill(kernel_tensor(as_strided(t, {k}, {m + 1}, 0)), 1.0);
  return t;
}

namespace {
Tensor random_tensor(IntArrayRef shape, DType dtype, Device device, RandomKind kind, double a, double b,
                     const char* op) {
  Tensor t = empty(shape, dtype, device);
  const uint64_t n = static_cast<uint64_t>(t.numel());
  if (n == 0) return t;
  RandomDraw d = reserve_random(n);
  backend(device).random(kernel_tensor(t), kind, a, b, d.seed, d.offset);
  return t;
}
}  // namespace

Tensor rand(IntArrayRef shape, DType dtype, Device device) {
  WICK_CHECK_TYPE(is_floating(dtype), "rand: expected a floating dtype, got {}", dtype);
  return random_tensor(shape, dtype, device, RandomKind::Uniform, 0.0, 1.0, "rand");
}
Tensor randn(IntArrayRef shape, DType dtype, Device device) {
  WICK_CHECK_TYPE(is_floating(dtype), "randn: expected a floating dtype, got {}", dtype);
  return random_tensor(shape, dtype, device, RandomKind::Normal, 0.0, 1.0, "randn");
}
Tensor randint(int64_t low, int64_t high, IntArrayRef shape, DType dtype, Device device) {
  WICK_CHECK(high > low, "randint: expected low < high, got low={} high={}", low, high);
  // The sampler works in double, exact up to 2^53: past that a sample could round out of [low, high).
  WICK_CHECK(int64_fits_double(low) && int64_fits_double(high),
             "randint: low={} and high={} must be within +-2^53, where the sampler is exact", low, high);
  return random_tensor(shape, dtype, device, RandomKind::RandInt, static_cast<double>(low), static_cast<double>(high),
                       "randint");
}
Tensor bernoulli(const Tensor& like, double p) {
  WICK_CHECK(p >= 0 && p <= 1, "bernoulli: probability must be in [0, 1], got {}", p);
  return random_tensor(like.sizes(), like.dtype(), like.device(), RandomKind::Bernoulli, p, 0, "bernoulli");
}

Tensor from_blob_copy(const void* data, IntArrayRef shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  const size_t bytes = t.nbytes();
  if (bytes == 0) return t;
  WICK_CHECK(data != nullptr,
             "from_blob: the data pointer is null but shape [{}] of {} needs {} bytes; pass the address "
             "of the values",
             fmt::join(shape, ", "), dtype, bytes);
  // Any nonzero byte is true: a C++ bool holding another value is undefined behaviour in every
  // kernel that reads it (the safetensors reader does the same).
  std::vector<uint8_t> bools;
  if (dtype == kBool) {
    const auto* p = static_cast<const uint8_t*>(data);
    bools.resize(bytes);
    for (size_t i = 0; i < bytes; ++i) bools[i] = p[i] != 0;
    data = bools.data();
  }
  if (device.is_cpu())
    std::memcpy(t.data_ptr(), data, bytes);
  else
    backend(device).copy_bytes_host(t.data_ptr(), data, bytes, device, /*to_device=*/true);
  return t;
}

}  // namespace wick::native
