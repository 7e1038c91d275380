// PyTorch's ComputeBucketAssignmentTest (test/distributed/test_c10d_common.py), ported: the
// same tensors and limits, the same expected buckets.
#include "wick/distributed/bucketing.h"

#include <wick/wick.h>

#include <catch2/catch.hpp>

using namespace wick;
using distributed::compute_bucket_assignment_by_size;
using Buckets = std::vector<std::vector<size_t>>;

namespace {
std::vector<Tensor> alternating(int64_t n) {  // float [50], double [25], float [50], ...
  std::vector<Tensor> t;
  for (int64_t i = 0; i < n; ++i) t.push_back(i % 2 == 0 ? empty({50}, kFloat32) : empty({25}, kFloat64));
  return t;
}
}  // namespace

TEST_CASE("bucket assignment: single limit, single dtype", "[bucketing]") {
  std::vector<Tensor> t = {empty({100}, kFloat32), empty({200}, kFloat32), empty({100}, kFloat32),
                           empty({50}, kFloat32)};
  CHECK(compute_bucket_assignment_by_size(t, {400}) == Buckets{{0}, {1}, {2}, {3}});
}

TEST_CASE("bucket assignment: single limit, multi dtype", "[bucketing]") {
  CHECK(compute_bucket_assignment_by_size(alternating(6), {400}) == Buckets{{0, 2}, {1, 3}, {4}, {5}});
}

TEST_CASE("bucket assignment: multi limit, single dtype", "[bucketing]") {
  std::vector<Tensor> t = {empty({10}, kFloat32), empty({10}, kFloat32), empty({10}, kFloat32), empty({10}, kFloat32)};
  CHECK(compute_bucket_assignment_by_size(t, {40, 80}) == Buckets{{0}, {1, 2}, {3}});
}

TEST_CASE("bucket assignment: multi limit, multi dtype", "[bucketing]") {
  CHECK(compute_bucket_assignment_by_size(alternating(6), {200, 400}) == Buckets{{0}, {1}, {2, 4}, {3, 5}});
}

TEST_CASE("bucket assignment: tensors on two devices never share a bucket", "[bucketing]") {
  std::vector<Tensor> t = {empty({10}, TensorOptions(kFloat32).device(Device("cpu:0"))),
                           empty({10}, TensorOptions(kFloat32).device(Device("cpu:1"))),
                           empty({10}, TensorOptions(kFloat32).device(Device("cpu:0")))};
  CHECK(compute_bucket_assignment_by_size(t, {1000}) == Buckets{{0, 2}, {1}});
}

TEST_CASE("bucket assignment: bad limits are a ValueError", "[bucketing]") {
  std::vector<Tensor> t = {empty({10}, kFloat32)};
  CHECK_THROWS_AS(compute_bucket_assignment_by_size(t, {}), ValueError);
  CHECK_THROWS_AS(compute_bucket_assignment_by_size(t, {0}), ValueError);
  CHECK_THROWS_AS(compute_bucket_assignment_by_size({Tensor()}, {10}), ValueError);
}
