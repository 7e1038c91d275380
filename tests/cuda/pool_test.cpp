// Backend::max_pool2d on the GPU versus the CPU backend: values and indices equal, over padding,
// stride, dilation, ceil-mode-sized outputs, ties and NaN; and the backward from those indices.
#include <cmath>
#include <vector>

#include "cuda_test_util.h"
#include "wick/core/backend.h"

using namespace wick;
using namespace wick::cuda_test;

TEST_CASE("max_pool2d and its backward match the CPU", "[cuda][pool]") {
  // oh/ow as the front-end computes them (the last two rows: ceil_mode sizes whose last window
  // reaches past the padding).
  for (const WindowGeo& s :
       {WindowGeo{3, 11, 13, 3, 3, 1, 1, 1, 1, 1, 1, 11, 13}, WindowGeo{2, 17, 9, 5, 3, 2, 1, 2, 3, 1, 2, 9, 2},
        WindowGeo{130, 28, 28, 2, 2, 0, 0, 2, 2, 1, 1, 14, 14}, WindowGeo{4, 7, 7, 3, 3, 1, 1, 2, 2, 2, 2, 3, 3},
        WindowGeo{2, 5, 5, 2, 2, 0, 0, 2, 2, 1, 1, 3, 3}, WindowGeo{1, 8, 7, 3, 3, 1, 1, 2, 2, 1, 1, 4, 4}}) {
    for (DType dt : {kFloat32, kFloat64}) {
      const Im2ColArgs g = s.args(dt);
      // Small integers make ties; a few NaNs check that NaN wins the same way on both.
      std::vector<double> v(static_cast<size_t>(s.c * s.h * s.w));
      for (size_t i = 0; i < v.size(); ++i) v[i] = i % 97 == 5 ? NAN : static_cast<double>((i * 7919) % 5);
      Tensor image = native::to(native::from_blob_copy(v.data(), {s.c, s.h, s.w}, kFloat64, kCPU), kCPU, dt);
      Tensor out_cpu = native::empty({s.c, s.oh, s.ow}, dt, kCPU),
             out_gpu = native::empty({s.c, s.oh, s.ow}, dt, gpu());
      Tensor idx_cpu = native::empty({s.c, s.oh, s.ow}, kInt64, kCPU);
      Tensor idx_gpu = native::empty({s.c, s.oh, s.ow}, kInt64, gpu());
      Tensor image_gpu = to_gpu(image);
      backend(kCPU).max_pool2d(g, image.data_ptr(), out_cpu.data_ptr(), static_cast<int64_t*>(idx_cpu.data_ptr()));
      backend(gpu()).max_pool2d(g, image_gpu.data_ptr(), out_gpu.data_ptr(), static_cast<int64_t*>(idx_gpu.data_ptr()));
      const std::string what = fmt::format("max_pool2d {} c{} h{} w{} k{}x{}", dt, s.c, s.h, s.w, s.kh, s.kw);
      check_equal(idx_gpu, idx_cpu, what + " indices");
      check_equal(out_gpu, out_cpu, what + " values");
      // Backward from the same indices: the gradient of overlapping windows sums (in a different
      // order on each backend, hence the tolerance).
      Tensor grad_out = random_cpu({s.c, s.oh, s.ow}, dt);
      Tensor grad_out_gpu = to_gpu(grad_out);
      Tensor gin_cpu = native::empty({s.c, s.h, s.w}, dt, kCPU), gin_gpu = native::empty({s.c, s.h, s.w}, dt, gpu());
      backend(kCPU).max_pool2d_backward(g, grad_out.data_ptr(), static_cast<const int64_t*>(idx_cpu.data_ptr()),
                                        gin_cpu.data_ptr());
      backend(gpu()).max_pool2d_backward(g, grad_out_gpu.data_ptr(), static_cast<const int64_t*>(idx_gpu.data_ptr()),
                                         gin_gpu.data_ptr());
      check_close(gin_gpu, gin_cpu, 1e-5, 1e-6, what + " backward");
    }
  }
}
