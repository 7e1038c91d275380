// The padding layers (ZeroPad2d, ConstantPad1d/2d/3d, ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d)
// built with LibTorch's constructors and option names: PyTorch 1.13's modules on unbatched and
// batched inputs with asymmetric and negative pads (generate.py's padding_module_cases: output at
// rtol 1e-12 and the input's gradient for the stored upstream gradient at rtol 1e-10, float64, on
// every test device); their prints (PyTorch 1.13's reprs, written from its padding.py); clones;
// bad input as PyTorch 1.13 refuses it, as typed errors naming the layer and the shape.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using wick::test::expect_error;
using wick::test::OracleCase;
using Pads = std::vector<int64_t>;

namespace {

// The layer a padding_module case names, built the ways LibTorch's users write it, applied to x.
Tensor apply_layer(const std::string& layer, const Pads& p, double v, const Tensor& x) {
  if (layer == "ZeroPad2d") return ZeroPad2d(ZeroPad2dOptions(p))(x);
  if (layer == "ConstantPad1d") return ConstantPad1d(p, v)(x);
  if (layer == "ConstantPad2d") return ConstantPad2d(ConstantPad2dOptions(p, v))(x);
  if (layer == "ConstantPad3d") return ConstantPad3d(std::make_shared<ConstantPad3dImpl>(p, v))(x);
  if (layer == "ReflectionPad1d") return ReflectionPad1d(ReflectionPadOptions<1>(p))(x);
  if (layer == "ReflectionPad2d") return ReflectionPad2d(ReflectionPad2dOptions(p))(x);
  if (layer == "ReflectionPad3d") return ReflectionPad3d(p)(x);
  if (layer == "ReplicationPad1d") return ReplicationPad1d(ReplicationPad1dOptions(p))(x);
  if (layer == "ReplicationPad2d") return ReplicationPad2d(ReplicationPadOptions<2>(p))(x);
  if (layer == "ReplicationPad3d") return ReplicationPad3d(std::make_shared<ReplicationPad3dImpl>(p))(x);
  FAIL("unknown layer " << layer);
  return {};
}

// F::pad's mode for a layer's name.
PadMode mode_of(const std::string& layer) {
  return layer.starts_with("Reflection") ? kReflect : layer.starts_with("Replication") ? kReplicate : kConstant;
}

}  // namespace

TEST_CASE("padding layers match PyTorch 1.13's modules on unbatched inputs and negative pads",
          "[nn][oracle][padding]") {
  std::map<std::string, int> seen;
  int unbatched = 0, negative = 0;
  const auto run = [&](const OracleCase& c, const std::vector<Tensor>& x, Device dev) {
    const auto layer = c.kwargs.at("layer").get<std::string>();
    const auto p = c.kwargs.at("padding").get<Pads>();
    const double v = c.kwargs.at("value").get<double>();
    const Tensor out = apply_layer(layer, p, v, x[0]);
    const Tensor by_f =
        mode_of(layer) == kConstant ? F::pad(x[0].detach(), p, v) : F::pad(x[0].detach(), p, mode_of(layer));
    CHECK_ALLCLOSE(out.detach(), by_f, 0, 0);  // the layer is F::pad with its options
    if (dev == kCPU) {
      ++seen[layer];
      unbatched += x[0].dim() == static_cast<int64_t>(p.size() / 2 + 1);
      for (int64_t q : p) negative += q < 0;
    }
    return out;
  };
  const auto counts = wick::test::check_oracle_ops({"padding_module"}, run, {1e-12, 1e-10, 1e-13});
  CHECK(counts.total == 10);
  for (const char* layer :
       {"ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
        "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d"}) {
    INFO(layer);
    CHECK(seen[layer] == 1);
  }
  CHECK(unbatched >= 6);
  CHECK(negative >= 8);
}

TEST_CASE("padding layers print as PyTorch 1.13, take LibTorch's constructors and clone", "[nn][padding]") {
  // PyTorch 1.13: print(nn.ZeroPad2d((1, 2, 0, 3))) etc.; an int prints as the tuple it expands
  // to, ConstantPad's value as Python prints the float.
  CHECK(ZeroPad2d(ZeroPad2dOptions({1, 2, 0, 3}))->to_string() == "ZeroPad2d((1, 2, 0, 3))");
  CHECK(ConstantPad1d(Pads{3, 1}, 3.5)->to_string() == "ConstantPad1d(padding=(3, 1), value=3.5)");
  CHECK(ConstantPad2d(2, 1)->to_string() == "ConstantPad2d(padding=(2, 2, 2, 2), value=1.0)");
  CHECK(ConstantPadOptions<2>(2, 1).padding() == Pads{2, 2, 2, 2});
  CHECK(ConstantPad3dImpl({1, -1, 0, 2, 1, 0}, -0.25).to_string() ==
        "ConstantPad3d(padding=(1, -1, 0, 2, 1, 0), value=-0.25)");
  CHECK(ReflectionPad1dImpl({3, 1}).to_string() == "ReflectionPad1d((3, 1))");
  CHECK(ReflectionPad2d(ReflectionPadOptions<2>(1))->to_string() == "ReflectionPad2d((1, 1, 1, 1))");
  CHECK(ReflectionPad3d(ReflectionPad3dOptions({1, 1, 2, 0, 1, 1}))->to_string() ==
        "ReflectionPad3d((1, 1, 2, 0, 1, 1))");
  CHECK(ReplicationPad1d(ReplicationPadOptions<1>(2))->to_string() == "ReplicationPad1d((2, 2))");
  CHECK(ReplicationPad2dImpl({1, 1, 2, 0}).to_string() == "ReplicationPad2d((1, 1, 2, 0))");
  CHECK(ReplicationPad3d(ReplicationPad3dOptions({1, 2, 1, 2, 1, 2}))->to_string() ==
        "ReplicationPad3d((1, 2, 1, 2, 1, 2))");
  CHECK(ConstantPad2d(Pads{3, 0, 2, 1}, 3.5)->options().value() == 3.5);
  CHECK(ReflectionPad2d(ReflectionPad2dOptions(0).padding({4, 3, 2, 1}))->options().padding() == Pads{4, 3, 2, 1});

  // A clone is a new module with the same options and output, whose mode is its own.
  Sequential seq(ZeroPad2d(1), ConstantPad1d(Pads{0, 2}, 0.5), ReplicationPad2d(Pads{1, 0, 0, 2}));
  CHECK(seq->to_string() ==
        "Sequential(\n"
        "  (0): ZeroPad2d((1, 1, 1, 1))\n"
        "  (1): ConstantPad1d(padding=(0, 2), value=0.5)\n"
        "  (2): ReplicationPad2d((1, 0, 0, 2))\n"
        ")");
  const auto copy = std::dynamic_pointer_cast<SequentialImpl>(seq->clone());
  REQUIRE(copy);
  CHECK(copy.get() != seq.get());
  CHECK(copy->to_string() == seq->to_string());
  REQUIRE(copy->children().size() == 3);
  CHECK(copy->children()[2].get() != seq->children()[2].get());
  copy->eval();
  CHECK(seq->is_training());
  CHECK_FALSE(copy->children()[1]->is_training());
  const Tensor x = randn({2, 3, 4}, kFloat64);
  const Tensor y = seq->forward(x);
  CHECK(y.sizes() == IntArrayRef({2, 7, 9}));  // 3 + 2 + 2 rows, 4 + 2 + 2 + 1 columns
  CHECK_ALLCLOSE(copy->forward(x), y, 0, 0);
}

TEST_CASE("padding layers refuse bad input as PyTorch 1.13, naming the layer and the shape", "[nn][padding]") {
  const auto x = [](std::vector<int64_t> shape) { return randn(shape, kFloat64); };
  // Reflect and replicate take (k + 1)-d or (k + 2)-d inputs for k padded dims (PyTorch 1.13's
  // NotImplementedError "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported").
  expect_error<NotImplementedError>(
      [&] {
        ReflectionPad1d(1)(x({2, 3, 4, 5}));
      },
      {"ReflectionPad1d((1, 1))", "[2, 3, 4, 5]", "(k + 1)-d"});
  expect_error<NotImplementedError>([&] { ReplicationPad1d(1)(x({4})); }, {"ReplicationPad1d((1, 1))", "[4]"});
  expect_error<NotImplementedError>([&] { ReflectionPad2d(1)(x({3, 4})); }, {"ReflectionPad2d", "[3, 4]"});
  expect_error<NotImplementedError>(
      [&] {
        ReplicationPad2d(1)(x({1, 2, 3, 4, 5}));
      },
      {"ReplicationPad2d", "[1, 2, 3, 4, 5]"});
  expect_error<NotImplementedError>([&] { ReflectionPad3d(1)(x({3, 4, 5})); }, {"ReflectionPad3d", "[3, 4, 5]"});
  expect_error<NotImplementedError>(
      [&] {
        ReplicationPad3d(1)(x({1, 1, 2, 3, 4, 5}));
      },
      {"ReplicationPad3d", "[1, 1, 2, 3, 4, 5]"});
  // Reflection needs each pad below its dim's size (PyTorch: "Padding size should be less than
  // the corresponding input dimension").
  expect_error<ValueError>([&] { ReflectionPad1d(3)(x({1, 3})); }, {"ReflectionPad1d((3, 3))", "below the size"});
  expect_error<ValueError>(
      [&] {
        ReflectionPad2d(Pads{0, 0, 0, 2})(x({1, 2, 2}));
      },
      {"ReflectionPad2d((0, 0, 0, 2))", "[1, 2, 2]"});
  // Constant padding takes any input with as many dims as it pads, as PyTorch 1.13 ...
  CHECK(ConstantPad1d(1, 2.0)(x({1, 2, 3, 4})).sizes() == IntArrayRef({1, 2, 3, 6}));
  CHECK(ZeroPad2d(1)(x({3, 4})).sizes() == IntArrayRef({5, 6}));
  // ... and no fewer ("Padding length too large").
  expect_error<ValueError>([&] { ZeroPad2d(1)(x({4})); }, {"ZeroPad2d((1, 1, 1, 1))", "[4]"});
  expect_error<ValueError>([&] { ConstantPad3d(1, 0.5)(x({3, 4})); }, {"ConstantPad3d(padding=", "[3, 4]"});
  // Pads that remove more than the input holds, the wrong number of pads, no input.
  expect_error<ValueError>([&] { ConstantPad1d(Pads{-3, 0}, 0.0)(x({2, 2})); }, {"ConstantPad1d"});
  expect_error<ValueError>([&] { ReflectionPad2d(Pads{1, 2}); }, {"ReflectionPad2d", "4 ints", "got 2"});
  expect_error<ValueError>([&] { ConstantPad3d(Pads{1, 1, 1, 1}, 0.0); }, {"ConstantPad3d", "6 ints"});
  expect_error<ValueError>([&] { ReplicationPad1d(1)(Tensor()); }, {"ReplicationPad1d", "undefined"});
}
