// Device queries, the device guard, streams, events and error messages.
#include <thread>

#include "cuda_test_util.h"
#include "wick/core/backend.h"
#include "wick/core/error.h"
#include "wick/cuda/stream.h"

using namespace wick;
using namespace wick::cuda_test;
using Catch::Matchers::Contains;

TEST_CASE("device_count and properties", "[cuda][runtime]") {
  REQUIRE(cuda::device_count() >= 1);
  CHECK(cuda::is_available());
  CHECK(cuda::unavailable_reason().empty());
  CHECK(backend(DeviceType::CUDA).device_count() == cuda::device_count());
  for (int d = 0; d < cuda::device_count(); ++d) {
    const auto& p = cuda::get_device_properties(d);
    CHECK_FALSE(p.name.empty());
    CHECK(p.total_memory > (int64_t{1} << 28));
    CHECK(p.multi_processor_count > 0);
    CHECK(p.major >= 5);
    CHECK(p.warp_size == 32);
    const auto info = cuda::mem_get_info(d);
    CHECK(info.total == p.total_memory);
    CHECK(info.free > 0);
  }
}

TEST_CASE("bad device indices raise a clear error", "[cuda][runtime]") {
  const int n = cuda::device_count();
  CHECK_THROWS_WITH(cuda::check_device_index(n), Contains("is not available") && Contains("CUDA device"));
  CHECK_THROWS_WITH(cuda::get_device_properties(n + 3), Contains(fmt::format("cuda:{}", n + 3)));
  CHECK_THROWS_WITH(native::empty({4}, kFloat32, Device(DeviceType::CUDA, n)), Contains("CUDA"));
  CHECK_THROWS_AS(cuda::set_device(-1), Error);
  // A device that is not there is DeviceUnavailable, not a driver failure (Note [Typed errors]).
  CHECK_THROWS_AS(cuda::check_device_index(n), DeviceUnavailable);
  CHECK_THROWS_AS(native::empty({4}, kFloat32, Device(DeviceType::CUDA, n)), DeviceUnavailable);
  CHECK_THROWS_AS(cuda::set_device(-1), DeviceUnavailable);
  CHECK_NOTHROW(cuda::is_available());
}

TEST_CASE("device guards restore the previous device", "[cuda][runtime]") {
  const int last = cuda::device_count() - 1;
  cuda::set_device(0);
  {
    cuda::CUDAGuard g(last);
    CHECK(cuda::current_device() == last);
    {
      DeviceGuard core_guard(gpu(0));
      CHECK(cuda::current_device() == 0);
      CHECK(backend(DeviceType::CUDA).current_device() == gpu(0));
    }
    CHECK(cuda::current_device() == last);
  }
  CHECK(cuda::current_device() == 0);
}

TEST_CASE("each thread has its own current stream, StreamGuard restores it", "[cuda][runtime]") {
  CHECK(cuda::get_current_stream(0).is_default());
  cuda::Stream s = cuda::get_stream_from_pool(0);
  CHECK_FALSE(s.is_default());
  CHECK(s.device() == 0);
  {
    cuda::StreamGuard g(s);
    CHECK(cuda::get_current_stream(0) == s);
    bool other_sees_default = false;
    std::thread other([&] { other_sees_default = cuda::get_current_stream(0).is_default(); });
    other.join();
    CHECK(other_sees_default);
    // Work issued under the guard goes to `s` and gives the right answer.
    Tensor x = random_cpu({100003}, kFloat32);
    Tensor y = native::binary(BinaryOp::Mul, to_gpu(x), Scalar(3.0));
    s.synchronize();
    check_close(y, native::binary(BinaryOp::Mul, x, Scalar(3.0)));
  }
  CHECK(cuda::get_current_stream(0).is_default());
}

TEST_CASE("events order streams and time work", "[cuda][runtime]") {
  cuda::Stream a = cuda::get_stream_from_pool(0), b = cuda::get_stream_from_pool(0);
  REQUIRE(a != b);
  cuda::Event start(/*timing=*/true), stop(/*timing=*/true);
  // Load the fill kernel first: with lazy module loading, its first launch may wait for the
  // device, and the busy kernel would be over before b.query() is asked.
  (void)native::zeros({1000}, kFloat32, gpu());
  // The tensor that b fills is allocated before the busy kernel starts: a fresh cudaMalloc may
  // synchronize the device, which would end the wait before b.query() is asked.
  Tensor queued;
  {
    cuda::StreamGuard on_b(b);
    queued = native::empty({1000}, kFloat32, gpu());
  }
  cuda::synchronize(0);
  start.record(a);
  cuda::busy_wait(a, 300000);  // 0.3 s: far longer than any launch takes to be queued
  stop.record(a);
  stop.block(b);  // b now waits for a's busy kernel
  {
    cuda::StreamGuard on_b(b);
    native::fill_(queued, Scalar(0.0));  // queued behind the wait
    CHECK_FALSE(b.query());
  }
  stop.synchronize();
  CHECK(stop.query());
  CHECK(stop.elapsed_ms(stop) == 0.0f);
  CHECK(start.elapsed_ms(stop) >= 250.0f);
  b.synchronize();
  CHECK(b.query());
  cuda::Event untimed;
  untimed.record(a);
  CHECK_THROWS_WITH(untimed.elapsed_ms(stop), Contains("timing"));
  CHECK_THROWS_AS(untimed.elapsed_ms(stop), StateError);
  cuda::synchronize(0);
  backend(DeviceType::CUDA).synchronize(gpu(0));
}

TEST_CASE("CUDA tensors print and convert like CPU tensors", "[cuda][runtime]") {
  Tensor x = native::arange(0, 6, 1, kFloat32, gpu());
  CHECK_THAT(x.to_string(), Contains("cuda:0"));
  CHECK(native::select(x, 0, 4).item<float>() == 4.0f);
  CHECK(x.to_vector<float>() == std::vector<float>({0, 1, 2, 3, 4, 5}));
}
