// wick::data's make_data_loader: hand-counted batches, workers against no workers bit for bit,
// errors from worker threads, and loaders destroyed mid-epoch. The datasets, transforms and
// samplers: data_api_test.cpp.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/backend.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/error.h"
#include "wick/core/flush_denormal.h"
#include "wick/core/generator.h"
#include "wick/nn/data/data.h"

using namespace wick;
using namespace wick::data;

namespace {

// What a dataset's copies (one per worker) share: how many get() calls ran and are running.
struct Probe {
  std::atomic<int64_t> calls{0}, active{0};
};

// (input, target) pairs from the rows of x and y. get(i) waits delay_us * (i % 3) microseconds,
// so that workers finish out of order; size() may claim more rows than there are.
struct Pairs : datasets::Dataset<Pairs> {
  Pairs(Tensor x_, Tensor y_, int64_t delay = 0, std::shared_ptr<Probe> p = std::make_shared<Probe>(),
        size_t claimed_ = 0)
      : x(std::move(x_)), y(std::move(y_)), delay_us(delay), probe(std::move(p)), claimed(claimed_) {}

  Example<> get(size_t i) override {
    probe->active++;
    probe->calls++;
    struct Leave {
      Probe& p;
      ~Leave() { p.active--; }
    } leave{*probe};
    if (delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_us * static_cast<int64_t>(i % 3)));
    WICK_CHECK_INDEX(i < static_cast<size_t>(x.size(0)), "Pairs::get: index {} out of range", i);
    return {x[static_cast<int64_t>(i)], y[static_cast<int64_t>(i)]};
  }
  std::optional<size_t> size() const override { return claimed ? claimed : static_cast<size_t>(x.size(0)); }

  Tensor x, y;
  int64_t delay_us;
  std::shared_ptr<Probe> probe;
  size_t claimed;
};

struct Seen {
  std::vector<float> data;
  std::vector<int64_t> target;
};

// One epoch of a loader of Example<> batches.
std::vector<Seen> run_epoch(auto& loader) {
  std::vector<Seen> out;
  for (auto& b : loader) out.push_back({b.data.template to_vector<float>(), b.target.template to_vector<int64_t>()});
  return out;
}

bool same_bits(const std::vector<Seen>& a, const std::vector<Seen>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].target != b[i].target || a[i].data.size() != b[i].data.size() ||
        std::memcmp(a[i].data.data(), b[i].data.data(), a[i].data.size() * sizeof(float)) != 0)
      return false;
  return true;
}

// Row i: the settings get() ran under (grad mode, whether a result of a leaf requires grad,
// flush-denormal, the current CPU device's index) and a denormal float times 0.5 (0 when flushed).
struct Settings : datasets::Dataset<Settings> {
  Example<> get(size_t i) override {
    const Tensor leaf = wick::ones({1}, TensorOptions(kFloat32)).requires_grad_(true);
    const Tensor tiny = wick::full({1}, std::numeric_limits<float>::denorm_min() * 64, TensorOptions(kFloat32)) * 0.5;
    const std::vector<float> row = {GradMode::is_enabled() ? 1.f : 0.f, (leaf * 2.0).requires_grad() ? 1.f : 0.f,
                                    flush_denormal() ? 1.f : 0.f, static_cast<float>(current_cpu_device().index),
                                    tiny.item<float>()};
    return {wick::tensor(row, {5}, TensorOptions(kFloat32)),
            wick::tensor(std::vector<int64_t>{static_cast<int64_t>(i)}, {}, TensorOptions(kInt64))};
  }
  std::optional<size_t> size() const override { return 6; }
};

// A batch whose move throws the second time it is moved on a thread other than `home`: the
// worker's hand-over of its result, outside get_batch.
struct Fragile {
  std::thread::id home;
  int moves = 0;
  explicit Fragile(std::thread::id h) : home(h) {}
  Fragile(Fragile&& o) : home(o.home), moves(o.moves + 1) {
    if (moves >= 2 && std::this_thread::get_id() != home) throw std::runtime_error("Fragile: moved on a worker");
  }
  Fragile& operator=(Fragile&&) = default;
};

std::vector<int64_t> targets_of(const std::vector<Seen>& batches) {
  std::vector<int64_t> out;
  for (const Seen& s : batches) out.insert(out.end(), s.target.begin(), s.target.end());
  return out;
}

}  // namespace

TEST_CASE("data loader: 10 rows in batches of 3 with and without drop_last", "[data]") {
  Tensor x = wick::arange(0, 20, 1, kInt64).reshape({10, 2});
  for (const size_t workers : {size_t{0}, size_t{2}}) {
    for (const bool drop : {false, true}) {
      INFO(workers << " workers, drop_last " << drop);
      auto loader = make_data_loader<samplers::SequentialSampler>(
          datasets::TensorDataset(x).map(transforms::Stack<TensorExample>()),
          DataLoaderOptions().batch_size(3).drop_last(drop).workers(workers));
      // Rows 0-2, 3-5, 6-8, and row 9 alone unless dropped; the same in a second epoch.
      std::vector<std::vector<int64_t>> want = {{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}, {12, 13, 14, 15, 16, 17}};
      if (!drop) want.push_back({18, 19});
      for (int epoch = 0; epoch < 2; ++epoch) {
        std::vector<std::vector<int64_t>> got;
        for (auto& batch : *loader) got.push_back(batch.data.to_vector<int64_t>());
        CHECK(got == want);
      }
    }
  }
  // The sampler overload, and a batch size given alone (DataLoaderOptions converts from it).
  auto loader = make_data_loader(datasets::TensorDataset(x).map(transforms::Stack<TensorExample>()),
                                 samplers::SequentialSampler(10), 4);
  std::vector<int64_t> sizes;
  for (auto& batch : *loader) sizes.push_back(batch.data.size(0));
  CHECK(sizes == std::vector<int64_t>{4, 4, 2});
  CHECK(loader->options().batch_size() == 4);
  CHECK(loader->begin() != loader->end());
  CHECK(loader->end() == loader->end());

  CHECK_THROWS_AS(make_data_loader(datasets::TensorDataset(x), DataLoaderOptions().batch_size(0)), ValueError);
  CHECK_THROWS_WITH(make_data_loader(datasets::TensorDataset(x), DataLoaderOptions().batch_size(0)),
                    Catch::Contains("batch_size must be > 0"));
  CHECK_THROWS_AS(make_data_loader(datasets::TensorDataset(x), DataLoaderOptions().workers(2).max_jobs(0)), ValueError);
}

TEST_CASE("data loader: workers give the batches of no workers bit for bit", "[data]") {
  wick::manual_seed(5);
  const Tensor x = wick::randn({37, 1, 3, 3});
  const Tensor y = wick::arange(0, 37, 1, kInt64);
  auto make = [&](size_t workers, bool ordered) {
    return make_data_loader(Pairs(x, y, 300).map(transforms::Normalize<>(0.5, 2.0)).map(transforms::Stack<>()),
                            DataLoaderOptions().batch_size(5).workers(workers).enforce_ordering(ordered));
  };
  // A RandomSampler draws from wick's generator, so the same seed gives the same orders.
  wick::manual_seed(99);
  auto plain = make(0, true);
  const std::vector<Seen> a = run_epoch(*plain), a2 = run_epoch(*plain);
  wick::manual_seed(99);
  auto threaded = make(3, true);
  const std::vector<Seen> b = run_epoch(*threaded), b2 = run_epoch(*threaded);
  REQUIRE(a.size() == 8);  // 7 batches of 5 and one of 2
  CHECK(a.back().target.size() == 2);
  CHECK(same_bits(a, b));
  CHECK(same_bits(a2, b2));
  // Each epoch visits every sample once, in a new order; the contents are the normalized rows.
  std::vector<int64_t> order = targets_of(a), order2 = targets_of(a2);
  CHECK(order != order2);
  CHECK(std::set<int64_t>(order.begin(), order.end()).size() == 37);
  CHECK(std::set<int64_t>(order2.begin(), order2.end()).size() == 37);
  const std::vector<float> xs = x.to_vector<float>();
  for (size_t k = 0; k < 9; ++k) CHECK(a[1].data[9 + k] == Approx((xs[a[1].target[1] * 9 + k] - 0.5) / 2.0));

  // Without enforce_ordering the same batches come, in the order the workers finish them.
  wick::manual_seed(99);
  auto unordered = make(3, false);
  std::vector<Seen> c = run_epoch(*unordered), sorted_a = a;
  auto by_first = [](const Seen& l, const Seen& r) { return l.target[0] < r.target[0]; };
  std::sort(c.begin(), c.end(), by_first);
  std::sort(sorted_a.begin(), sorted_a.end(), by_first);
  CHECK(same_bits(c, sorted_a));
}

TEST_CASE("data loader: an error in get_batch reaches the loop with its type", "[data]") {
  Tensor x = wick::arange(0, 10, 1, kInt64).to(kFloat32).reshape({10, 1});
  Tensor y = wick::arange(0, 10, 1, kInt64);
  for (const size_t workers : {size_t{0}, size_t{2}}) {
    INFO(workers << " workers");
    // The dataset claims 12 rows: the third batch asks for rows 8 to 11.
    auto loader = make_data_loader<samplers::SequentialSampler>(
        Pairs(x, y, 0, std::make_shared<Probe>(), 12).map(transforms::Stack<>()),
        DataLoaderOptions().batch_size(4).workers(workers));
    for (int epoch = 0; epoch < 2; ++epoch) {
      int batches = 0;
      auto loop = [&] {
        for (auto& b : *loader) batches += b.data.size(0) == 4;
      };
      CHECK_THROWS_AS(loop(), IndexError);
      CHECK(batches == 2);
    }
  }
}

TEST_CASE("data loader: destroying a loader mid-epoch stops its workers", "[data]") {
  auto probe = std::make_shared<Probe>();
  Tensor x = wick::arange(0, 200, 1, kInt64).to(kFloat32).reshape({200, 1});
  Tensor y = wick::arange(0, 200, 1, kInt64);
  auto loader = make_data_loader<samplers::SequentialSampler>(Pairs(x, y, 1000, probe).map(transforms::Stack<>()),
                                                              DataLoaderOptions().batch_size(2).workers(4));
  auto it = loader->begin();
  CHECK(it->target.to_vector<int64_t>() == std::vector<int64_t>{0, 1});
  ++it;
  CHECK(it->target.to_vector<int64_t>() == std::vector<int64_t>{2, 3});
  loader.reset();  // workers are busy with the next requests; `it` is not used again
  CHECK(probe->active.load() == 0);
  const int64_t calls = probe->calls.load();
  CHECK(calls < 60);  // the rest of the epoch was not computed
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(probe->calls.load() == calls);

  // A loader that never ran an epoch.
  { auto idle = make_data_loader(Pairs(x, y), DataLoaderOptions().workers(3)); }
  // A loop left with `break`: the next begin() abandons that epoch and starts a whole new one.
  auto small = make_data_loader<samplers::SequentialSampler>(
      Pairs(x.narrow(0, 0, 10), y.narrow(0, 0, 10), 500).map(transforms::Stack<>()),
      DataLoaderOptions().batch_size(3).workers(2));
  for (auto& b : *small) {
    CHECK(b.target.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2});
    break;
  }
  std::vector<int64_t> seen;
  for (auto& b : *small) {
    auto t = b.target.to_vector<int64_t>();
    seen.insert(seen.end(), t.begin(), t.end());
  }
  CHECK(seen == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("data loader: two ranks' loaders share an epoch's samples", "[data]") {
  Tensor x = wick::arange(0, 10, 1, kInt64).to(kFloat32).reshape({10, 1});
  Tensor y = wick::arange(0, 10, 1, kInt64);
  std::vector<std::vector<int64_t>> per_rank;
  for (size_t rank = 0; rank < 2; ++rank) {
    auto loader =
        make_data_loader(Pairs(x, y).map(transforms::Stack<>()), samplers::DistributedRandomSampler(10, 2, rank),
                         DataLoaderOptions().batch_size(3).workers(1));
    loader->sampler().set_epoch(4);
    per_rank.push_back(targets_of(run_epoch(*loader)));
  }
  CHECK(per_rank[0].size() == 5);
  CHECK(per_rank[1].size() == 5);
  std::set<int64_t> all(per_rank[0].begin(), per_rank[0].end());
  all.insert(per_rank[1].begin(), per_rank[1].end());
  CHECK(all.size() == 10);
}

TEST_CASE("data loader: workers run under the loop thread's grad mode flush-denormal and CPU device", "[data]") {
  NoGradGuard no_grad;
  FlushDenormalScope flush(true);
  const bool flushes = flush_denormal();  // false where the CPU has no such mode
  DeviceGuard on_cpu1(Device("cpu:1"));
  std::vector<Seen> want;
  for (const size_t workers : {size_t{0}, size_t{2}}) {
    INFO(workers << " workers");
    auto loader = make_data_loader<samplers::SequentialSampler>(Settings().map(transforms::Stack<>()),
                                                                DataLoaderOptions().batch_size(2).workers(workers));
    const std::vector<Seen> got = run_epoch(*loader);
    REQUIRE(got.size() == 3);
    for (const Seen& b : got)
      for (size_t r = 0; r < 2; ++r) {
        CHECK(b.data[r * 5 + 0] == 0.f);  // grad mode off
        CHECK(b.data[r * 5 + 1] == 0.f);  // so no result requires grad
        CHECK(b.data[r * 5 + 2] == (flushes ? 1.f : 0.f));
        CHECK(b.data[r * 5 + 3] == 1.f);  // cpu:1
        CHECK((b.data[r * 5 + 4] == 0.f) == flushes);
      }
    if (workers == 0)
      want = got;
    else
      CHECK(same_bits(got, want));
  }
}

TEST_CASE("data loader: an error ends the epoch and the iterator is end()", "[data]") {
  Tensor x = wick::arange(0, 10, 1, kInt64).to(kFloat32).reshape({10, 1});
  Tensor y = wick::arange(0, 10, 1, kInt64);
  for (const size_t workers : {size_t{0}, size_t{3}}) {
    INFO(workers << " workers");
    auto probe = std::make_shared<Probe>();
    // Rows 8 to 11 fail (the dataset claims 16 rows); rows 12 to 15 would fail again.
    auto loader = make_data_loader<samplers::SequentialSampler>(Pairs(x, y, 0, probe, 16).map(transforms::Stack<>()),
                                                                DataLoaderOptions().batch_size(4).workers(workers));
    auto it = loader->begin();
    ++it;
    CHECK(it->target.to_vector<int64_t>() == std::vector<int64_t>{4, 5, 6, 7});
    CHECK_THROWS_AS(++it, IndexError);
    CHECK(it == loader->end());
    CHECK_THROWS_AS(++it, StateError);
    // A new epoch starts from the first batch and meets the error again.
    std::vector<int64_t> seen;
    auto again = [&] {
      for (auto& b : *loader) {
        auto t = b.target.to_vector<int64_t>();
        seen.insert(seen.end(), t.begin(), t.end());
      }
    };
    CHECK_THROWS_AS(again(), IndexError);
    CHECK(seen == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  }
}

TEST_CASE("data loader: too many workers is a ValueError", "[data]") {
  Tensor x = wick::zeros({4, 1});
  for (const size_t workers : {kMaxLoaderWorkers + 1, std::numeric_limits<size_t>::max()}) {
    CHECK_THROWS_AS(make_data_loader(datasets::TensorDataset(x), DataLoaderOptions().workers(workers)), ValueError);
    CHECK_THROWS_WITH(make_data_loader(datasets::TensorDataset(x), DataLoaderOptions().workers(workers)),
                      Catch::Contains("workers must be at most 1024"));
  }
}

TEST_CASE("data loader: a worker failing outside get_batch reaches pop not std::terminate", "[data]") {
  const std::thread::id home = std::this_thread::get_id();
  std::vector<data::detail::LoaderWorkers<Fragile>::Fetch> fetch;
  fetch.emplace_back([home](std::span<const size_t>) { return Fragile(home); });
  data::detail::LoaderWorkers<Fragile> workers(std::move(fetch), true);
  workers.start_epoch();
  workers.push(0, {0});
  CHECK_THROWS_WITH(workers.pop(0), Catch::Contains("Fragile: moved on a worker"));
  workers.push(1, {1});  // the worker is gone: a later pop fails too, never waits forever
  CHECK_THROWS_WITH(workers.pop(1), Catch::Contains("Fragile: moved on a worker"));
}
