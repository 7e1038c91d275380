// Module::state_dict / load_state_dict: round trip, and every kind of failure leaving the module
// unchanged.
#include <catch2/catch.hpp>

#include "support/allclose.h"
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
