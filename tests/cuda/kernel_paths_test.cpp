// Each launch path of the CUDA kernels chosen by shape (cuda/src/launch_plan.h) against the
// CPU: the reduction kernels (Note [Reductions]), 32- and 64-bit index math forced in turn (Note
// [32-bit index math]), tensor-scalar ops with the scalar as a kernel argument (Note [Scalar
// operands]), and conv2d / avg_pool2d at batch > 1 with groups through batched im2col/col2im and
// the batched weight gradient (Note [Batched im2col], Note [Batched conv weight gradient]), and
// the fused softmax, log_softmax and layer_norm rows (cuda/src/row_stubs.cu).
#include <algorithm>

#include "cuda_test_util.h"
#include "launch_plan.h"
#include "wick/autograd/functions.h"
#include "wick/core/stubs.h"
#include "wick/core/trace.h"
#include "wick/nn/functional.h"

using namespace wick;
using namespace wick::cuda_test;
namespace plan = wick::cuda::plan;
namespace F = wick::nn::functional;

namespace {
struct PathCase {
  std::vector<int64_t> shape;
  std::vector<int64_t> dims;
  plan::ReducePath path;
  bool split;  // the row is split across blocks (partials and a second pass)
};

// Shapes for a device of `sms` SMs (the warp path needs >= 2 x 256 outputs per SM). The sizes
// below are the contiguous [rows, cols] inputs; reduce over dim 0 is outer, over dim 1 inner.
// Events named exactly `name` in a trace's JSON.
size_t count_events(const std::string& json, const std::string& name) {
  const std::string key = "\"name\": \"" + name + "\"";
  size_t n = 0;
  for (size_t p = json.find(key); p != std::string::npos; p = json.find(key, p + 1)) ++n;
  return n;
}

std::vector<PathCase> path_cases(int sms) {
  const int64_t wide = int64_t{sms} * 2 * plan::kReduceBlock;
  return {
      {{wide + 77, 45}, {1}, plan::ReducePath::Warp, false},     {{500, 300}, {0}, plan::ReducePath::Columns, false},
      {{3000, 300}, {0}, plan::ReducePath::Columns, true},       {{100000, 64}, {0}, plan::ReducePath::Columns, true},
      {{6, 20000, 33}, {0, 1}, plan::ReducePath::Columns, true}, {{2, 257, 7}, {1}, plan::ReducePath::Columns, false},
      {{64, 50000}, {1}, plan::ReducePath::Block, true},
  };
}
}  // namespace

TEST_CASE("every reduction kernel path matches the CPU and repeats bit for bit", "[cuda][reduce]") {
  const int sms = cuda::get_device_properties(0).multi_processor_count;
  for (const PathCase& c : path_cases(sms)) {
    // The plan as reduce.cu computes it for a contiguous input: kept and reduced dims coalesced.
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < c.shape.size(); ++d)
      (std::find(c.dims.begin(), c.dims.end(), static_cast<int64_t>(d)) != c.dims.end() ? inner : outer) *= c.shape[d];
    const bool row_contiguous = c.dims.back() == static_cast<int64_t>(c.shape.size()) - 1;
    const plan::ReduceLaunch l = plan::choose_reduce(outer, inner, row_contiguous, !row_contiguous, sms);
    const std::string where = fmt::format("shape {} dims [{}]", shape_str(c.shape), fmt::join(c.dims, ","));
    INFO(where);
    REQUIRE(l.path == c.path);
    REQUIRE((l.splits > 1) == c.split);
    for (DType dt : {kFloat32, kFloat64, kInt64, kBool}) {
      Tensor x = random_cpu(c.shape, dt);
      Tensor xg = to_gpu(x);
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min}) {
        Tensor in = x, in_g = xg;
        if (op == ReduceOp::Prod) {  // products of many values: +-1 and 0 keep them finite
          in = native::randint(-1, 2, c.shape, kInt64, kCPU);
          if (dt != kInt64) in = native::to(in, kCPU, dt);
          in_g = to_gpu(in);
        }
        const std::string what = fmt::format("{} op {} {}", where, static_cast<int>(op), dt);
        const double rtol = dt == kFloat32 ? 1e-5 : 1e-10;
        Tensor got = native::reduce(op, in_g, c.dims, false);
        check_close(got, native::reduce(op, in, c.dims, false), rtol, rtol, what);
        check_equal(native::reduce(op, in_g, c.dims, false), got, what + " repeated");
      }
    }
  }
}

TEST_CASE("32-bit and 64-bit index math give the same elementwise results", "[cuda][elementwise]") {
  struct Reset {
    ~Reset() { plan::forced_index_width() = plan::IndexWidth::Auto; }
  } reset;
  Tensor a = random_cpu({37, 19, 23}, kFloat32), b = random_cpu({19, 1}, kFloat32);
  Tensor ai = random_cpu({37, 19, 23}, kInt64);
  for (plan::IndexWidth w : {plan::IndexWidth::Force32, plan::IndexWidth::Force64}) {
    plan::forced_index_width() = w;
    const std::string what = w == plan::IndexWidth::Force32 ? "32-bit" : "64-bit";
    Tensor ag = noncontiguous_gpu(a), bg = to_gpu(b), aig = noncontiguous_gpu(ai);
    // Strided unary, broadcast binary, a permuted copy and a strided where.
    check_equal(native::unary(UnaryOp::Neg, ag, 0, 0), native::unary(UnaryOp::Neg, a, 0, 0), what + " neg");
    check_close(native::unary(UnaryOp::Exp, ag, 0, 0), native::unary(UnaryOp::Exp, a, 0, 0), 1e-6, 1e-7, what + " exp");
    check_equal(native::binary(BinaryOp::Add, ag, bg), native::binary(BinaryOp::Add, a, b), what + " add");
    check_equal(native::binary(BinaryOp::Mul, aig, aig), native::binary(BinaryOp::Mul, ai, ai), what + " int mul");
    check_equal(native::contiguous(native::permute(ag, {2, 0, 1})), native::contiguous(native::permute(a, {2, 0, 1})),
                what + " permuted copy");
    Tensor cond = native::binary(BinaryOp::Gt, a, Scalar(0.0));
    check_equal(native::where(noncontiguous_gpu(cond), ag, bg), native::where(cond, a, b), what + " where");
  }
}

TEST_CASE("tensor-scalar ops match the CPU for every dtype and scalar kind", "[cuda][elementwise]") {
  const std::vector<Scalar> scalars = {Scalar(int64_t{3}), Scalar(int64_t{-2}), Scalar(0.75), Scalar(true),
                                       Scalar(false)};
  for (DType dt : {kFloat32, kFloat64, kInt64, kBool}) {
    Tensor x = random_cpu({5, 67}, dt);
    if (dt == kInt64) x = native::randint(1, 9, {5, 67}, kInt64, kCPU);  // no 0 ** negative
    for (bool strided : {false, true}) {
      Tensor xg = strided ? noncontiguous_gpu(x) : to_gpu(x);
      for (int op_i = 0; op_i <= static_cast<int>(BinaryOp::LogicalOr); ++op_i) {
        const auto op = static_cast<BinaryOp>(op_i);
        for (const Scalar& s : scalars) {
          const std::string what = fmt::format("op {} {} scalar {} ({}){}", op_i, dt, s.to_double(),
                                               dtype_name(s.dtype()), strided ? " strided" : "");
          INFO(what);
          Tensor want;
          try {
            want = native::binary(op, x, s);
          } catch (const Error&) {
            CHECK_THROWS_AS(native::binary(op, xg, s), Error);  // refused alike
            continue;
          }
          check_close(native::binary(op, xg, s), want, 1e-6, 1e-7, what);
        }
      }
    }
  }
}

TEST_CASE("conv2d at batch > 1 with groups matches the CPU, forward and gradients", "[cuda][conv]") {
  struct Case {
    int64_t n, c, h, w, o, k, stride, pad, dil, groups;
  };
  for (const Case& t : {Case{4, 6, 11, 9, 4, 3, 1, 1, 1, 2}, Case{5, 8, 12, 12, 8, 3, 2, 1, 2, 8},
                        Case{3, 4, 7, 10, 6, 1, 1, 0, 1, 2}, Case{6, 3, 9, 9, 5, 3, 1, 2, 1, 1}}) {
    for (DType dt : {kFloat32, kFloat64}) {
      const std::string what = fmt::format("n{} c{} {}x{} o{} k{} s{} p{} d{} g{} {}", t.n, t.c, t.h, t.w, t.o, t.k,
                                           t.stride, t.pad, t.dil, t.groups, dt);
      INFO(what);
      Tensor x = random_cpu({t.n, t.c, t.h, t.w}, dt), w = random_cpu({t.o, t.c / t.groups, t.k, t.k}, dt);
      Tensor b = random_cpu({t.o}, dt);
      Tensor r;  // d loss / d y, drawn on the first run
      auto run = [&](Device d, Tensor& gx, Tensor& gw, Tensor& gb) {
        Tensor xd = native::to(x, d, dt).requires_grad_(true), wd = native::to(w, d, dt).requires_grad_(true);
        Tensor bd = native::to(b, d, dt).requires_grad_(true);
        Tensor y = F::conv2d(xd, wd, bd, t.stride, t.pad, t.dil, t.groups);
        if (!r.defined()) r = native::rand(y.sizes(), dt, kCPU);
        wick::sum(wick::mul(y, native::to(r, d, dt))).backward();
        gx = native::to(xd.grad(), kCPU, dt);
        gw = native::to(wd.grad(), kCPU, dt);
        gb = native::to(bd.grad(), kCPU, dt);
        return native::to(y, kCPU, dt);
      };
      Tensor gx_c, gw_c, gb_c, gx_g, gw_g, gb_g;
      Tensor y_c = run(kCPU, gx_c, gw_c, gb_c);
      Tensor y_g = run(gpu(), gx_g, gw_g, gb_g);
      const double tol = dt == kFloat32 ? 1e-4 : 1e-10;
      check_close(y_g, y_c, tol, tol, what + " y");
      check_close(gx_g, gx_c, tol, tol, what + " grad x");
      check_close(gw_g, gw_c, tol, tol, what + " grad w");
      check_close(gb_g, gb_c, tol, tol, what + " grad b");
    }
  }
}

TEST_CASE("avg_pool2d through batched im2col and col2im matches the CPU, forward and gradient", "[cuda][conv]") {
  Tensor x = random_cpu({7, 3, 10, 13}, kFloat64);
  auto run = [&](Device d, Tensor& gx) {
    Tensor xd = native::to(x, d, kFloat64).requires_grad_(true);
    Tensor y = F::avg_pool2d(xd, 3, 2, 1);
    wick::sum(wick::mul(y, y)).backward();
    gx = native::to(xd.grad(), kCPU, kFloat64);
    return native::to(y, kCPU, kFloat64);
  };
  Tensor gx_c, gx_g;
  Tensor y_c = run(kCPU, gx_c), y_g = run(gpu(), gx_g);
  check_close(y_g, y_c, 1e-12, 1e-12, "avg_pool2d");
  check_close(gx_g, gx_c, 1e-12, 1e-12, "avg_pool2d grad");
}

TEST_CASE("a tensor-scalar op and conv2d's im2col and weight gradient launch once per batch", "[cuda][conv]") {
  Tensor x = to_gpu(random_cpu({64, 33}, kFloat32));
  std::string json;
  {
    profiler::Trace trace;
    Tensor y = native::binary(BinaryOp::Mul, x, Scalar(2.5));
    json = trace.stop();
  }
  CHECK(count_events(json, "stub:binary_scalar") == 1);
  CHECK(count_events(json, "fill") == 0);
  CHECK(count_events(json, "binary:Mul") == 0);
  // The same through the tensor API, with a gradient, and in place: one launch each.
  {
    Tensor xr = to_gpu(random_cpu({64, 33}, kFloat32)).requires_grad_(true);
    profiler::Trace trace;
    Tensor y = (xr * 2.5 + 1.0) / 4.0;  // three launches forward
    wick::sum(y).backward();            // the gradient: g / 4 then * 2.5
    Tensor z = to_gpu(random_cpu({8}, kFloat64));
    z.mul_(3.0);
    json = trace.stop();
    check_close(xr.grad(), native::full({64, 33}, 0.625, kFloat32, gpu()), 0, 0, "d/dx of (2.5 x + 1) / 4");
  }
  CHECK(count_events(json, "stub:binary_scalar") == 6);
  CHECK(count_events(json, "fill") <= 1);  // only sum's seed gradient may fill
  CHECK(count_events(json, "binary:Mul") == 0);
  CHECK(count_events(json, "binary:Div") == 0);
  // Batch 8, 2 groups, only the weight needs a gradient: 2 GEMMs forward (one per group) and 2
  // for the weight gradient (strided-batched over the images), instead of 8 x 2 batch-1 GEMMs.
  Tensor xi = to_gpu(random_cpu({8, 4, 9, 9}, kFloat32));
  Tensor w = to_gpu(random_cpu({6, 2, 3, 3}, kFloat32)).requires_grad_(true);
  {
    profiler::Trace trace;
    wick::sum(F::conv2d(xi, w, {}, 1, 1, 1, 2)).backward();
    json = trace.stop();
  }
  CHECK(count_events(json, "stub:im2col_images") == 1);
  CHECK(count_events(json, "im2col") == 0);
  CHECK(count_events(json, "gemm") == 4);
  REQUIRE(w.grad().defined());
}

TEST_CASE("softmax, log_softmax and layer_norm run through CUDA's row stubs and match the CPU", "[cuda][rows]") {
  backend(DeviceType::CUDA);
  REQUIRE(stubs::log_softmax_rows.find(DeviceType::CUDA) != nullptr);
  REQUIRE(stubs::log_softmax_backward_rows.find(DeviceType::CUDA) != nullptr);
  REQUIRE(stubs::softmax_rows.find(DeviceType::CUDA) != nullptr);
  REQUIRE(stubs::softmax_backward_rows.find(DeviceType::CUDA) != nullptr);
  REQUIRE(stubs::layer_norm_rows.find(DeviceType::CUDA) != nullptr);
  REQUIRE(stubs::layer_norm_backward_rows.find(DeviceType::CUDA) != nullptr);
  for (DType dtype : {kFloat32, kFloat64}) {
    const double rtol = dtype == kFloat64 ? 1e-12 : 1e-5;
    const Tensor x = random_cpu({37, 129}, dtype), g = random_cpu({37, 129}, dtype);
    const Tensor w = random_cpu({129}, dtype), b = random_cpu({129}, dtype);
    using Fn = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;
    const std::vector<std::pair<std::string, Fn>> ops{
        {"log_softmax", [](const Tensor& t, const Tensor&, const Tensor&) { return wick::log_softmax(t, 1); }},
        {"softmax", [](const Tensor& t, const Tensor&, const Tensor&) { return wick::softmax(t, 1); }},
        {"layer_norm",
         [](const Tensor& t, const Tensor& wt, const Tensor& bt) { return F::layer_norm(t, {129}, wt, bt); }}};
    for (const auto& [name, op] : ops) {
      INFO(name << " " << dtype_name(dtype));
      Tensor xc = x.clone().requires_grad_(true), wc = w.clone().requires_grad_(true);
      Tensor xg = to_gpu(x).requires_grad_(true), wg = to_gpu(w).requires_grad_(true);
      Tensor yc = op(xc, wc, b), yg = op(xg, wg, to_gpu(b));
      check_close(yg, yc, rtol, rtol, name + " forward");
      wick::sum(yc * g).backward();
      wick::sum(yg * to_gpu(g)).backward();
      check_close(xg.grad(), xc.grad(), rtol, rtol, name + " input gradient");
      if (name == "layer_norm") check_close(wg.grad(), wc.grad(), rtol, rtol, name + " weight gradient");
    }
  }
  // The forward is one stub launch, not the composite's exp, sum and log.
  std::string json;
  {
    profiler::Trace trace;
    Tensor y = wick::log_softmax(to_gpu(random_cpu({8, 10}, kFloat32)), 1);
    json = trace.stop();
  }
  CHECK(count_events(json, "stub:log_softmax_rows") == 1);
  CHECK(count_events(json, "unary:Exp") == 0);
}
