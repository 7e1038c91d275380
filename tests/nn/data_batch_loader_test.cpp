// wick::data: the batch loader (order, shuffling by seed and epoch, batch counts, epochs that
// outlive their loader). The IDX reader: data_test.cpp.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/nn/data/data.h"

using namespace wick;
using namespace wick::data;

TEST_CASE("data: BatchLoader without shuffle gives views in order", "[data]") {
  Tensor x = wick::arange(0, 10, 1, kInt64).to(kFloat32).reshape({10, 1});
  Tensor y = wick::arange(0, 10, 1, kInt64);
  BatchLoader l(x, y, {.batch_size = 4});
  CHECK(l.size() == 3);
  std::vector<int64_t> sizes, seen;
  for (const auto& b : l.epoch(0)) {
    sizes.push_back(b.inputs.size(0));
    auto t = b.targets.to_vector<int64_t>();
    seen.insert(seen.end(), t.begin(), t.end());
    CHECK(b.inputs.to_vector<float>() == b.targets.to(kFloat32).to_vector<float>());
  }
  CHECK(sizes == std::vector<int64_t>{4, 4, 2});
  CHECK(seen == y.to_vector<int64_t>());
  // Unshuffled batches are views of the dataset, not copies.
  Batch b1 = l.epoch(0).batch(1);
  CHECK(b1.inputs.data_ptr() == static_cast<char*>(x.data_ptr()) + 4 * sizeof(float));

  BatchLoader d(x, y, {.batch_size = 4, .drop_last = true});
  CHECK(d.size() == 2);
  int n = 0;
  for (const auto& b : d.epoch(3)) n += static_cast<int>(b.inputs.size(0));
  CHECK(n == 8);
  CHECK_THROWS_WITH(BatchLoader(x, y.narrow(0, 0, 9), {}), Catch::Contains("10 samples but targets have 9"));
  CHECK_THROWS_WITH(BatchLoader(x, y, {.batch_size = 0}), Catch::Contains("batch_size"));
}

TEST_CASE("data: BatchLoader shuffles by (seed, epoch) and visits every sample once", "[data]") {
  const int64_t N = 103;
  Tensor x = wick::arange(0, N, 1, kInt64).to(kFloat64).reshape({N, 1}) * 2.0;
  Tensor y = wick::arange(0, N, 1, kInt64);
  BatchLoader l(x, y, {.batch_size = 16, .shuffle = true, .seed = 42});
  CHECK(l.size() == 7);
  std::vector<int64_t> first;
  for (const auto& b : l.epoch(0)) {
    auto t = b.targets.to_vector<int64_t>();
    auto in = b.inputs.to_vector<double>();
    for (size_t i = 0; i < t.size(); ++i) CHECK(in[i] == 2.0 * static_cast<double>(t[i]));  // rows stay paired
    first.insert(first.end(), t.begin(), t.end());
  }
  CHECK(first.size() == static_cast<size_t>(N));
  CHECK(std::set<int64_t>(first.begin(), first.end()).size() == static_cast<size_t>(N));
  CHECK(first != y.to_vector<int64_t>());
  CHECK(l.order(0) == first);
  CHECK(l.order(0) == BatchLoader(x, y, {.batch_size = 5, .shuffle = true, .seed = 42}).order(0));  // resumable
  CHECK(l.order(1) != l.order(0));
  CHECK(BatchLoader(x, y, {.batch_size = 16, .shuffle = true, .seed = 43}).order(0) != l.order(0));
  // drop_last with shuffle: 6 full batches.
  BatchLoader d(x, y, {.batch_size = 16, .shuffle = true, .seed = 42, .drop_last = true});
  int64_t count = 0;
  for (const auto& b : d.epoch(0)) {
    CHECK(b.inputs.size(0) == 16);
    ++count;
  }
  CHECK(count == 6);
}

TEST_CASE("data: BatchLoader counts batches without overflow for any batch_size", "[data]") {
  Tensor x = wick::arange(0, 10, 1, kInt64).to(kFloat32).reshape({10, 1});
  Tensor y = wick::arange(0, 10, 1, kInt64);
  const int64_t max = std::numeric_limits<int64_t>::max();
  // PyTorch: len(DataLoader(range(10), batch_size=sys.maxsize)) == 1, and 0 with drop_last.
  for (const int64_t b : {int64_t{10}, int64_t{11}, max - 7, max}) {
    INFO("batch_size " << b);
    BatchLoader all(x, y, {.batch_size = b});
    CHECK(all.size() == 1);
    std::vector<int64_t> seen;
    for (const auto& batch : all.epoch(0)) {
      auto t = batch.targets.to_vector<int64_t>();
      seen.insert(seen.end(), t.begin(), t.end());
    }
    CHECK(seen == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    BatchLoader shuffled(x, y, {.batch_size = b, .shuffle = true, .seed = 3});
    REQUIRE(shuffled.size() == 1);
    CHECK(shuffled.epoch(0).batch(0).inputs.size(0) == 10);
    BatchLoader dropped(x, y, {.batch_size = b, .drop_last = true});
    CHECK(dropped.size() == (b == 10 ? 1 : 0));
    int64_t batches = 0;
    for (const auto& batch : dropped.epoch(0)) batches += batch.inputs.size(0) == 10;
    CHECK(batches == dropped.size());
  }
  CHECK(BatchLoader(x, y, {.batch_size = 3}).size() == 4);  // 3, 3, 3, 1
  CHECK(BatchLoader(x, y, {.batch_size = 3, .drop_last = true}).size() == 3);
}

TEST_CASE("data: an epoch and its iterators outlive the BatchLoader that made them", "[data]") {
  Tensor x = wick::arange(0, 10, 1, kInt64).to(kFloat64).reshape({10, 1});
  Tensor y = wick::arange(0, 10, 1, kInt64);
  // The loader is a temporary, destroyed before the loop body runs (C++20 range-for).
  std::vector<int64_t> sizes, seen;
  for (const auto& b : BatchLoader(x, y, {.batch_size = 4, .shuffle = true, .seed = 9}).epoch(0)) {
    sizes.push_back(b.inputs.size(0));
    auto t = b.targets.to_vector<int64_t>();
    auto in = b.inputs.to_vector<double>();
    for (size_t i = 0; i < t.size(); ++i) CHECK(in[i] == static_cast<double>(t[i]));  // rows stay paired
    seen.insert(seen.end(), t.begin(), t.end());
  }
  CHECK(sizes == std::vector<int64_t>{4, 4, 2});
  CHECK(std::set<int64_t>(seen.begin(), seen.end()).size() == 10);
  // An iterator kept after its epoch (and loader) are gone.
  std::optional<BatchLoader> loader(std::in_place, x, y, BatchOptions{.batch_size = 3});
  auto it = loader->epoch(0).begin();
  loader.reset();
  ++it;
  CHECK(it->targets.to_vector<int64_t>() == std::vector<int64_t>{3, 4, 5});
}
