// Every error wick raises has the class that says what kind of mistake it is (Note [Typed errors]
// in wick/core/error.h, docs/errors.md): a table of bad inputs across core, autograd, nn and
// parallel (typed_error_rows.h), each row with the exact class it must raise, the classes that
// must not catch it, and words its message must contain (the op and the operands). This file
// holds the core, autograd and tensor API rows, the count of every table, and the checks that
// errors caught and rethrown with more context keep their class. The nn rows:
// error_types_nn_test.cpp; the file and parallel rows: error_types_files_parallel_test.cpp.
#include <unistd.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "hostile_support.h"
#include "support/temp_dir.h"
#include "typed_error_rows.h"

using namespace wick;
using namespace wick::test::typed_errors;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

using wick::test::hostile::class_of;  // the exact (most derived) class, by name
using wick::test::hostile::safetensors_image;
using TempDir = wick::test::TempDir;

// ---- the table, by layer (each lambda captures by value: rows outlive their builder) ----

std::vector<Row> core_rows() {
  const Tensor v3 = wick::zeros({3}, f32());
  const Tensor m23 = wick::zeros({2, 3}, f32());
  return {
      row<IndexError>("select past the end", [=] { wick::select(v3, 0, 5); }, {"select", "index 5", "size 3", "[3]"}),
      row<IndexError>("a dim that is not there", [=] { wick::sum(m23, {2}); }, {"sum", "dim 2", "2 dims"}),
      row<IndexError>("Tensor::at out of bounds",
                      [=] {
                        (void)m23.at<float>({1, 3});
                      },
                      {"Tensor::at", "index 3", "size 3", "[2, 3]"}),
      row<IndexError>("index_select with an index value out of range",
                      [=] { wick::index_select(v3, 0, wick::tensor(std::vector<int64_t>{5}, {1})); },
                      {"index_select", "[5, 5]", "size 3"}),
      row<IndexError>("narrow of a 0-dim tensor", [=] { wick::narrow(wick::zeros({}, f32()), 0, 0, 1); },
                      {"narrow", "0-dim"}),
      row<TypeError>("index_select with a float index", [=] { wick::index_select(v3, 0, wick::zeros({1}, f32())); },
                     {"index_select", "int64", "float32"}),
      row<ValueError>("shapes that do not broadcast", [=] { wick::add(m23, wick::zeros({4}, f32())); },
                      {"add", "[2, 3]", "[4]"}),
      row<ValueError>("operands on different devices",
                      [=] { wick::add(wick::zeros({2}, f32(cpu(0))), wick::zeros({2}, f32(cpu(1)))); },
                      {"add", "cpu:0", "cpu:1"}),
      row<ValueError>("reshape to a different number of elements", [=] { wick::reshape(m23, {4}); },
                      {"reshape", "[4]", "[2, 3]"}),
      row<ValueError>("a device string that does not parse", [] { Device("gpu:0"); }, {"Device", "gpu:0"}),
      row<ValueError>("arange with step 0", [] { wick::arange(0, 5, 0); }, {"arange", "step"}),
      row<ValueError>("matmul of shapes that do not fit",
                      [=] {
                        wick::matmul(m23, wick::zeros({4, 5}, f32()));
                      },
                      {"matmul", "[2, 3]", "[4, 5]"}),
      row<TypeError>("mean of an integer tensor", [] { wick::mean(wick::zeros({2}, i64())); }, {"mean", "int64"}),
      row<TypeError>("where with a float condition", [=] { wick::where(v3, v3, v3); }, {"where", "bool", "float32"}),
      row<TypeError>("data_ptr of the wrong type", [=] { (void)v3.data_ptr<double>(); },
                     {"data_ptr", "float32", "float64"}),
      row<TypeError>("rand with an integer dtype", [] { wick::rand({2}, i64()); }, {"rand", "int64"}),
      row<TypeError>("matmul of integer tensors",
                     [] {
                       wick::matmul(wick::zeros({2, 2}, i64()), wick::zeros({2, 2}, i64()));
                     },
                     {"matmul", "int64"}),
      row<NotImplementedError>("a comparison written in place",
                               [=] { native::binary_(BinaryOp::Gt, wick::zeros({3}, f32()), v3); },
                               {"gt_", "in place"}),
      row<NotImplementedError>("a safetensors dtype wick cannot hold", [] { dtype_from_safetensors_name("BF16"); },
                               {"BF16", "not supported"}),
      row<FormatError>("a name that is no safetensors dtype", [] { dtype_from_safetensors_name("X99"); },
                       {"X99", "not a safetensors dtype"}),
      row<DeviceUnavailable>("a CUDA device that is not there (or no CUDA at all)",
                             [] { wick::zeros({2}, f32(Device("cuda:99"))); }, {"cuda"}),
  };
}

std::vector<Row> autograd_rows() {
  return {
      row<StateError>("backward twice without retain_graph",
                      [] {
                        Tensor x = wick::ones({3}, f64()).requires_grad_();
                        Tensor y = (x * x).sum();
                        y.backward();
                        y.backward();
                      },
                      {"Backward", "second time", "retain_graph"}),
      row<StateError>("a saved tensor modified in place",
                      [] {
                        Tensor x = wick::ones({3}, f64()).requires_grad_();
                        Tensor a = x * 2.0;
                        Tensor b = a * a;
                        a.add_(1.0);
                        b.sum().backward();
                      },
                      {"Backward", "modified by an in-place operation", "[3]", "version"}),
      row<StateError>("in place on a leaf that requires grad",
                      [] { wick::ones({3}, f64()).requires_grad_().add_(1.0); }, {"add_", "leaf", "requires grad"}),
      row<StateError>("backward of a tensor that does not require grad",
                      [] { wick::ones({3}, f64()).sum().backward(); }, {"backward", "does not require grad"}),
      row<TypeError>("an integer tensor that requires grad", [] { wick::zeros({2}, i64()).requires_grad_(); },
                     {"requires_grad_", "int64"}),
      row<TypeError>("gradcheck of float32 inputs",
                     [] {
                       autograd::gradcheck(
                           [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0}; },
                           {wick::ones({2}, f32()).requires_grad_()});
                     },
                     {"gradcheck", "float32", "float64"}),
      row<ValueError>("an implicit gradient for a non-scalar output",
                      [] {
                        Tensor x = wick::ones({3}, f64()).requires_grad_();
                        autograd::grad({x * 2.0}, {x});
                      },
                      {"grad", "one-element", "[3]"}),
      row<ValueError>("stack of tensors of different shapes",
                      [] {
                        wick::stack({wick::zeros({2}, f32()), wick::zeros({3}, f32())});
                      },
                      {"stack", "tensor 1"}),
  };
}

// The tensor API of issue 14: each bad input names the op and the operands.
std::vector<Row> tensor_api_rows() {
  const Tensor v3 = wick::zeros({3}, f64()), m23 = wick::zeros({2, 3}, f64());
  const Tensor mask3 = wick::zeros({3}, f64()).gt(0);
  return {
      row<IndexError>("topk with k past the size", [=] { wick::topk(v3, 4); }, {"topk", "k = 4", "size 3", "[3]"}),
      row<IndexError>("sort along a dim that is not there", [=] { wick::sort(m23, 2); }, {"sort", "dim 2"}),
      row<ValueError>("bmm of 2-d tensors", [=] { wick::bmm(m23, m23); }, {"bmm", "[2, 3]", "3-d"}),
      row<ValueError>("addmm with an input that does not broadcast",
                      [=] {
                        wick::addmm(v3.view({3, 1}).expand({3, 2}), m23.t(), m23);
                      },
                      {"addmm", "[3, 2]", "[3, 3]"}),
      row<ValueError>("tril of a 1-d tensor", [=] { wick::tril(v3); }, {"tril", "[3]", "2 dims"}),
      row<TypeError>("masked_fill with a float mask", [=] { wick::masked_fill(v3, v3, 1.0); },
                     {"masked_fill", "bool", "float64"}),
      row<ValueError>("masked_fill with a 1-d value", [=] { wick::masked_fill(v3, mask3, v3); },
                      {"masked_fill", "0-dim", "[3]"}),
      row<ValueError>("repeat with fewer repeats than dims", [=] { wick::repeat(m23, {2}); }, {"repeat", "[2, 3]"}),
      row<ValueError>("roll with more shifts than dims",
                      [=] {
                        wick::roll(m23, {1, 2}, {0});
                      },
                      {"roll", "2 shifts", "1 dims"}),
      row<ValueError>("diag of a 3-d tensor", [=] { wick::diag(m23.unsqueeze(0)); }, {"diag", "[1, 2, 3]"}),
      row<ValueError>("dot of different lengths", [=] { wick::dot(v3, wick::zeros({2}, f64())); },
                      {"dot", "[3]", "[2]"}),
      row<TypeError>("one_hot of a float tensor", [=] { wick::one_hot(v3); }, {"one_hot", "int64", "float64"}),
      row<ValueError>("one_hot with a class past num_classes",
                      [] {
                        wick::one_hot(wick::tensor(std::vector<int64_t>{0, 5}, {2}), 3);
                      },
                      {"one_hot", "5", "num_classes = 3"}),
      row<ValueError>("multinomial with a negative weight",
                      [] {
                        wick::multinomial(wick::tensor({0.5, -1.0}, f64()), 1);
                      },
                      {"multinomial", "negative"}),
      row<ValueError>("multinomial with an all-zero row", [=] { wick::multinomial(v3, 1, true); },
                      {"multinomial", "sums to 0"}),
      row<ValueError>("multinomial without replacement past the positive weights",
                      [] {
                        wick::multinomial(wick::tensor({1.0, 0.0}, f64()), 2);
                      },
                      {"multinomial", "2 samples", "1 positive"}),
      row<TypeError>("isclose of two dtypes", [=] { wick::isclose(v3, v3.to(kFloat32)); },
                     {"isclose", "float64", "float32"}),
      row<TypeError>("norm of an integer tensor", [] { wick::norm(wick::zeros({2}, i64())); }, {"norm", "int64"}),
  };
}

[[maybe_unused]] const bool registered = add_row_tables({
    {"core", [](const TempDir&) { return core_rows(); }},
    {"autograd", [](const TempDir&) { return autograd_rows(); }},
    {"tensor API", [](const TempDir&) { return tensor_api_rows(); }},
});

}  // namespace

TEST_CASE("typed errors: core") { check_rows(core_rows()); }
TEST_CASE("typed errors: autograd") { check_rows(autograd_rows()); }

TEST_CASE("typed errors: the tensor API") { check_rows(tensor_api_rows()); }

TEST_CASE("typed errors: the table covers at least 40 bad inputs") {
  TempDir dir("wick-errors-test");
  size_t n = 0;
  for (const char* table : {"core", "autograd", "nn", "files", "parallel", "tensor API"}) {
    if (!row_tables().count(table)) FAIL("no table of typed errors named " << table);
    n += row_tables().at(table)(dir).size();
  }
  CHECK(n >= 40);
}

TEST_CASE("typed errors: no GPU is a DeviceUnavailable, and probes catch only that") {
  // default_device_ids catches DeviceUnavailable only; on a machine without a GPU (or without
  // CUDA) it is empty, and data_parallel without device_ids then says so with DeviceUnavailable.
  std::vector<Device> ids;
  REQUIRE_NOTHROW(ids = parallel::default_device_ids());
  if (!ids.empty()) {
    SUCCEED("this machine has a GPU");
    return;
  }
  auto m = std::make_shared<nn::LinearImpl>(3, 2, f32());
  check_rows({row<DeviceUnavailable>("data_parallel with no devices at all",
                                     [=] {
                                       parallel::data_parallel(m, wick::zeros({2, 3}, f32()));
                                     },
                                     {"data_parallel", "no devices"}),
              row<DeviceUnavailable>("cuda:0 where there is no GPU", [] { wick::zeros({2}, f32(Device("cuda:0"))); },
                                     {"cuda"}),
              row<DeviceUnavailable>("a DeviceGuard on cuda:0 where there is no GPU",
                                     [] { DeviceGuard g(Device("cuda:0")); }, {"cuda"})});
}

TEST_CASE("typed errors: a rethrown error keeps its class and gains context") {
  auto check_kept = [](const Error& original, const char* expected) {
    try {
      rethrow_with_context(original, "while testing: ");
    } catch (const Error& e) {
      CHECK(class_of(e) == expected);
      CHECK(std::string(e.what()) == std::string("while testing: ") + original.what());
    }
  };
  check_kept(ValueError("v"), "ValueError");
  check_kept(TypeError("t"), "TypeError");
  check_kept(IndexError("i"), "IndexError");
  check_kept(NotImplementedError("n"), "NotImplementedError");
  check_kept(StateError("s"), "StateError");
  check_kept(FormatError("f"), "FormatError");
  check_kept(IOError("io"), "IOError");
  check_kept(DeviceUnavailable("d"), "DeviceUnavailable");
  check_kept(BackendError("b"), "BackendError");
  check_kept(OutOfMemoryError("oom"), "OutOfMemoryError");

  // Through a reference to the base, and twice over.
  try {
    try {
      WICK_CHECK_INDEX(false, "inner: slot {} is not there", 7);
    } catch (const Error& e) {
      rethrow_with_context(e, "middle: ");
    }
  } catch (const Error& e) {
    REQUIRE_THROWS_AS(rethrow_with_context(e, "outer: "), IndexError);
    CHECK_THROWS_WITH(rethrow_with_context(e, "outer: "), "outer: middle: inner: slot 7 is not there");
  }

  // with_message gives a copy of the same class, ready to be stored and rethrown later.
  const StateError s("old");
  std::exception_ptr p = s.with_message("new");
  REQUIRE_THROWS_AS(std::rethrow_exception(p), StateError);
  CHECK_THROWS_WITH(std::rethrow_exception(p), "new");

  // A class of one's own that does not override with_message is rethrown as its wick base.
  struct MyError : IndexError {
    using IndexError::IndexError;
  };
  try {
    rethrow_with_context(MyError("mine"), "ctx: ");
  } catch (const Error& e) {
    CHECK(class_of(e) == "IndexError");
  }
}

TEST_CASE("typed errors: the typed macros raise their class") {
  CHECK_THROWS_AS([] { WICK_CHECK(false, "x"); }(), ValueError);
  CHECK_THROWS_AS([] { WICK_FAIL("x"); }(), ValueError);
  CHECK_THROWS_AS([] { WICK_CHECK_TYPE(false, "x"); }(), TypeError);
  CHECK_THROWS_AS([] { WICK_CHECK_INDEX(false, "x"); }(), IndexError);
  CHECK_THROWS_AS([] { WICK_CHECK_NOT_IMPLEMENTED(false, "x"); }(), NotImplementedError);
  CHECK_THROWS_AS([] { WICK_CHECK_STATE(false, "x"); }(), StateError);
  CHECK_THROWS_AS([] { WICK_CHECK_FORMAT(false, "x"); }(), FormatError);
  CHECK_THROWS_AS([] { WICK_CHECK_IO(false, "x"); }(), IOError);
  CHECK_THROWS_AS([] { WICK_CHECK_T(DeviceUnavailable, false, "x"); }(), DeviceUnavailable);
  CHECK_THROWS_AS([] { WICK_FAIL_T(OutOfMemoryError, "{} bytes", 5); }(), BackendError);
  CHECK_NOTHROW([] { WICK_CHECK_INDEX(true, "x"); }());
}
