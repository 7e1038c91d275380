// GEMM through cuBLAS (every transpose case, batched, broadcast batch, alpha/beta) and
// im2col/col2im versus the CPU backend.
#include "cuda_test_util.h"
#include "wick/core/backend.h"
#include "wick/cuda/stream.h"

using namespace wick;
using namespace wick::cuda_test;

TEST_CASE("matmul matches the CPU for every shape case", "[cuda][linalg]") {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{7, 5}, {5, 3}},       {{129, 257}, {257, 65}},   {{1, 300}, {300, 1}},
      {{300}, {300, 17}},     {{17, 300}, {300}},        {{4, 33, 17}, {4, 17, 9}},
      {{4, 33, 17}, {17, 9}}, {{2, 1, 5, 6}, {3, 6, 7}}, {{64, 0}, {0, 8}},
  };
  for (DType dt : {kFloat32, kFloat64}) {
    const double tol = dt == kFloat32 ? 1e-4 : 1e-11;
    for (const auto& [sa, sb] : cases) {
      Tensor a = random_cpu(sa, dt), b = random_cpu(sb, dt);
      const std::string what = fmt::format("matmul {} {} x {}", dt, shape_str(sa), shape_str(sb));
      Tensor want = native::matmul(a, b);
      check_close(native::matmul(to_gpu(a), to_gpu(b)), want, tol, tol, what);
      if (a.dim() >= 2 && b.dim() >= 2) {
        // Transposed storage: GEMM gets trans flags instead of copies.
        check_close(native::matmul(noncontiguous_gpu(a), noncontiguous_gpu(b)), want, tol, tol, what + " (T, T)");
        check_close(native::matmul(noncontiguous_gpu(a), to_gpu(b)), want, tol, tol, what + " (T, N)");
        check_close(native::matmul(to_gpu(a), noncontiguous_gpu(b)), want, tol, tol, what + " (N, T)");
      }
    }
  }
}

TEST_CASE("gemm honours alpha, beta, leading dims and batch strides", "[cuda][linalg]") {
  for (DType dt : {kFloat32, kFloat64}) {
    const double tol = dt == kFloat32 ? 1e-4 : 1e-11;
    // A is 3 x (5 x 7) inside a wider buffer (lda 9), B is 3 x (7 x 4) transposed storage.
    Tensor A = random_cpu({3, 5, 9}, dt), B = random_cpu({3, 4, 7}, dt), C = random_cpu({3, 5, 4}, dt);
    auto run = [&](Device d) {
      Tensor a = d.is_cpu() ? A : to_gpu(A), b = d.is_cpu() ? B : to_gpu(B);
      Tensor c = d.is_cpu() ? native::clone(C) : to_gpu(C);
      GemmArgs g{};
      g.dtype = dt;
      g.batch = 3;
      g.m = 5;
      g.n = 4;
      g.k = 7;
      g.a = a.data_ptr();
      g.lda = 9;
      g.stride_a = 45;
      g.trans_a = false;
      g.b = b.data_ptr();
      g.ldb = 7;
      g.stride_b = 28;
      g.trans_b = true;
      g.c = c.data_ptr();
      g.ldc = 4;
      g.stride_c = 20;
      g.alpha = 0.5;
      g.beta = -2.0;
      backend(d).gemm(g);
      return c;
    };
    check_close(run(gpu()), run(kCPU), tol, tol, fmt::format("gemm {}", dt));
  }
}

TEST_CASE("im2col and col2im match the CPU", "[cuda][linalg]") {
  for (const WindowGeo& s : {WindowGeo{3, 11, 13, 3, 3, 1, 1, 1, 1, 1, 1}, WindowGeo{2, 17, 9, 5, 3, 2, 0, 2, 3, 1, 2},
                             WindowGeo{1, 8, 8, 2, 2, 0, 0, 2, 2, 1, 1}, WindowGeo{4, 7, 7, 3, 3, 3, 3, 1, 1, 2, 2}}) {
    for (DType dt : {kFloat32, kFloat64}) {
      const Im2ColArgs g = s.args(dt);
      const int64_t rows = s.c * s.kh * s.kw, cols = g.out_h * g.out_w;
      Tensor image = random_cpu({s.c, s.h, s.w}, dt);
      Tensor col_cpu = native::empty({rows, cols}, dt, kCPU), col_gpu = native::empty({rows, cols}, dt, gpu());
      Tensor image_gpu = to_gpu(image);
      backend(kCPU).im2col(g, image.data_ptr(), col_cpu.data_ptr());
      backend(gpu()).im2col(g, image_gpu.data_ptr(), col_gpu.data_ptr());
      check_equal(col_gpu, col_cpu, fmt::format("im2col {} c{} h{} w{}", dt, s.c, s.h, s.w));
      Tensor cols_in = random_cpu({rows, cols}, dt);
      Tensor cols_in_gpu = to_gpu(cols_in);
      Tensor im_cpu = native::zeros({s.c, s.h, s.w}, dt, kCPU), im_gpu = native::zeros({s.c, s.h, s.w}, dt, gpu());
      backend(kCPU).col2im(g, cols_in.data_ptr(), im_cpu.data_ptr());
      backend(gpu()).col2im(g, cols_in_gpu.data_ptr(), im_gpu.data_ptr());
      check_close(im_gpu, im_cpu, 1e-5, 1e-6, fmt::format("col2im {} c{} h{} w{}", dt, s.c, s.h, s.w));
    }
  }
}

TEST_CASE("matmuls on two streams of one thread each get their own cuBLAS workspace", "[cuda][linalg]") {
  // Note [cuBLAS workspaces]: one handle per thread and device, used on two streams without a
  // sync in between. With a shared workspace the two GEMMs could overwrite each other's scratch.
  cuda::Stream s1 = cuda::get_stream_from_pool(0), s2 = cuda::get_stream_from_pool(0);
  REQUIRE(s1 != s2);
  Tensor a = random_cpu({384, 512}, kFloat32), b = random_cpu({512, 640}, kFloat32);
  Tensor c = random_cpu({640, 256}, kFloat32), d = random_cpu({256, 384}, kFloat32);
  Tensor ga = to_gpu(a), gb = to_gpu(b), gc = to_gpu(c), gd = to_gpu(d);
  cuda::synchronize(0);
  std::vector<Tensor> on1, on2;
  for (int i = 0; i < 8; ++i) {
    {
      cuda::StreamGuard g(s1);
      on1.push_back(native::matmul(ga, gb));
    }
    {
      cuda::StreamGuard g(s2);
      on2.push_back(native::matmul(gc, gd));
    }
  }
  s1.synchronize();
  s2.synchronize();
  const Tensor want1 = native::matmul(a, b), want2 = native::matmul(c, d);
  for (int i = 0; i < 8; ++i) {
    check_close(on1[static_cast<size_t>(i)], want1, 1e-4, 1e-4, "stream 1");
    check_close(on2[static_cast<size_t>(i)], want2, 1e-4, 1e-4, "stream 2");
  }
}
