// The caching allocator: statistics, reuse, stream-aware reuse, record_stream, empty_cache and
// the out-of-memory error.
#include "cuda_test_util.h"
#include "wick/core/error.h"
#include "wick/cuda/memory.h"
#include "wick/cuda/stream.h"

using namespace wick;
using namespace wick::cuda_test;
using Catch::Matchers::Contains;

TEST_CASE("statistics count live tensors and the cache", "[cuda][allocator]") {
  cuda::synchronize(0);
  cuda::empty_cache();
  const MemoryStats before = cuda::memory_stats(0);
  CHECK(before.reserved >= before.in_use);
  {
    Tensor t = native::empty({1000}, kFloat32, gpu());
    const MemoryStats during = memory_stats(gpu());  // core's API reaches the same numbers
    CHECK(during.in_use == before.in_use + 4000);
    CHECK(during.allocations == before.allocations + 1);
    CHECK(during.total_allocations == before.total_allocations + 1);
    CHECK(during.peak >= during.in_use);
    CHECK(during.reserved >= during.in_use);
  }
  const MemoryStats after = cuda::memory_stats(0);
  CHECK(after.in_use == before.in_use);
  CHECK(after.reserved > before.reserved);  // the block stays cached
  cuda::empty_cache();
  CHECK(cuda::memory_stats(0).reserved == before.reserved);
  cuda::reset_peak_memory_stats(0);
  CHECK(cuda::memory_stats(0).peak == cuda::memory_stats(0).in_use);
}

TEST_CASE("a freed block is reused by the same stream at once", "[cuda][allocator]") {
  void* first = nullptr;
  {
    Tensor t = native::empty({1 << 18}, kFloat32, gpu());
    first = t.data_ptr();
  }
  Tensor u = native::empty({1 << 18}, kFloat32, gpu());
  CHECK(u.data_ptr() == first);
}

TEST_CASE("a block freed on a busy stream is not handed to another stream", "[cuda][allocator]") {
  // Segments belong to the stream they were reserved on (Note [Caching allocator]): memory freed
  // on s1 is reused by s1 at once (stream order makes that safe) and never by s2.
  cuda::Stream s1 = cuda::get_stream_from_pool(0), s2 = cuda::get_stream_from_pool(0);
  REQUIRE(s1 != s2);
  const int64_t n = (1 << 20) + 12345;  // 4 MiB and more: the large pool
  void* freed = nullptr;
  {
    cuda::StreamGuard g(s1);
    Tensor t = native::empty({n}, kFloat32, gpu());
    freed = t.data_ptr();
    cuda::busy_wait(s1, 300000);  // s1 is busy (as if still using t) for 0.3 s
  }
  {
    cuda::StreamGuard g(s2);
    Tensor t2 = native::empty({n}, kFloat32, gpu());
    CHECK(t2.data_ptr() != freed);
  }
  {
    cuda::StreamGuard g(s1);
    Tensor t3 = native::empty({n}, kFloat32, gpu());
    CHECK(t3.data_ptr() == freed);
  }
  s1.synchronize();
  {
    cuda::StreamGuard g(s2);
    Tensor t4 = native::empty({n}, kFloat32, gpu());
    CHECK(t4.data_ptr() != freed);
  }
}

TEST_CASE("record_stream delays reuse until the recorded stream passed the free", "[cuda][allocator]") {
  cuda::Stream side = cuda::get_stream_from_pool(0);
  const int64_t n = (1 << 20) + 54321;
  void* freed = nullptr;
  {
    Tensor t = native::empty({n}, kFloat32, gpu());
    freed = t.data_ptr();
    cuda::busy_wait(side, 300000);
    cuda::record_stream(t, side);
  }
  {
    Tensor t2 = native::empty({n}, kFloat32, gpu());  // same (default) stream, but `side` is busy
    CHECK(t2.data_ptr() != freed);
  }
  side.synchronize();
  Tensor t3 = native::empty({n}, kFloat32, gpu());
  Tensor t4 = native::empty({n}, kFloat32, gpu());
  CHECK((t3.data_ptr() == freed || t4.data_ptr() == freed));
}

TEST_CASE("running out of memory raises an error that says how much was asked and is in use", "[cuda][allocator]") {
  Tensor keep = native::empty({1 << 20}, kFloat32, gpu());
  const int64_t huge = int64_t{1} << 48;  // 1 PiB of float32
  try {
    Tensor t = native::empty({huge}, kFloat32, gpu());
    FAIL("allocating 1 PiB succeeded");
  } catch (const Error& e) {
    CHECK(dynamic_cast<const OutOfMemoryError*>(&e) != nullptr);  // a BackendError too
    const std::string msg = e.what();
    CHECK_THAT(msg, Contains("out of memory") && Contains("cuda:0"));
    CHECK_THAT(msg, Contains(std::to_string(huge * 4)));
    CHECK_THAT(msg, Contains("tensors hold"));
  }
  // The allocator still works afterwards.
  Tensor after = native::ones({1000}, kFloat32, gpu());
  CHECK(native::sum(after, {}, false).item<float>() == 1000.0f);
}
