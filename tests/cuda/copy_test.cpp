// Copies and casts (within the GPU, CPU<->GPU, GPU<->GPU), fill and arange versus the CPU.
#include <cstring>

#include "cuda_test_util.h"
#include "wick/core/error.h"
#include "wick/cuda/memory.h"
#include "wick/cuda/stream.h"

using namespace wick;
using namespace wick::cuda_test;

namespace {
const std::vector<DType> kAllTypes = {kFloat32, kFloat64, kInt64, kBool};
}

TEST_CASE("round trips CPU -> CUDA -> CPU are exact for every dtype and size", "[cuda][copy]") {
  for (DType dt : kAllTypes) {
    for (const auto& shape : awkward_shapes()) {
      Tensor x = random_cpu(shape, dt);
      check_equal(to_cpu(to_gpu(x)), x, fmt::format("{} {}", dt, shape_str(shape)));
    }
    Tensor empty = native::empty({0, 3}, dt, kCPU);
    CHECK(to_cpu(to_gpu(empty)).numel() == 0);
  }
}

TEST_CASE("casts between every pair of dtypes match the CPU", "[cuda][copy]") {
  for (DType from : kAllTypes) {
    Tensor x = random_cpu({33, 65}, from);
    if (is_floating(from)) x = native::binary(BinaryOp::Mul, x, Scalar(3.0));  // values beyond +-1
    for (DType to : kAllTypes) {
      const std::string what = fmt::format("{} -> {}", from, to);
      check_equal(native::to(to_gpu(x), gpu(), to), native::to(x, kCPU, to), what);
      check_equal(native::to(noncontiguous_gpu(x), gpu(), to), native::to(x, kCPU, to), what + " non-contiguous");
      // Across device types with conversion, into a non-contiguous destination.
      Tensor dst = native::transpose(native::empty({65, 33}, to, gpu()), 0, 1);
      native::copy_(dst, x);
      check_equal(dst, native::to(x, kCPU, to), what + " CPU -> non-contiguous CUDA");
      Tensor back = native::transpose(native::empty({65, 33}, from, kCPU), 0, 1);
      native::copy_(back, native::to(to_gpu(x), gpu(), to));
      check_equal(back, native::to(native::to(x, kCPU, to), kCPU, from), what + " CUDA -> non-contiguous CPU");
    }
  }
}

TEST_CASE("copy_ broadcasts a CUDA source into a CUDA destination", "[cuda][copy]") {
  Tensor row = random_cpu({1, 129}, kFloat32);
  Tensor dst = native::empty({31, 129}, kFloat32, gpu());
  native::copy_(dst, to_gpu(row));
  check_equal(dst, native::contiguous(native::expand(row, {31, 129})));
}

TEST_CASE("fill and full match the CPU", "[cuda][copy]") {
  for (DType dt : kAllTypes) {
    for (const auto& shape : awkward_shapes()) {
      check_equal(native::full(shape, Scalar(3), dt, gpu()), native::full(shape, Scalar(3), dt, kCPU));
    }
    Tensor g = native::zeros({40, 60}, dt, gpu());
    Tensor view = native::slice(native::transpose(g, 0, 1), 0, 3, 50, 3);
    native::fill_(view, Scalar(1));
    Tensor c = native::zeros({40, 60}, dt, kCPU);
    native::fill_(native::slice(native::transpose(c, 0, 1), 0, 3, 50, 3), Scalar(1));
    check_equal(g, c, fmt::format("strided fill_ {}", dt));
  }
}

TEST_CASE("arange and linspace match the CPU exactly", "[cuda][copy]") {
  for (DType dt : {kFloat32, kFloat64, kInt64}) {
    check_equal(native::arange(0, 100003, 1, dt, gpu()), native::arange(0, 100003, 1, dt, kCPU));
  }
  for (DType dt : {kFloat32, kFloat64}) {
    check_equal(native::arange(-3.5, 1000.0, 0.37, dt, gpu()), native::arange(-3.5, 1000.0, 0.37, dt, kCPU));
    check_equal(native::linspace(-1.0, 7.0, 1001, dt, gpu()), native::linspace(-1.0, 7.0, 1001, dt, kCPU));
  }
}

TEST_CASE("asynchronous copies through pinned memory", "[cuda][copy]") {
  const int64_t n = 1 << 20;
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000) * 0.5f;
  Tensor dst = native::empty({n}, kFloat32, gpu());
  cuda::Stream s = cuda::get_stream_from_pool(0);
  {
    cuda::StreamGuard guard(s);
    cuda::copy_to_device_async(dst.data_ptr(), host.data(), n * sizeof(float), s);
  }
  // The source was staged: overwriting it now must not change what arrives.
  std::fill(host.begin(), host.end(), -1.0f);
  cuda::PinnedBuffer back(n * sizeof(float));
  CHECK(cuda::is_pinned(back.data()));
  CHECK_FALSE(cuda::is_pinned(host.data()));
  cuda::copy_to_host_async(back.data(), dst.data_ptr(), n * sizeof(float), s);
  cuda::Event done;
  done.record(s);
  done.synchronize();
  CHECK(done.query());
  const float* b = static_cast<const float*>(back.data());
  bool ok = true;
  for (int64_t i = 0; i < n; ++i) ok = ok && b[i] == static_cast<float>(i % 1000) * 0.5f;
  CHECK(ok);
}

TEST_CASE("copy_peer_async within one device is a device copy", "[cuda][copy]") {
  Tensor x = to_gpu(random_cpu({4097}, kFloat64));
  Tensor y = native::empty({4097}, kFloat64, gpu());
  cuda::copy_peer_async(y.data_ptr(), 0, x.data_ptr(), 0, x.nbytes());
  check_equal(y, x);
}
