// wick::data's LibTorch-style API, without the loader: Example, TensorDataset, MNIST, map,
// the transforms (Normalize, Stack, Lambda) and the samplers. The loader: data_loader_test.cpp.
#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "support/devices.h"
#include "support/temp_dir.h"
#include "wick/autograd/functions.h"
#include "wick/core/generator.h"
#include "wick/nn/data/data.h"

using namespace wick;
using namespace wick::data;

namespace {

// Every index a sampler hands out in one epoch, batch by batch.
template <class S>
std::vector<size_t> drain(S& s, size_t batch_size) {
  std::vector<size_t> out;
  while (auto b = s.next(batch_size)) out.insert(out.end(), b->begin(), b->end());
  return out;
}

std::string idx_file(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::string out = {0, 0, 8, static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>(d >> s));
  out.append(data.begin(), data.end());
  return out;
}

void write_gz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
  gzclose(f);
}

// `n` 28x28 images whose pixel p of image i is (i * 31 + p) % 256.
std::vector<uint8_t> pixels(int n) {
  std::vector<uint8_t> v(static_cast<size_t>(n) * 28 * 28);
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<uint8_t>((k / 784 * 31 + k % 784) % 256);
  return v;
}

}  // namespace

TEST_CASE("data api: TensorDataset gives rows and refuses indices past its end", "[data]") {
  Tensor x = wick::arange(0, 20, 1, kInt64).reshape({10, 2});
  datasets::TensorDataset ds(x);
  CHECK(ds.size() == std::optional<size_t>(10));
  CHECK(ds.get(3).data.to_vector<int64_t>() == std::vector<int64_t>{6, 7});
  Tensor row = ds.get(9);  // a TensorExample converts to its Tensor
  CHECK(row.to_vector<int64_t>() == std::vector<int64_t>{18, 19});
  auto batch = ds.get_batch(std::vector<size_t>{4, 0});
  REQUIRE(batch.size() == 2);
  CHECK(batch[1].data.to_vector<int64_t>() == std::vector<int64_t>{0, 1});
  CHECK_THROWS_AS(ds.get(10), IndexError);
  CHECK_THROWS_WITH(ds.get(10), Catch::Contains("index 10") && Catch::Contains("10 examples"));
  CHECK_THROWS_AS(ds.get_batch(std::vector<size_t>{1, 12}), IndexError);
  CHECK_THROWS_AS(datasets::TensorDataset(Tensor()), ValueError);
  // From a list of tensors: their stack.
  datasets::TensorDataset listed(std::vector<Tensor>{x[0], x[1], x[2]});
  CHECK(listed.size() == std::optional<size_t>(3));
  CHECK(listed.get(2).data.to_vector<int64_t>() == std::vector<int64_t>{4, 5});
}

TEST_CASE("data api: Normalize by hand on every device", "[data]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // Channel 0: (1 - 0.5) / 0.5 = 1, (0 - 0.5) / 0.5 = -1; channel 1: (3 - 1) / 2 = 1, (5 - 1) / 2 = 2.
    Tensor x = wick::tensor({1.0, 0.0, 3.0, 5.0}, {2, 1, 2}, TensorOptions(kFloat32).device(dev));
    transforms::Normalize<> two({0.5, 1.0}, {0.5, 2.0});
    Example<> e = two.apply({x, wick::tensor({7.0}, TensorOptions(kInt64).device(dev))});
    CHECK(e.data.device() == dev);
    CHECK(e.data.dtype() == kFloat32);
    CHECK(e.data.sizes() == std::vector<int64_t>{2, 1, 2});
    CHECK(e.data.to(kCPU).to_vector<float>() == std::vector<float>{1.0f, -1.0f, 1.0f, 2.0f});
    CHECK(e.target.to(kCPU).to_vector<int64_t>() == std::vector<int64_t>{7});  // the target passes through
    // One mean and stddev for every channel, on a batch [N, C, H, W], in float64.
    Tensor b = wick::tensor({0.5, 1.0, 0.0, 0.75}, {2, 2, 1, 1}, TensorOptions(kFloat64).device(dev));
    Tensor nb = transforms::Normalize<>(0.5, 0.25)(b);
    CHECK(nb.dtype() == kFloat64);
    CHECK(nb.to(kCPU).to_vector<double>() == std::vector<double>{0.0, 2.0, -2.0, 1.0});
    // Mismatched channel counts, checked before computing.
    Tensor three = wick::zeros({3, 1, 2}, TensorOptions(kFloat32).device(dev));
    CHECK_THROWS_AS(two(three), ValueError);
    CHECK_THROWS_WITH(two(three), Catch::Contains("Normalize") && Catch::Contains("[3, 1, 2]") &&
                                      Catch::Contains("3 channels") && Catch::Contains("2 values"));
    CHECK_THROWS_AS(two(wick::zeros({2, 2}, TensorOptions(kFloat32).device(dev))), ValueError);
    CHECK_THROWS_AS(two(wick::zeros({2, 1, 2}, TensorOptions(kInt64).device(dev))), TypeError);
  }
  CHECK_THROWS_AS(transforms::Normalize<>({0.5, 0.5}, {0.5}), ValueError);
  CHECK_THROWS_WITH(transforms::Normalize<>({0.5, 0.5}, {0.5}), Catch::Contains("mean has 2 values and stddev has 1"));
  CHECK_THROWS_AS(transforms::Normalize<>(std::vector<double>{}, std::vector<double>{}), ValueError);
  CHECK_THROWS_AS(transforms::Normalize<>(0.5, 0.0), ValueError);
}

TEST_CASE("data api: Stack and Lambda through map", "[data]") {
  Tensor x = wick::arange(0, 20, 1, kInt64).reshape({10, 2});
  // Lambda doubles each row, then Stack makes one tensor of the batch.
  auto ds = datasets::TensorDataset(x)
                .map(transforms::Lambda<TensorExample>([](TensorExample e) { return TensorExample(e.data * 2); }))
                .map(transforms::Stack<TensorExample>());
  CHECK(ds.size() == std::optional<size_t>(10));
  TensorExample b = ds.get_batch(std::vector<size_t>{2, 0, 5});
  CHECK(b.data.sizes() == std::vector<int64_t>{3, 2});
  CHECK(b.data.to_vector<int64_t>() == std::vector<int64_t>{8, 10, 0, 2, 20, 22});
  // Stack<> stacks data and targets; TensorLambda maps the data only.
  std::vector<Example<>> examples;
  for (int64_t i = 0; i < 3; ++i) examples.push_back({x[i].to(kFloat32), wick::scalar_tensor(i * 10, kInt64)});
  transforms::TensorLambda<> negate([](Tensor t) { return -t; });
  Example<> s = transforms::Stack<>().apply_batch(negate.apply_batch(examples));
  CHECK(s.data.sizes() == std::vector<int64_t>{3, 2});
  CHECK(s.data.to_vector<float>() == std::vector<float>{-0.f, -1.f, -2.f, -3.f, -4.f, -5.f});
  CHECK(s.target.to_vector<int64_t>() == std::vector<int64_t>{0, 10, 20});
}

TEST_CASE("data api: SequentialSampler and RandomSampler", "[data]") {
  samplers::SequentialSampler seq(10);
  CHECK(*seq.next(3) == std::vector<size_t>{0, 1, 2});
  CHECK(*seq.next(3) == std::vector<size_t>{3, 4, 5});
  CHECK(*seq.next(3) == std::vector<size_t>{6, 7, 8});
  CHECK(*seq.next(3) == std::vector<size_t>{9});
  CHECK_FALSE(seq.next(3).has_value());
  seq.reset(4);
  CHECK(drain(seq, 3) == std::vector<size_t>{0, 1, 2, 3});
  CHECK_THROWS_AS(seq.next(0), ValueError);

  // Seeded from wick's generator: the same seed gives the same orders, epoch after epoch.
  std::vector<size_t> identity(50);
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = i;
  wick::manual_seed(123);
  samplers::RandomSampler a(50);
  const std::vector<size_t> first = drain(a, 7);
  a.reset();
  const std::vector<size_t> second = drain(a, 7);
  wick::manual_seed(123);
  samplers::RandomSampler b(50);
  CHECK(drain(b, 50) == first);
  b.reset();
  CHECK(drain(b, 3) == second);
  CHECK(first != identity);
  CHECK(second != first);
  for (const auto& order : {first, second}) CHECK(std::set<size_t>(order.begin(), order.end()).size() == 50);
  wick::manual_seed(124);
  samplers::RandomSampler c(50);
  CHECK(drain(c, 50) != first);
  CHECK_THROWS_AS(samplers::RandomSampler(-1), ValueError);
}

TEST_CASE("data api: distributed samplers split the dataset between 2 and 3 replicas", "[data]") {
  // By hand: 10 samples over 3 ranks, sequential. With duplicates each rank gets 4 and the last
  // wraps around; without, each gets 3 and sample 9 is left out.
  samplers::DistributedSequentialSampler last(10, 3, 2);
  CHECK(drain(last, 3) == std::vector<size_t>{8, 9, 0, 1});
  samplers::DistributedSequentialSampler no_dup(10, 3, 1, false);
  CHECK(drain(no_dup, 2) == std::vector<size_t>{3, 4, 5});
  no_dup.reset();
  CHECK(drain(no_dup, 5) == std::vector<size_t>{3, 4, 5});

  for (const size_t replicas : {size_t{2}, size_t{3}}) {
    for (const bool dup : {true, false}) {
      for (const bool random : {false, true}) {
        INFO(replicas << " replicas, allow_duplicates " << dup << (random ? ", random" : ", sequential"));
        const size_t local = dup ? (10 + replicas - 1) / replicas : 10 / replicas;
        std::vector<size_t> all;
        std::set<size_t> seen;
        for (size_t rank = 0; rank < replicas; ++rank) {
          std::vector<size_t> mine;
          if (random) {
            samplers::DistributedRandomSampler s(10, replicas, rank, dup);
            s.set_epoch(3);
            s.reset();
            mine = drain(s, 3);
          } else {
            samplers::DistributedSequentialSampler s(10, replicas, rank, dup);
            mine = drain(s, 3);
          }
          CHECK(mine.size() == local);
          all.insert(all.end(), mine.begin(), mine.end());
          for (size_t i : mine) CHECK(i < 10);
          seen.insert(mine.begin(), mine.end());
        }
        CHECK(all.size() == local * replicas);
        if (dup) {
          CHECK(seen.size() == 10);                                      // together they cover the dataset
          CHECK(all.size() - seen.size() == (replicas == 3 ? 2u : 0u));  // only the padding repeats
        } else {
          CHECK(seen.size() == all.size());  // disjoint
          CHECK(seen.size() == (replicas == 3 ? 9u : 10u));
        }
      }
    }
  }
  // Random shares depend only on the epoch, so every rank computes the same permutation.
  samplers::DistributedRandomSampler r0(10, 2, 0), again(10, 2, 0);
  const std::vector<size_t> epoch0 = drain(r0, 4);
  CHECK(drain(again, 1) == epoch0);
  r0.set_epoch(1);
  r0.reset();
  CHECK(drain(r0, 4) != epoch0);
  r0.set_epoch(0);
  r0.reset();
  CHECK(drain(r0, 4) == epoch0);
  CHECK_THROWS_AS(samplers::DistributedRandomSampler(10, 2, 2), ValueError);
  CHECK_THROWS_WITH(samplers::DistributedSequentialSampler(10, 3, 3),
                    Catch::Contains("rank 3") && Catch::Contains("3 replicas"));
  CHECK_THROWS_AS(samplers::DistributedSequentialSampler(10, 0, 0), ValueError);
}

TEST_CASE("data api: MNIST reads an IDX pair, gzip or plain, through the checked reader", "[data]") {
  wick::test::TempDir dir("wick-data-api");
  const std::vector<uint8_t> train = pixels(3), test = pixels(2);
  write_gz(dir.file("train-images-idx3-ubyte.gz"), idx_file({3, 28, 28}, train));
  write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx_file({3}, {7, 2, 1}));
  dir.write("t10k-images-idx3-ubyte", idx_file({2, 28, 28}, test));  // LibTorch's uncompressed names
  dir.write("t10k-labels-idx1-ubyte", idx_file({2}, {9, 4}));

  datasets::MNIST mnist(dir.path.string(), datasets::MNIST::Mode::kTrain);
  CHECK(mnist.is_train());
  CHECK(mnist.size() == std::optional<size_t>(3));
  Example<> e = mnist.get(1);
  CHECK(e.data.sizes() == std::vector<int64_t>{1, 28, 28});
  CHECK(e.data.dtype() == kFloat32);
  CHECK(e.target.dim() == 0);
  CHECK(e.target.item<int64_t>() == 2);
  const std::vector<float> img = e.data.to_vector<float>();
  for (size_t p : {size_t{0}, size_t{300}, size_t{783}}) CHECK(img[p] == Approx(train[784 + p] / 255.0).epsilon(1e-6));
  CHECK_THROWS_AS(mnist.get(3), IndexError);

  datasets::MNIST t(dir.path.string(), datasets::MNIST::Mode::kTest);
  CHECK_FALSE(t.is_train());
  CHECK(t.targets().to_vector<int64_t>() == std::vector<int64_t>{9, 4});
  CHECK(t.images().sizes() == std::vector<int64_t>{2, 1, 28, 28});

  // Normalized and stacked, as the LibTorch MNIST example does.
  auto ds = datasets::MNIST(dir.path.string()).map(transforms::Normalize<>(0.5, 0.25)).map(transforms::Stack<>());
  Example<> b = ds.get_batch(std::vector<size_t>{2, 0});
  CHECK(b.data.sizes() == std::vector<int64_t>{2, 1, 28, 28});
  CHECK(b.target.to_vector<int64_t>() == std::vector<int64_t>{1, 7});
  CHECK(b.data.to_vector<float>()[5] == Approx((train[2 * 784 + 5] / 255.0 - 0.5) / 0.25).epsilon(1e-5));

  // Hostile or missing files: the reader's typed errors.
  write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx_file({3}, {7, 2, 10}));
  CHECK_THROWS_AS(datasets::MNIST(dir.path.string()), FormatError);
  dir.write("t10k-images-idx3-ubyte", idx_file({2, 28, 28}, pixels(1)));  // truncated
  CHECK_THROWS_AS(datasets::MNIST(dir.path.string(), datasets::MNIST::Mode::kTest), FormatError);
  CHECK_THROWS_AS(datasets::MNIST(dir.file("missing")), IOError);
}

TEST_CASE("data: distributed samplers over fewer samples than replicas cycle through them", "[data]") {
  // 2 samples, 5 replicas, allow_duplicates: each rank gets one index, every one of them < 2 (the
  // padding cycles through the samples: 0, 1, 0, 1, 0 before the shuffle).
  for (const bool random : {false, true}) {
    INFO((random ? "random" : "sequential"));
    std::vector<size_t> all;
    for (size_t rank = 0; rank < 5; ++rank) {
      std::vector<size_t> mine;
      if (random) {
        samplers::DistributedRandomSampler s(2, 5, rank, true);
        s.set_epoch(1);
        s.reset();
        mine = drain(s, 4);
      } else {
        samplers::DistributedSequentialSampler s(2, 5, rank, true);
        mine = drain(s, 4);
      }
      REQUIRE(mine.size() == 1);
      CHECK(mine[0] < 2);
      all.push_back(mine[0]);
    }
    CHECK(std::count(all.begin(), all.end(), size_t{0}) == 3);
    CHECK(std::count(all.begin(), all.end(), size_t{1}) == 2);
  }
}
