// Module::state_dict / load_state_dict: round trip, and every kind of failure leaving the module
// unchanged.
#include <catch2/catch.hpp>

#include "support/allclose.h"
#include "support/cpu_kernels_backend.h"
#include "wick/core/backend.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;

namespace {
std::shared_ptr<SequentialImpl> make_model() {
  return Sequential(std::make_shared<LinearImpl>(4, 3), std::make_shared<BatchNorm1dImpl>(3),
                    std::make_shared<LinearImpl>(3, 2))
      .ptr();
}

// A deep copy of every value in a state dict (to compare "before" with "after").
StateDict snapshot(const Module& m) {
  StateDict out;
  for (const auto& [k, v] : m.state_dict()) out.insert(k, v.clone());
  return out;
}

void check_unchanged(const Module& m, const StateDict& before) {
  const auto now = m.state_dict();
  REQUIRE(now.size() == before.size());
  for (const auto& [k, v] : before) {
    INFO(k);
    CHECK_ALLCLOSE(now.at(k), v, 0, 0);
  }
}

// A module whose buffer is an expanded tensor (stride 0): copy_ cannot write into it.
class WithExpandedBuffer : public Cloneable<WithExpandedBuffer> {
 public:
  WithExpandedBuffer() { e_ = register_buffer("e", wick::zeros({1, 3}).expand({2, 3})); }
  Tensor forward(const Tensor& x) { return x; }
  BufferSlot e_;
};

// The "failcopy" device type: the CPU backend, except that a copy into the one address armed in
// `fail_into` throws a BackendError (once). It makes a copy fail after load_state_dict's checks
// passed, as a failing allocation or device would.
class FailingCopyBackend final : public wick::test::CpuKernelsBackend {
 public:
  static inline std::atomic<void*> fail_into{nullptr};
  Allocator& allocator() override { return cpu().allocator(); }
  int device_count() override { return 1; }
  void set_device(Device) override {}
  Device current_device() override { return Device(type(), 0); }
  void synchronize(Device) override {}
  uintptr_t current_stream(Device) override { return 0; }
  void set_current_stream(Device, uintptr_t) override {}
  void copy(const KernelTensor& dst, const KernelTensor& src) override {
    maybe_fail(dst.data);
    cpu().copy(dst, src);
  }
  void copy_bytes_host(void* dst, const void* src, size_t bytes, Device device, bool to_device) override {
    maybe_fail(dst);
    cpu().copy_bytes_host(dst, src, bytes, device, to_device);
  }
  void copy_bytes_peer(void* dst, Device dd, const void* src, Device sd, size_t bytes) override {
    maybe_fail(dst);
    cpu().copy_bytes_peer(dst, dd, src, sd, bytes);
  }

  /// The device type, registered by the first call.
  static DeviceType type() {
    static auto* b = new FailingCopyBackend;  // lives until the process ends, as the registry asks
    static const DeviceType t = register_device_type("failcopy", *b);
    return t;
  }

 private:
  static void maybe_fail(const void* dst) {
    void* armed = const_cast<void*>(dst);
    if (dst && fail_into.compare_exchange_strong(armed, nullptr))
      WICK_FAIL_T(BackendError, "failcopy: the copy into {} failed (test)", dst);
  }
};
}  // namespace

TEST_CASE("load_state_dict copies values into the module's own tensors", "[nn][state_dict]") {
  auto a = make_model(), b = make_model();
  a->train();
  a->forward(wick::randn({8, 4}));  // moves BatchNorm's running stats
  Tensor w_before = b->get_parameter("0.weight");
  auto res = b->load_state_dict(a->state_dict());
  CHECK(res.missing_keys.empty());
  CHECK(res.unexpected_keys.empty());
  CHECK(b->get_parameter("0.weight").is_same(w_before));  // in place
  CHECK(b->get_parameter("0.weight").requires_grad());
  for (const auto& [k, v] : a->state_dict()) {
    INFO(k);
    CHECK_ALLCLOSE(b->state_dict().at(k), v, 0, 0);
  }
  a->eval();
  b->eval();
  Tensor x = wick::randn({5, 4});
  CHECK_ALLCLOSE(b->forward(x), a->forward(x), 0, 0);
  CHECK(b->get_buffer("1.num_batches_tracked").item<int64_t>() == 1);
}

TEST_CASE("load_state_dict reports every problem at once and changes nothing", "[nn][state_dict]") {
  auto m = make_model();
  const StateDict before = snapshot(*m);
  StateDict good = make_model()->state_dict();

  SECTION("missing key") {
    StateDict d;
    for (const auto& [k, v] : good)
      if (k != "2.bias") d.insert(k, v);
    CHECK_THROWS_WITH(m->load_state_dict(d), Catch::Contains("Missing key(s) in state_dict: \"2.bias\"") &&
                                                 Catch::Contains("Sequential") && Catch::Contains("unchanged"));
    check_unchanged(*m, before);
    auto res = m->load_state_dict(d, /*strict=*/false);
    CHECK(res.missing_keys == std::vector<std::string>{"2.bias"});
  }
  SECTION("unexpected key") {
    StateDict d = good;
    d.insert("3.weight", wick::zeros({1}));
    CHECK_THROWS_WITH(m->load_state_dict(d), Catch::Contains("Unexpected key(s) in state_dict: \"3.weight\""));
    check_unchanged(*m, before);
    auto res = m->load_state_dict(d, false);
    CHECK(res.unexpected_keys == std::vector<std::string>{"3.weight"});
  }
  SECTION("shape mismatch, also when not strict") {
    StateDict d = good;
    d.insert_or_assign("0.weight", wick::zeros({3, 5}));
    CHECK_THROWS_WITH(m->load_state_dict(d),
                      Catch::Contains("size mismatch for 0.weight: copying a param with shape "
                                      "[3, 5] from checkpoint, the shape in current model is [3, 4]"));
    CHECK_THROWS_WITH(m->load_state_dict(d, false), Catch::Contains("size mismatch"));
    check_unchanged(*m, before);
  }
  SECTION("dtype mismatch") {
    StateDict d = good;
    d.insert_or_assign("1.running_var", wick::ones({3}, kFloat64));
    CHECK_THROWS_WITH(m->load_state_dict(d), Catch::Contains("dtype mismatch for 1.running_var") &&
                                                 Catch::Contains("float64") && Catch::Contains("float32"));
    check_unchanged(*m, before);
  }
  SECTION("undefined tensor") {
    StateDict d = good;
    d.insert_or_assign("0.bias", Tensor());
    CHECK_THROWS_WITH(m->load_state_dict(d), Catch::Contains("undefined tensor for 0.bias"));
    check_unchanged(*m, before);
  }
  SECTION("several problems in one error") {
    StateDict d;
    for (const auto& [k, v] : good)
      if (k != "0.bias") d.insert(k, v);
    d.insert("extra", wick::zeros({1}));
    d.insert_or_assign("2.weight", wick::zeros({1}));
    try {
      m->load_state_dict(d);
      FAIL("no error");
    } catch (const Error& e) {
      const std::string msg = e.what();
      CHECK(msg.find("\"0.bias\"") != std::string::npos);
      CHECK(msg.find("\"extra\"") != std::string::npos);
      CHECK(msg.find("size mismatch for 2.weight") != std::string::npos);
    }
    check_unchanged(*m, before);
  }
}

TEST_CASE("state_dict loads across devices and into tied weights", "[nn][state_dict]") {
  auto a = make_model();
  auto b = make_model();
  b->to(Device("cpu:1"));
  b->load_state_dict(a->state_dict());
  CHECK(b->get_parameter("0.weight").device() == Device("cpu:1"));
  CHECK_ALLCLOSE(b->get_parameter("0.weight"), a->get_parameter("0.weight"), 0, 0);
}

TEST_CASE("load_state_dict refuses a target it cannot write, naming the key, before copying anything",
          "[nn][state_dict]") {
  auto m = Sequential(std::make_shared<LinearImpl>(2, 2), std::make_shared<WithExpandedBuffer>()).ptr();
  const StateDict before = snapshot(*m);
  StateDict d;
  d.insert("0.weight", wick::ones({2, 2}));
  d.insert("0.bias", wick::ones({2}));
  d.insert("1.e", wick::ones({2, 3}));
  CHECK_THROWS_AS(m->load_state_dict(d), ValueError);
  CHECK_THROWS_WITH(m->load_state_dict(d, /*strict=*/false),
                    Catch::Contains("cannot load into 1.e: its elements share memory") &&
                        Catch::Contains("clone() it") && Catch::Contains("unchanged"));
  check_unchanged(*m, before);  // 0.weight, visited before 1.e, was not overwritten
  CHECK(m->get_parameter("0.weight").ne(1.0).any().item<bool>());
  // Loading into the buffer once it is a tensor of its own works.
  m->get_submodule("1")->set_buffer_entry(0, m->get_buffer("1.e").clone());
  m->load_state_dict(d);
  CHECK(m->get_buffer("1.e").to_vector<float>() == std::vector<float>(6, 1.0f));
}

TEST_CASE("load_state_dict puts back what it copied when a copy fails after the checks", "[nn][state_dict]") {
  auto m = Sequential(std::make_shared<LinearImpl>(2, 2), std::make_shared<LinearImpl>(2, 2)).ptr();
  const StateDict before = snapshot(*m);
  // The dict lives on "failcopy", whose copy into 1.weight's memory fails: 0.weight and 0.bias are
  // copied first (state_dict order), then 1.weight fails.
  const Device fail_dev(FailingCopyBackend::type(), 0);
  StateDict d;
  for (const auto& [k, v] : before) d.insert(k, wick::full(v.sizes(), 7.0).to(fail_dev));
  FailingCopyBackend::fail_into = m->get_parameter("1.weight").data_ptr();
  try {
    m->load_state_dict(d);
    FAIL("no error");
  } catch (const BackendError& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("copying into 1.weight failed") != std::string::npos);
    CHECK(msg.find("the module is unchanged") != std::string::npos);
    CHECK(msg.find("failcopy: the copy into") != std::string::npos);
  }
  CHECK(FailingCopyBackend::fail_into.load() == nullptr);  // the armed copy did fail
  check_unchanged(*m, before);
  // Nothing armed: the same dict loads.
  m->load_state_dict(d);
  CHECK(m->get_parameter("0.weight").to_vector<float>() == std::vector<float>(4, 7.0f));
}
