// comm::reduce_add_coalesced on its flat-bucket path (comm.cpp: a communicator whose
// wants_flat_buckets() is true, as NCCL's, gets whole buckets and the sums are views of one flat
// tensor per bucket), forced on CPU devices with a registered communicator. comm_test's version
// checks run on the local communicator, where every sum owns its memory, so they cannot fail
// (helper29 review, T3). Here the outputs share storage, and each must still have a version
// counter of its own (PyTorch #13594) and the values of per-position reduce_add.
#include <atomic>
#include <catch2/catch.hpp>
#include <set>

#include "parallel/parallel_test_util.h"
#include "wick/parallel/comm.h"
#include "wick/parallel/communicator.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;

namespace {

// The local communicator's arithmetic, reached through Communicator's default reduce_bucket
// (flatten each device's pieces, one reduce). wants_flat_buckets() keeps the default: true.
struct FlatBuckets : Communicator {
  std::atomic<int> reduce_buckets{0};
  std::string name() const override { return "flat-buckets"; }
  void broadcast(const std::vector<Tensor>& ts) override { local_communicator().broadcast(ts); }
  void reduce(const std::vector<Tensor>& in, const Tensor& out, int root) override {
    local_communicator().reduce(in, out, root);
  }
  void all_reduce(const std::vector<Tensor>& in, const std::vector<Tensor>& out) override {
    local_communicator().all_reduce(in, out);
  }
  void reduce_bucket(const std::vector<std::vector<Tensor>>& pieces, const Tensor& flat) override {
    ++reduce_buckets;
    Communicator::reduce_bucket(pieces, flat);
  }
};

// Registers `c` for every device list that contains `marker`; unregisters when it goes.
class ScopedCommunicator {
 public:
  ScopedCommunicator(std::shared_ptr<Communicator> c, Device marker) {
    id_ = register_communicator_factory("flat-buckets", [c, marker](const std::vector<Device>& ds, DType) {
      for (Device d : ds)
        if (d == marker) return c;
      return std::shared_ptr<Communicator>();
    });
  }
  ~ScopedCommunicator() { unregister_communicator_factory(id_); }
  ScopedCommunicator(const ScopedCommunicator&) = delete;
  ScopedCommunicator& operator=(const ScopedCommunicator&) = delete;

 private:
  int id_;
};

// Dense tensors of three dtypes, interleaved so that a bucket holds tensors of non-adjacent positions.
std::vector<Tensor> mixed(Device d) {
  TensorOptions o = TensorOptions().device(d);
  return {randn({2, 5}, o.dtype(kFloat64)), randint(0, 10, {5}, o.dtype(kInt64)), randn({10}, o.dtype(kFloat32)),
          randn({3, 3}, o.dtype(kFloat64)), randint(0, 10, {7}, o.dtype(kInt64)), randn({4}, o.dtype(kFloat32)),
          randn({5}, o.dtype(kFloat64)),    randn({10, 2}, o.dtype(kFloat32)),    randn({1}, o.dtype(kFloat64))};
}

}  // namespace

TEST_CASE("comm::reduce_add_coalesced through flat buckets: per-position sums, each output its own version counter") {
  const Device other = cpu(6);  // the communicator applies to lists holding cpu:6 only
  auto flat = std::make_shared<FlatBuckets>();
  ScopedCommunicator scope(flat, other);
  REQUIRE(select_communicator({cpu(0), other}, kFloat64)->name() == "flat-buckets");
  REQUIRE(select_communicator({cpu(0), other}, kFloat64)->wants_flat_buckets());

  const std::vector<Tensor> a = mixed(cpu(0)), b = mixed(other);
  std::vector<Tensor> a0, b0;
  for (size_t i = 0; i < a.size(); ++i) {
    a0.push_back(a[i].clone());
    b0.push_back(b[i].clone());
  }
  for (Device destination : {cpu(0), other}) {
    for (size_t buffer : {size_t{100}, comm::kDefaultBufferSize}) {
      INFO("destination " << destination << ", buffer " << buffer);
      const int buckets_before = flat->reduce_buckets;
      std::vector<Tensor> out = comm::reduce_add_coalesced({a, b}, destination, buffer);
      REQUIRE(out.size() == a.size());
      // The path under test ran: whole buckets, and the sums of one bucket share one storage.
      REQUIRE(flat->reduce_buckets > buckets_before);
      std::set<const void*> storages;
      for (const Tensor& t : out) storages.insert(t.impl()->storage.get());
      REQUIRE(storages.size() < out.size());

      std::vector<Tensor> expected;
      for (size_t i = 0; i < a.size(); ++i) {
        INFO("position " << i);
        expected.push_back(comm::reduce_add({a[i], b[i]}, destination));
        CHECK(out[i].device() == destination);
        CHECK(out[i].dtype() == a[i].dtype());
        CHECK(out[i].sizes() == a[i].sizes());
        CHECK_VALUES_EQUAL(out[i], expected[i]);
        CHECK_VALUES_EQUAL(out[i], a[i] + b[i].to(cpu(0)));  // the sum computed by hand
      }
      // An in-place op on one output bumps its own counter and no other, and writes no other's values.
      std::vector<uint32_t> versions;
      for (const Tensor& t : out) versions.push_back(t.version());
      for (size_t i = 0; i < out.size(); ++i) {
        INFO("zeroing output " << i);
        out[i].zero_();
        CHECK(out[i].version() == versions[i] + 1);
        CHECK_VALUES_EQUAL(out[i], zeros(a[i].sizes(), TensorOptions().dtype(a[i].dtype())));
        for (size_t j = 0; j < out.size(); ++j) {
          if (j == i) continue;
          CHECK(out[j].version() == versions[j]);
          if (j > i) CHECK_VALUES_EQUAL(out[j], expected[j]);
        }
        versions[i] = out[i].version();
      }
    }
  }
  // The inputs were read, never written.
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK_VALUES_EQUAL(a[i], a0[i]);
    CHECK_VALUES_EQUAL(b[i], b0[i]);
  }
}
