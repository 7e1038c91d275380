// CUDA vs CPU for unary, binary and where, on contiguous, non-contiguous and broadcast layouts and
// sizes that are not multiples of the block size, on every CUDA device.
#include <functional>

#include "cuda_test_util.h"
#include "wick/core/error.h"

using namespace wick;
using namespace wick::cuda_test;

namespace {
const std::vector<DType> kAllTypes = {kFloat32, kFloat64, kInt64, kBool};

double rtol_for(DType d) { return d == kFloat64 ? 1e-12 : 1e-5; }
double atol_for(DType d) { return d == kFloat64 ? 1e-13 : 1e-6; }

// Runs `cpu_fn` and `gpu_fn`; when the CPU front-end rejects the inputs, the CUDA one must too.
void compare(const std::function<Tensor()>& cpu_fn, const std::function<Tensor()>& gpu_fn, double rtol, double atol,
             const std::string& what) {
  Tensor want;
  try {
    want = cpu_fn();
  } catch (const Error&) {
    INFO(what);
    CHECK_THROWS_AS(gpu_fn(), Error);
    return;
  }
  Tensor got = gpu_fn();
  REQUIRE(got.device().is_cuda());
  check_close(got, want, rtol, atol, what);
}

bool needs_positive(UnaryOp op) {
  return op == UnaryOp::Log || op == UnaryOp::Sqrt || op == UnaryOp::Rsqrt || op == UnaryOp::Log1p ||
         op == UnaryOp::Reciprocal || op == UnaryOp::PowScalar;
}
}  // namespace

TEST_CASE("unary ops match the CPU for every dtype and layout", "[cuda][elementwise]") {
  for (int op_i = 0; op_i <= static_cast<int>(UnaryOp::FrexpExponent); ++op_i) {
    const auto op = static_cast<UnaryOp>(op_i);
    for (DType dt : kAllTypes) {
      for (const auto& shape : awkward_shapes()) {
        Tensor x = (needs_positive(op) && is_floating(dt)) ? positive_cpu(shape, dt) : random_cpu(shape, dt);
        const double p0 = op == UnaryOp::PowScalar ? (is_floating(dt) ? 2.5 : 2.0) : 0.3;
        const std::string what = fmt::format("unary op {} {} shape {}", op_i, dt, shape_str(shape));
        const double rtol = rtol_for(dt) * 10, atol = atol_for(dt) * 10;
        compare([&] { return native::unary(op, x, p0); }, [&] { return native::unary(op, to_gpu(x), p0); }, rtol, atol,
                what + " contiguous");
        compare([&] { return native::unary(op, x, p0); }, [&] { return native::unary(op, noncontiguous_gpu(x), p0); },
                rtol, atol, what + " non-contiguous");
      }
      // A broadcast (stride-0) input.
      Tensor row = (needs_positive(op) && is_floating(dt)) ? positive_cpu({1, 37}, dt) : random_cpu({1, 37}, dt);
      compare(
          [&] {
            return native::unary(op, native::expand(row, {300, 37}), 0.5);
          },
          [&] {
            return native::unary(op, native::expand(to_gpu(row), {300, 37}), 0.5);
          },
          rtol_for(dt) * 10, atol_for(dt) * 10, fmt::format("unary op {} {} broadcast", op_i, dt));
    }
  }
}

TEST_CASE("in-place unary ops write through non-contiguous views", "[cuda][elementwise]") {
  Tensor x = random_cpu({65, 33}, kFloat32);
  Tensor g = noncontiguous_gpu(x);
  native::unary_(UnaryOp::Relu, g);
  native::unary_(UnaryOp::Relu, x);
  check_close(g, x);
}

TEST_CASE("binary ops match the CPU for every dtype and layout, on every device", "[cuda][elementwise]") {
  for (int dev = 0; dev < cuda::device_count(); ++dev) {
    for (int op_i = 0; op_i <= static_cast<int>(BinaryOp::Lcm); ++op_i) {
      const auto op = static_cast<BinaryOp>(op_i);
      for (DType dt : kAllTypes) {
        const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
            {{1025}, {1025}},     {{17, 33}, {17, 33}}, {{17, 33}, {1, 33}},      {{17, 1}, {1, 33}},
            {{2, 3, 129}, {129}}, {{100003}, {}},       {{4, 1, 6, 7}, {5, 1, 7}}};
        for (const auto& [sa, sb] : shapes) {
          Tensor a = (op == BinaryOp::Pow && is_floating(dt)) ? positive_cpu(sa, dt) : random_cpu(sa, dt);
          Tensor b = op == BinaryOp::Pow ? native::randint(0, 4, sb, kInt64, kCPU) : random_cpu(sb, dt);
          b = native::to(b, kCPU, dt);
          const std::string what =
              fmt::format("binary op {} {} {} x {} on cuda:{}", op_i, dt, shape_str(sa), shape_str(sb), dev);
          const double rtol = rtol_for(dt) * 10, atol = atol_for(dt) * 10;
          compare([&] { return native::binary(op, a, b); },
                  [&] { return native::binary(op, to_gpu(a, dev), to_gpu(b, dev)); }, rtol, atol, what);
          if (dev == 0) {
            compare([&] { return native::binary(op, a, b); },
                    [&] { return native::binary(op, noncontiguous_gpu(a), noncontiguous_gpu(b)); }, rtol, atol,
                    what + " non-contiguous");
          }
        }
        // Tensor op scalar.
        Tensor a = random_cpu({257}, dt);
        compare([&] { return native::binary(op, a, Scalar(2)); },
                [&] { return native::binary(op, to_gpu(a, dev), Scalar(2)); }, rtol_for(dt), atol_for(dt),
                fmt::format("binary op {} {} with a scalar", op_i, dt));
      }
    }
  }
}

TEST_CASE("in-place binary ops with broadcasting", "[cuda][elementwise]") {
  Tensor a = random_cpu({33, 65}, kFloat64);
  Tensor b = random_cpu({65}, kFloat64);
  Tensor ga = noncontiguous_gpu(a);
  native::binary_(BinaryOp::Add, ga, to_gpu(b));
  native::binary_(BinaryOp::Add, a, b);
  check_close(ga, a, 1e-12, 1e-13);
}

TEST_CASE("where matches the CPU with broadcast operands", "[cuda][elementwise]") {
  for (DType dt : kAllTypes) {
    Tensor cond = random_cpu({17, 1, 33}, kBool);
    Tensor a = random_cpu({1, 5, 33}, dt);
    Tensor b = random_cpu({17, 5, 1}, dt);
    compare([&] { return native::where(cond, a, b); },
            [&] { return native::where(to_gpu(cond), to_gpu(a), to_gpu(b)); }, 0, 0, fmt::format("where {}", dt));
    Tensor c2 = random_cpu({40, 50}, kBool);
    Tensor a2 = random_cpu({40, 50}, dt), b2 = random_cpu({40, 50}, dt);
    compare([&] { return native::where(c2, a2, b2); },
            [&] { return native::where(noncontiguous_gpu(c2), noncontiguous_gpu(a2), to_gpu(b2)); }, 0, 0,
            fmt::format("where {} non-contiguous", dt));
  }
}

TEST_CASE("clamp, NaN and infinities behave as on the CPU", "[cuda][elementwise]") {
  const std::vector<double> v = {-INFINITY, -2.5, -0.0, 0.0, 1e-30, 3.0, INFINITY, NAN};
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor x = native::to(native::from_blob_copy(v.data(), {static_cast<int64_t>(v.size())}, kFloat64, kCPU), kCPU, dt);
    for (int op_i = 0; op_i <= static_cast<int>(UnaryOp::ClampMax); ++op_i) {
      const auto op = static_cast<UnaryOp>(op_i);
      compare([&] { return native::unary(op, x, 0.5); }, [&] { return native::unary(op, to_gpu(x), 0.5); }, 1e-5, 1e-6,
              fmt::format("unary op {} on special values ({})", op_i, dt));
    }
    std::vector<double> w(v.rbegin(), v.rend());
    Tensor y = native::to(native::from_blob_copy(w.data(), {static_cast<int64_t>(w.size())}, kFloat64, kCPU), kCPU, dt);
    for (BinaryOp op : {BinaryOp::Maximum, BinaryOp::Minimum, BinaryOp::Eq, BinaryOp::Lt, BinaryOp::Div, BinaryOp::Pow,
                        BinaryOp::Mul}) {
      compare([&] { return native::binary(op, x, y); }, [&] { return native::binary(op, to_gpu(x), to_gpu(y)); }, 1e-5,
              1e-6, fmt::format("binary op {} on special values ({})", static_cast<int>(op), dt));
    }
  }
}
