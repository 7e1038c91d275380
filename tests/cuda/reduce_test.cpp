// Reductions and arg reductions versus the CPU: all dims, some dims, non-contiguous inputs,
// rows long enough to be split across blocks, NaN, and ties.
#include "cuda_test_util.h"

using namespace wick;
using namespace wick::cuda_test;

namespace {
struct Case {
  std::vector<int64_t> shape;
  std::vector<int64_t> dims;
};
const std::vector<Case> kCases = {
    {{7}, {}},          {{100003}, {}},       {{1 << 21}, {0}},  {{17, 33}, {0}},
    {{17, 33}, {1}},    {{17, 33}, {0, 1}},   {{3, 5, 7}, {1}},  {{3, 5, 7}, {0, 2}},
    {{300000, 3}, {0}}, {{3, 300000}, {1}},   {{70000, 5}, {1}}, {{2, 1, 4, 1025}, {0, 3}},
    {{513, 257}, {0}},  {{4, 1, 6, 7}, {-1}},
};
}  // namespace

TEST_CASE("sum, prod, amax and amin match the CPU", "[cuda][reduce]") {
  for (int dev = 0; dev < cuda::device_count(); ++dev) {
    for (const auto& c : kCases) {
      for (DType dt : {kFloat32, kFloat64, kInt64, kBool}) {
        Tensor x = random_cpu(c.shape, dt);
        for (int op_i = 0; op_i <= static_cast<int>(ReduceOp::Min); ++op_i) {
          const auto op = static_cast<ReduceOp>(op_i);
          Tensor in = x;
          // Products of many normals overflow or vanish: use values close to 1 there.
          if (op == ReduceOp::Prod && is_floating(dt))
            in = native::binary(BinaryOp::Add,
                                native::binary(BinaryOp::Mul, native::rand(c.shape, dt, kCPU), Scalar(0.02)),
                                Scalar(0.99));
          if (op == ReduceOp::Prod && dt == kInt64) in = native::randint(-1, 2, c.shape, kInt64, kCPU);
          const std::string what = fmt::format("reduce op {} {} shape {} dims [{}] cuda:{}", op_i, dt,
                                               shape_str(c.shape), fmt::join(c.dims, ","), dev);
          const double rtol = dt == kFloat32 ? 1e-5 : 1e-10;
          for (bool keepdim : {false, true}) {
            Tensor want = native::reduce(op, in, c.dims, keepdim);
            check_close(native::reduce(op, to_gpu(in, dev), c.dims, keepdim), want, rtol, rtol, what);
            if (dev == 0 && !keepdim)
              check_close(native::reduce(op, noncontiguous_gpu(in), c.dims, keepdim), want, rtol, rtol,
                          what + " non-contiguous");
          }
        }
      }
    }
  }
}

TEST_CASE("amax and amin propagate NaN, sums of empty dims are zero", "[cuda][reduce]") {
  Tensor x = random_cpu({64, 300}, kFloat32);
  Tensor nan = native::full({1}, Scalar(NAN), kFloat32, kCPU);
  native::copy_(native::slice(native::select(x, 0, 5), 0, 100, 101, 1), nan);
  native::copy_(native::slice(native::select(x, 0, 9), 0, 0, 1, 1), nan);
  for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min, ReduceOp::Sum}) {
    check_close(native::reduce(op, to_gpu(x), {1}, false), native::reduce(op, x, {1}, false));
    check_close(native::reduce(op, to_gpu(x), {}, false), native::reduce(op, x, {}, false));
  }
  Tensor e = native::empty({0, 5}, kFloat32, kCPU);
  check_close(native::sum(to_gpu(e), {0}, false), native::sum(e, {0}, false));
}

TEST_CASE("mean, var, logsumexp and softmax composites match the CPU", "[cuda][reduce]") {
  Tensor x = random_cpu({33, 1025}, kFloat64);
  check_close(native::mean(to_gpu(x), {1}, false), native::mean(x, {1}, false), 1e-12, 1e-12);
  check_close(native::var(to_gpu(x), {0}, true, false), native::var(x, {0}, true, false), 1e-10, 1e-12);
  check_close(native::logsumexp(to_gpu(x), {1}, true), native::logsumexp(x, {1}, true), 1e-12, 1e-12);
  check_close(native::softmax(to_gpu(x), 1), native::softmax(x, 1), 1e-12, 1e-14);
  check_close(native::log_softmax(to_gpu(x), 0), native::log_softmax(x, 0), 1e-12, 1e-12);
}

TEST_CASE("argmax and argmin match the CPU, ties and NaN included", "[cuda][reduce]") {
  const std::vector<std::pair<std::vector<int64_t>, int64_t>> cases = {
      {{10}, 0}, {{17, 33}, 1}, {{17, 33}, 0}, {{3, 5000}, 1}, {{100000, 3}, 0}, {{4, 7, 9}, 1}, {{2, 70001}, -1}};
  for (DType dt : {kFloat32, kFloat64, kInt64, kBool}) {
    for (const auto& [shape, dim] : cases) {
      // Few distinct values: many ties, so "the first index wins" is tested.
      Tensor x = dt == kBool ? random_cpu(shape, dt) : native::to(native::randint(0, 5, shape, kInt64, kCPU), kCPU, dt);
      for (bool keepdim : {false, true}) {
        const std::string what = fmt::format("{} {} dim {} keepdim {}", dt, shape_str(shape), dim, keepdim);
        check_equal(native::argmax(to_gpu(x), dim, keepdim), native::argmax(x, dim, keepdim), "argmax " + what);
        check_equal(native::argmin(to_gpu(x), dim, keepdim), native::argmin(x, dim, keepdim), "argmin " + what);
        check_equal(native::argmax(noncontiguous_gpu(x), dim, keepdim), native::argmax(x, dim, keepdim),
                    "argmax non-contiguous " + what);
      }
    }
  }
  Tensor y = random_cpu({8, 100}, kFloat32);
  Tensor nan = native::full({1}, Scalar(NAN), kFloat32, kCPU);
  native::copy_(native::slice(native::select(y, 0, 2), 0, 40, 41, 1), nan);
  native::copy_(native::slice(native::select(y, 0, 2), 0, 70, 71, 1), nan);
  check_equal(native::argmax(to_gpu(y), 1, false), native::argmax(y, 1, false), "argmax with NaN");
  check_equal(native::argmin(to_gpu(y), 1, false), native::argmin(y, 1, false), "argmin with NaN");
}
