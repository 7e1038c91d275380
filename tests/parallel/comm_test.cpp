// comm on CPU devices: ports of PyTorch's TestCudaComm (test_cuda_multigpu.py: test_broadcast,
// test_broadcast_coalesced and its _dense_only and _empty_tensors forms, test_reduce_add,
// test_reduce_add_coalesced, test_scatter and test_gather with their dim forms), plus the
// bucketing rule. The communicator registry: comm_communicator_test.cpp.
#include "wick/parallel/comm.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <limits>

#include "parallel/parallel_test_util.h"
#include "wick/parallel/communicator.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;

namespace {

// Twelve dense tensors mixing dtypes, as _test_broadcast_coalesced (sparse ones left out: wick
// has no sparse tensors).
std::vector<Tensor> mixed_tensors(Device d) {
  TensorOptions o = TensorOptions().device(d);
  return {
      randn({2, 5}, o.dtype(kFloat64)), randint(0, 10, {5}, o.dtype(kInt64)),      randn({10}, o.dtype(kFloat32)),
      randn({3, 3}, o.dtype(kFloat64)), randint(0, 10, {7}, o.dtype(kInt64)),      randn({4}, o.dtype(kFloat32)),
      randn({5}, o.dtype(kFloat64)),    randint(0, 2, {9}, o.dtype(kInt64)).gt(0), randn({10, 2}, o.dtype(kFloat32)),
      randn({1}, o.dtype(kFloat64)),    randint(0, 10, {5}, o.dtype(kInt64)),      randn({6}, o.dtype(kFloat32)),
  };
}

}  // namespace

TEST_CASE("comm::broadcast: one result per device, the source's own entry is the source itself") {
  for (Device src : {cpu(0), cpu(2)}) {
    Tensor input = randn({5, 5}, TensorOptions(kFloat64).device(src));
    auto results = comm::broadcast(input, {cpu(0), cpu(1)});
    REQUIRE(results.size() == 2);
    for (int i = 0; i < 2; ++i) {
      CHECK(results[i].device() == cpu(i));
      CHECK_VALUES_EQUAL(results[i], input);
      CHECK((results[i].data_ptr() == input.data_ptr()) == (input.device() == cpu(i)));
    }
    if (src == cpu(0)) CHECK(results[0].is_same(input));
  }
}

TEST_CASE("comm::broadcast_out fills the given tensors and checks their shapes") {
  Tensor input = randn({5, 5}, kFloat64);
  std::vector<Tensor> outs{empty_like(input).to(cpu(0)), zeros({5, 5}, TensorOptions(kFloat64).device(cpu(1)))};
  auto results = comm::broadcast_out(input, outs);
  for (size_t i = 0; i < outs.size(); ++i) {
    CHECK(results[i].is_same(outs[i]));
    CHECK_VALUES_EQUAL(outs[i], input);
  }
  // the source itself among the outputs
  std::vector<Tensor> with_self{input, zeros({5, 5}, TensorOptions(kFloat64).device(cpu(1)))};
  comm::broadcast_out(input, with_self);
  CHECK_VALUES_EQUAL(with_self[1], input);
  CHECK_THROWS_WITH(
      comm::broadcast_out(input, {outs[0], zeros({4}, TensorOptions(kFloat64).device(cpu(1)))}),
      Catch::Contains("Expected all output tensors to have same shape as the source") && Catch::Contains("at index 1"));
  CHECK_THROWS_WITH(comm::broadcast(input, {}), Catch::Contains("Expected at least one device"));
}

TEST_CASE("comm::broadcast_coalesced equals per-tensor broadcasts, keeps inputs on devices[0]") {
  std::vector<Tensor> tensors = mixed_tensors(cpu(0));
  const size_t buffer_size = 5 * 8 * 5 / 2;  // 100 bytes: many buckets, as PyTorch's test
  auto out = comm::broadcast_coalesced(tensors, {cpu(0), cpu(1)}, buffer_size);
  REQUIRE(out.size() == 2);
  REQUIRE(out[1].size() == tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    CHECK(out[0][i].is_same(tensors[i]));  // assertIs
    auto single = comm::broadcast(tensors[i], {cpu(0), cpu(1)});
    CHECK(out[1][i].device() == cpu(1));
    CHECK(out[1][i].dtype() == tensors[i].dtype());
    CHECK(out[1][i].is_contiguous());
    CHECK_VALUES_EQUAL(out[1][i], single[1]);
    CHECK_VALUES_EQUAL(out[1][i], tensors[i]);
  }
  // Each output has its own version counter: zero_ bumps it by one and no sibling moves.
  std::vector<uint32_t> versions;
  for (auto& t : out[1]) versions.push_back(t.version());
  for (size_t i = 0; i < out[1].size(); ++i) {
    Tensor& t = out[1][i];
    CHECK(t.version() == versions[i]);
    if (t.dtype() == kBool) continue;  // no zero_ on bool needed; the counter check is the same
    t.zero_();
    CHECK(t.version() == versions[i] + 1);
    for (size_t j = 0; j < out[1].size(); ++j)
      if (j != i) CHECK(out[1][j].version() == versions[j]);
    versions[i] = t.version();
  }
}

TEST_CASE("comm::broadcast_coalesced over three devices, dense only, default buffer") {
  std::vector<Tensor> tensors = mixed_tensors(cpu(1));
  auto out = comm::broadcast_coalesced(tensors, {cpu(1), cpu(2), cpu(3)});
  for (size_t d = 1; d < 3; ++d)
    for (size_t i = 0; i < tensors.size(); ++i) {
      CHECK(out[d][i].device() == cpu(static_cast<int>(d) + 1));
      CHECK_VALUES_EQUAL(out[d][i], tensors[i]);
    }
  // no two devices share storage
  CHECK(out[1][0].data_ptr() != out[2][0].data_ptr());
}

TEST_CASE("comm::broadcast_coalesced with empty tensors") {
  std::vector<Tensor> tensors{empty({0}, kBool), randn({5}, kFloat32), randn({5}, kFloat64), empty({2, 0}, kFloat64)};
  auto out = comm::broadcast_coalesced(tensors, {cpu(0), cpu(1)}, 256);
  for (size_t i = 0; i < tensors.size(); ++i) {
    CHECK(out[1][i].device() == cpu(1));
    CHECK(out[1][i].sizes() == tensors[i].sizes());
    CHECK_VALUES_EQUAL(out[1][i], tensors[i]);
  }
  CHECK(comm::broadcast_coalesced({}, {cpu(0), cpu(1)})[1].empty());
}

TEST_CASE("comm::broadcast_coalesced allocates one bucket per dtype per destination") {
  std::vector<Tensor> tensors;
  for (int i = 0; i < 10; ++i) tensors.push_back(randn({16}, i % 2 ? kFloat32 : kFloat64));
  const auto before = memory_stats(cpu(5)).total_allocations;
  auto out = comm::broadcast_coalesced(tensors, {cpu(0), cpu(5)});
  CHECK(memory_stats(cpu(5)).total_allocations - before == 2);  // float64 bucket + float32 bucket
  // ... and a tiny buffer gives one bucket per tensor
  const auto before2 = memory_stats(cpu(5)).total_allocations;
  auto out2 = comm::broadcast_coalesced(tensors, {cpu(0), cpu(5)}, 1);
  CHECK(memory_stats(cpu(5)).total_allocations - before2 == 10);
}

TEST_CASE("bucketing: never past buffer_size unless one tensor alone is larger") {
  // a (f32, 128 B), b (f64, 256 B), c (f32, 128 B), limit 256: {a, c} and {b}
  std::vector<Tensor> ts{empty({32}, kFloat32), empty({32}, kFloat64), empty({32}, kFloat32)};
  auto b = comm::bucket_indices(ts, 256);
  CHECK(b == std::vector<std::vector<size_t>>{{0, 2}, {1}});
  // limit 255: every tensor alone
  CHECK(comm::bucket_indices(ts, 255) == std::vector<std::vector<size_t>>{{0}, {2}, {1}});
  // an oversized tensor gets a bucket of its own, and the open bucket is closed first
  std::vector<Tensor> big{empty({4}, kFloat32), empty({1000}, kFloat32), empty({4}, kFloat32)};
  CHECK(comm::bucket_indices(big, 64) == std::vector<std::vector<size_t>>{{0}, {1}, {2}});
  for (const auto& bucket : comm::bucket_indices(mixed_tensors(cpu(0)), 100)) {
    size_t bytes = 0;
    for (size_t i : bucket) bytes += mixed_tensors(cpu(0))[i].nbytes();
    CHECK((bytes <= 100 || bucket.size() == 1));
  }
}

TEST_CASE("comm::broadcast_coalesced errors say what was expected") {
  Tensor a = randn({3}), b = randn({3}, TensorOptions().device(cpu(1)));
  CHECK_THROWS_WITH(
      comm::broadcast_coalesced({a, b}, {cpu(0), cpu(1)}),
      Catch::Contains("All tensors must be on devices[0] (cpu:0)") && Catch::Contains("tensor 1 is on cpu:1"));
  CHECK_THROWS_WITH(comm::broadcast_coalesced({a}, {}), Catch::Contains("Expected at least one device"));
  CHECK_THROWS_WITH(comm::broadcast_coalesced({a, Tensor()}, {cpu(0)}), Catch::Contains("tensor 1 is undefined"));
}

TEST_CASE("comm::reduce_add sums on the destination and leaves the inputs alone") {
  Tensor x = randn({5, 5}, kFloat64);
  Tensor y = randn({5, 5}, TensorOptions(kFloat64).device(cpu(1)));
  Tensor x0 = x.clone(), y0 = y.clone();
  Tensor r = comm::reduce_add({x, y}, cpu(0));
  CHECK(r.device() == cpu(0));
  CHECK_VALUES_EQUAL(r, x0 + y0.to(cpu(0)));
  CHECK_VALUES_EQUAL(x, x0);
  CHECK_VALUES_EQUAL(y, y0);
  CHECK(r.data_ptr() != x.data_ptr());
  Tensor r1 = comm::reduce_add({x, y}, cpu(1));
  CHECK(r1.device() == cpu(1));
  CHECK_VALUES_EQUAL(r1, r);
  CHECK_THROWS_WITH(comm::reduce_add({x, y}, cpu(3)),
                    Catch::Contains("destination to be on the same device as one of the tensors"));
  CHECK_THROWS_WITH(comm::reduce_add({x, randn({4}, TensorOptions(kFloat64).device(cpu(1)))}, cpu(0)),
                    Catch::Contains("input 1 has invalid size: got [4], but expected [5, 5]"));
  CHECK_THROWS_WITH(comm::reduce_add({}, cpu(0)), Catch::Contains("Expected at least one tensor"));
  // integer and bool sums
  Tensor i0 = tensor({1.0, 2.0}, kInt64), i1 = tensor({10.0, 20.0}, TensorOptions(kInt64).device(cpu(1)));
  CHECK_VALUES(comm::reduce_add({i0, i1}, cpu(0)), {11.0, 22.0});
  // A bool sum is a logical or (PyTorch's bool add).
  Tensor b0 = tensor({0.0, 1.0, 0.0, 1.0}, kBool),
         b1 = tensor({0.0, 0.0, 1.0, 1.0}, TensorOptions(kBool).device(cpu(1)));
  Tensor b = comm::reduce_add({b0, b1}, cpu(0));
  CHECK(b.dtype() == kBool);
  CHECK_VALUES(b, {0.0, 1.0, 1.0, 1.0});
}

TEST_CASE("comm::reduce_add_coalesced equals per-position reduce_add, own version counters") {
  std::vector<Tensor> tensors = mixed_tensors(cpu(0));
  std::vector<Tensor> on1;
  for (auto& t : tensors) on1.push_back(t.to(cpu(1)));
  for (size_t buffer : {size_t{100}, comm::kDefaultBufferSize}) {
    auto out = comm::reduce_add_coalesced({tensors, on1}, cpu(0), buffer);
    REQUIRE(out.size() == tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      Tensor expected = comm::reduce_add({tensors[i], on1[i]}, cpu(0));
      CHECK(out[i].device() == cpu(0));
      CHECK(out[i].dtype() == tensors[i].dtype());
      CHECK_VALUES_EQUAL(out[i], expected);
      if (tensors[i].dtype() != kBool) CHECK_VALUES_EQUAL(out[i], tensors[i] * 2.0);
    }
    std::vector<uint32_t> versions;
    for (auto& t : out) versions.push_back(t.version());
    out[2].zero_();
    CHECK(out[2].version() == versions[2] + 1);
    for (size_t j = 0; j < out.size(); ++j)
      if (j != 2) CHECK(out[j].version() == versions[j]);
  }
  CHECK_THROWS_WITH(comm::reduce_add_coalesced({tensors, {on1[0]}}, cpu(0)), Catch::Contains("list 1 holds 1"));
  CHECK_THROWS_WITH(comm::reduce_add_coalesced({tensors, on1}, cpu(2)),
                    Catch::Contains("destination to be the device of one of the lists"));
}

TEST_CASE("comm::scatter: slices on each device, a chunk on the source device is a view") {
  struct Case {
    std::vector<int64_t> shape;
    int64_t dim;
    std::vector<int64_t> chunk_sizes;
  };
  for (Device src : {cpu(0), cpu(1)}) {
    for (const Case& c : {Case{{4, 4}, 0, {}}, Case{{4, 4}, 1, {}}, Case{{4, 4}, -2, {}}, Case{{6, 4}, 0, {2, 4}}}) {
      Tensor input = randn(c.shape, TensorOptions(kFloat64).device(src));
      auto result = comm::scatter(input, {cpu(0), cpu(1)}, c.chunk_sizes, c.dim);
      REQUIRE(result.size() == 2);
      const int64_t dim = c.dim < 0 ? c.dim + input.dim() : c.dim;
      const int64_t first = c.chunk_sizes.empty() ? input.size(dim) / 2 : c.chunk_sizes[0];
      for (int i = 0; i < 2; ++i) {
        CHECK(result[i].device() == cpu(i));
        const int64_t start = i == 0 ? 0 : first;
        const int64_t len = i == 0 ? first : input.size(dim) - first;
        CHECK_VALUES_EQUAL(result[i], input.narrow(dim, start, len));
        if (cpu(i) == src) CHECK(result[i].data_ptr() == input.narrow(dim, start, len).data_ptr());
      }
    }
  }
}

TEST_CASE("comm::scatter gives fewer chunks than devices for a short batch") {
  Tensor x = randn({5, 3});
  CHECK(comm::scatter(x, {cpu(0), cpu(1), cpu(2), cpu(3)}).size() == 3);  // 2, 2, 1
  Tensor y = randn({2, 3});
  auto r = comm::scatter(y, {cpu(0), cpu(1), cpu(2), cpu(3)});
  REQUIRE(r.size() == 2);
  CHECK(r[1].device() == cpu(1));
}

TEST_CASE("comm::scatter_out and scatter errors") {
  Tensor input = randn({4, 4}, kFloat64);
  std::vector<Tensor> outs{empty({2, 4}, kFloat64), empty({2, 4}, TensorOptions(kFloat64).device(cpu(1)))};
  auto r = comm::scatter_out(input, outs, 0);
  CHECK(r[0].is_same(outs[0]));
  CHECK_VALUES_EQUAL(outs[0], input.narrow(0, 0, 2));
  CHECK_VALUES_EQUAL(outs[1], input.narrow(0, 2, 2));
  CHECK_THROWS_WITH(comm::scatter(input, {cpu(0), cpu(1)}, {2, 1, 1}),
                    Catch::Contains("Expected devices and chunk_sizes to be of same length"));
  CHECK_THROWS_WITH(comm::scatter(input, {}), Catch::Contains("Expected at least one device to scatter to"));
  CHECK_THROWS_WITH(comm::scatter(input, {cpu(0), cpu(1)}, {2, 1}), Catch::Contains("sum to 4"));
  CHECK_THROWS_WITH(comm::scatter_out(input, {}), Catch::Contains("Expected at least one output tensor to scatter to"));
  CHECK_THROWS_WITH(comm::scatter_out(input, {empty({2, 3}, kFloat64), outs[1]}),
                    Catch::Contains("Output tensor at index 0 has incorrect shape"));
  CHECK_THROWS_WITH(comm::scatter_out(input, {empty({3, 4}, kFloat64), outs[1]}),
                    Catch::Contains("Total size for output tensors along scatter dim 0 does not match"));
}

TEST_CASE("comm::gather: any destination, dims 0, 1 and -1") {
  for (int64_t dim : {0, 1, -1}) {
    Tensor x = randn({2, 5}, kFloat64);
    Tensor y = randn({2, 5}, TensorOptions(kFloat64).device(cpu(1)));
    for (Device dest : {cpu(0), cpu(1), cpu(2)}) {
      Tensor r = comm::gather({x, y}, dim, dest);
      const int64_t d = dim < 0 ? dim + 2 : dim;
      std::vector<int64_t> expected_size{2, 5};
      expected_size[static_cast<size_t>(d)] *= 2;
      CHECK(r.device() == dest);
      CHECK(r.sizes() == IntArrayRef(expected_size));
      CHECK_VALUES_EQUAL(r.narrow(d, 0, x.size(d)), x);
      CHECK_VALUES_EQUAL(r.narrow(d, x.size(d), y.size(d)), y);
      Tensor out = empty(expected_size, TensorOptions(kFloat64).device(dest));
      CHECK(comm::gather_out({x, y}, out, dim).is_same(out));
      CHECK_VALUES_EQUAL(out, r);
    }
  }
  Tensor x = randn({2, 5}), y = randn({2, 5}, TensorOptions().device(cpu(1)));
  CHECK_THROWS_WITH(comm::gather({}, 0, cpu(0)), Catch::Contains("Expected at least one tensor to gather from"));
  CHECK_THROWS_WITH(comm::gather({x, randn({2, 5, 1})}, 0, cpu(0)),
                    Catch::Contains("Expected all input tensors to have the same number of dimensions"));
  CHECK_THROWS_WITH(comm::gather({x, randn({2, 4})}, 0, cpu(0)),
                    Catch::Contains("Input tensor at index 1 has invalid shape"));
  CHECK_THROWS_WITH(comm::gather_out({x, y}, empty({3, 5}), 0), Catch::Contains("Expected out tensor to have shape"));
}

TEST_CASE("int64 sums across devices wrap as the CPU's add does") {
  // INT64_MAX + 1 wraps to INT64_MIN (hand-computed), as native add (Note [Integer overflow and
  // conversions]); it used to be signed-overflow UB in the host sum.
  const int64_t big = std::numeric_limits<int64_t>::max();
  const int64_t small = std::numeric_limits<int64_t>::min();
  const std::vector<int64_t> bigs{big, big, big};
  Tensor a = native::from_blob_copy(bigs.data(), {3}, kInt64, kCPU);
  Tensor b = ones({3}, TensorOptions().dtype(kInt64).device(cpu(1)));
  Tensor sum = comm::reduce_add({a, b}, cpu(0));
  CHECK(sum.to_vector<int64_t>() == std::vector<int64_t>{small, small, small});
  CHECK(sum.to_vector<int64_t>() == (a + b.to(cpu(0))).to_vector<int64_t>());
  auto sums = comm::reduce_add_coalesced({{a}, {b}}, cpu(0));
  CHECK(sums[0].to_vector<int64_t>() == std::vector<int64_t>{small, small, small});
}

TEST_CASE("comm::gather and scatter_out refuse sizes that sum past int64") {
  const int64_t big = std::numeric_limits<int64_t>::max();
  std::vector<Tensor> huge{empty({big, 0}), empty({big, 0}, TensorOptions().device(cpu(1)))};
  CHECK_THROWS_WITH(comm::gather(huge, 0, cpu(0)), Catch::Contains("gather") && Catch::Contains("sum past int64"));
  CHECK_THROWS_AS(comm::gather_out(huge, empty({0, 0}), 0), ValueError);
  std::vector<Tensor> outs{empty({big, 0}), empty({big, 0}, TensorOptions().device(cpu(1)))};
  CHECK_THROWS_WITH(comm::scatter_out(empty({4, 0}), outs, 0),
                    Catch::Contains("scatter_out") && Catch::Contains("past int64"));
}
