// index_select, index_add, gather and scatter_add versus the CPU (repeated indices included, so
// the atomic adds are exercised).
#include "cuda_test_util.h"

using namespace wick;
using namespace wick::cuda_test;

TEST_CASE("index_select and gather match the CPU", "[cuda][index]") {
  for (DType dt : {kFloat32, kFloat64, kInt64, kBool}) {
    Tensor x = random_cpu({37, 129}, dt);
    for (int64_t dim : {0, 1}) {
      Tensor idx = native::randint(0, x.size(dim), {301}, kInt64, kCPU);
      const std::string what = fmt::format("index_select {} dim {}", dt, dim);
      check_equal(native::index_select(to_gpu(x), dim, to_gpu(idx)), native::index_select(x, dim, idx), what);
      check_equal(native::index_select(noncontiguous_gpu(x), dim, to_gpu(idx)), native::index_select(x, dim, idx),
                  what + " non-contiguous");
      DimVector gshape(x.sizes());
      gshape[static_cast<size_t>(dim)] = 53;
      Tensor gidx = native::randint(0, x.size(dim), gshape, kInt64, kCPU);
      check_equal(native::gather(to_gpu(x), dim, to_gpu(gidx)), native::gather(x, dim, gidx),
                  fmt::format("gather {} dim {}", dt, dim));
      check_equal(native::gather(noncontiguous_gpu(x), dim, noncontiguous_gpu(gidx)), native::gather(x, dim, gidx),
                  fmt::format("gather {} dim {} non-contiguous", dt, dim));
    }
  }
}

TEST_CASE("index_add and scatter_add match the CPU with repeated indices", "[cuda][index]") {
  for (DType dt : {kFloat32, kFloat64, kInt64}) {
    const double tol = dt == kFloat32 ? 1e-5 : 1e-12;
    Tensor base = random_cpu({37, 129}, dt);
    for (int64_t dim : {0, 1}) {
      // Many more sources than slots: every slot gets several atomic adds.
      Tensor idx = native::randint(0, base.size(dim), {1001}, kInt64, kCPU);
      DimVector sshape(base.sizes());
      sshape[static_cast<size_t>(dim)] = 1001;
      Tensor src = random_cpu(sshape, dt);
      check_close(native::index_add(to_gpu(base), dim, to_gpu(idx), to_gpu(src)),
                  native::index_add(base, dim, idx, src), tol, tol, fmt::format("index_add {} dim {}", dt, dim));
      check_close(native::index_add(to_gpu(base), dim, to_gpu(idx), noncontiguous_gpu(src)),
                  native::index_add(base, dim, idx, src), tol, tol, fmt::format("index_add {} dim {} nc", dt, dim));
      DimVector ishape(base.sizes());
      ishape[static_cast<size_t>(dim)] = 301;
      Tensor sidx = native::randint(0, base.size(dim), ishape, kInt64, kCPU);
      Tensor ssrc = random_cpu(ishape, dt);
      check_close(native::scatter_add(to_gpu(base), dim, to_gpu(sidx), to_gpu(ssrc)),
                  native::scatter_add(base, dim, sidx, ssrc), tol, tol, fmt::format("scatter_add {} dim {}", dt, dim));
      check_close(native::scatter_add(noncontiguous_gpu(base), dim, noncontiguous_gpu(sidx), noncontiguous_gpu(ssrc)),
                  native::scatter_add(base, dim, sidx, ssrc), tol, tol,
                  fmt::format("scatter_add {} dim {} non-contiguous", dt, dim));
    }
  }
}

TEST_CASE("cat, stack and split on CUDA tensors", "[cuda][index]") {
  Tensor a = random_cpu({5, 7}, kFloat32), b = random_cpu({3, 7}, kFloat32);
  check_equal(native::cat({to_gpu(a), to_gpu(b)}, 0), native::cat({a, b}, 0));
  check_equal(native::stack({to_gpu(a), noncontiguous_gpu(a)}, 1), native::stack({a, a}, 1));
  auto parts = native::split(to_gpu(a), 2, 0);
  auto want = native::split(a, 2, 0);
  REQUIRE(parts.size() == want.size());
  for (size_t i = 0; i < parts.size(); ++i) check_equal(parts[i], want[i]);
}
