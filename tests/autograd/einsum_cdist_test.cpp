// einsum and cdist: the PyTorch oracle's cases (generate.py's einsum_cases, selected by op name)
// forward at rtol 1e-12 and the gradient of every input at rtol 1e-10 in float64, on every test
// device; small cases worked by hand (trace, diagonal, outer product, implicit output order, an
// empty contraction, distances for p = 0, 1, 2, inf and their gradients at zero distance and at
// ties); float64 gradchecks and double backward; PyTorch 1.13's errors as ValueError and
// TypeError naming the equation and the operand shapes.
#include <catch2/catch.hpp>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"
#include "wick/autograd/cdist.h"
#include "wick/autograd/einsum.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"

using namespace wick;
using wick::test::check_error;
using wick::test::OracleCase;

namespace {
constexpr double kOutRtol = 1e-12, kGradRtol = 1e-10, kAtol = 1e-13;
const double kInf = std::numeric_limits<double>::infinity();

using wick::test::f64;
Tensor leaf(IntArrayRef shape, Device dev) {
  return randn(shape, TensorOptions(kFloat64).device(dev)).requires_grad_(true);
}
}  // namespace

TEST_CASE("einsum matches PyTorch 1.13 on the oracle's equations and gradients", "[autograd][oracle][einsum]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "einsum") continue;
    const std::string eq = c.kwargs.at("equation").get<std::string>();
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const std::vector<Tensor> x = c.leaves(dev);
      const Tensor out = einsum(eq, x);
      REQUIRE(out.sizes() == c.out.sizes());
      wick::test::check_oracle_case(c, out, x, dev, kOutRtol, kGradRtol, kAtol);
    }
    ++seen["cases"];
    if (eq.find("...") != std::string::npos) ++seen["ellipsis"];
    if (eq.find("->") == std::string::npos) ++seen["implicit"];
    if (c.inputs.size() >= 3) ++seen["three or more operands"];
  }
  for (const char* kind : {"ellipsis", "implicit", "three or more operands"}) {
    INFO(kind);
    CHECK(seen[kind] >= 2);
  }
  CHECK(seen["cases"] >= 20);
}

TEST_CASE("cdist matches PyTorch 1.13 for p 0 0.5 1 2 3 and inf with its gradients", "[autograd][oracle][cdist]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "cdist") continue;
    const std::string p = c.kwargs.at("p").get<std::string>();
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const std::vector<Tensor> x = c.leaves(dev);
      const Tensor out = cdist(x[0], x[1], std::stod(p));
      REQUIRE(out.sizes() == c.out.sizes());
      wick::test::check_oracle_case(c, out, x, dev, kOutRtol, kGradRtol, kAtol);
    }
    ++seen[p];
  }
  for (const char* p : {"0.0", "0.5", "1.0", "2.0", "3.0", "inf"}) {
    INFO("p = " << p);
    CHECK(seen[p] >= 1);
  }
}

TEST_CASE("einsum by hand: trace diagonal outer product implicit order and empty sums", "[autograd][einsum]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor m = f64({1, 2, 3, 4}, {2, 2}, dev).requires_grad_(true);
    const Tensor tr = einsum("ii", {m});
    CHECK(tr.dim() == 0);
    CHECK(tr.device() == dev);
    CHECK_VALUES(tr, {5});
    tr.backward();
    CHECK_VALUES(m.grad(), {1, 0, 0, 1});  // the gradient of a trace is the identity
    CHECK_VALUES(einsum("ii->i", {m}), {1, 4});
    CHECK_VALUES(einsum("ij->ji", {m}), {1, 3, 2, 4});
    CHECK_VALUES(einsum("ji", {m}), {1, 3, 2, 4});  // implicit: the letters in order, "ij"
    CHECK_VALUES(einsum("ij", {m}), {1, 2, 3, 4});
    CHECK_VALUES(einsum("ij->", {m}), {10});
    CHECK_VALUES(einsum("ij->j", {m}), {4, 6});
    const Tensor u = f64({1, 2}, {2}, dev), v = f64({3, 4, 5}, {3}, dev);
    const Tensor outer = einsum("i,j->ij", {u, v});
    CHECK(outer.sizes() == IntArrayRef({2, 3}));
    CHECK_VALUES(outer, {3, 4, 5, 6, 8, 10});
    CHECK_VALUES(einsum("i,i", {u, u}), {5});
    // Upper-case letters come first in an implicit output: "Ba" -> [B, a].
    const Tensor ba = einsum("aB", {f64({1, 2, 3, 4, 5, 6}, {2, 3}, dev)});
    CHECK(ba.sizes() == IntArrayRef({3, 2}));
    CHECK_VALUES(ba, {1, 4, 2, 5, 3, 6});
    // Repeated letters over two operands: sum_i m_ii * u_i = 1 * 1 + 4 * 2.
    CHECK_VALUES(einsum("ii,i->", {m, u}), {9});
    // A size-1 dim broadcasts against the letter's size: [2, 1] x [3, 2] sums j over 3 copies.
    CHECK_VALUES(einsum("ij,jk->ik", {f64({1, 2}, {2, 1}, dev), f64({1, 2, 3, 4, 5, 6}, {3, 2}, dev)}),
                 {9, 12, 18, 24});
    // An empty contraction gives zeros; an empty operand gives an empty result.
    const Tensor a = zeros({2, 0}, TensorOptions(kFloat64).device(dev)),
                 b = zeros({0, 3}, TensorOptions(kFloat64).device(dev));
    const Tensor ab = einsum("ij,jk->ik", {a, b});
    CHECK(ab.sizes() == IntArrayRef({2, 3}));
    CHECK_VALUES(ab, {0, 0, 0, 0, 0, 0});
    CHECK(einsum("ij,jk->ki", {b, zeros({3, 4}, TensorOptions(kFloat64).device(dev))}).sizes() == IntArrayRef({4, 0}));
    // float32 works too and keeps its dtype.
    const Tensor m32 = m.detach().to(kFloat32);
    CHECK(einsum("ij,jk", {m32, m32}).dtype() == kFloat32);
    CHECK_VALUES(einsum("ij,jk", {m32, m32}), {7, 10, 15, 22});
  }
}

TEST_CASE("einsum gradchecks and double backward in float64", "[autograd][einsum][gradcheck]") {
  const std::vector<std::pair<std::string, std::vector<std::vector<int64_t>>>> cases = {
      {"bij,bjk->bik", {{2, 3, 2}, {2, 2, 3}}}, {"ii->i", {{3, 3}}},
      {"iij,jk->ik", {{2, 2, 3}, {3, 2}}},      {"...ij,j->...i", {{2, 2, 3}, {3}}},
      {"...i,...i->...", {{2, 1, 3}, {4, 3}}},  {"bn,anm,bm->ba", {{2, 3}, {2, 3, 2}, {2, 2}}},
      {"i,j,k->ijk", {{2}, {3}, {2}}},          {"ij,jk", {{2, 1}, {3, 2}}},
  };
  for (Device dev : wick::test::test_devices()) {
    for (const auto& [eq, shapes] : cases) {
      INFO(eq << " on " << dev.str());
      std::vector<Tensor> x;
      for (const auto& s : shapes) x.push_back(leaf(s, dev));
      const std::string e = eq;
      CHECK_GRADCHECKS([e](const std::vector<Tensor>& t) { return std::vector<Tensor>{einsum(e, t)}; }, x);
    }
  }
}

TEST_CASE("einsum errors name the equation and the operand shapes", "[autograd][einsum][errors]") {
  const Tensor a = zeros({2, 3}, TensorOptions(kFloat64)), b = zeros({3, 4}, TensorOptions(kFloat64));
  using VE = ValueError;
  check_error<VE>([&] { einsum("ij,jk", {a}); }, {"einsum(\"ij,jk\")", "[2, 3]", "more operands than the 1 given"});
  check_error<VE>([&] { einsum("ij", {a, b}); }, {"[2, 3], [3, 4]", "names 1 operands but 2 were given"});
  check_error<VE>([&] { einsum("ijk,jk", {a, b}); }, {"\"ijk,jk\"", "operand 0 has 2 dims", "3 subscripts"});
  check_error<VE>([&] { einsum("i...jk,jk", {a, b}); }, {"operand 0 has 2 dims", "3 subscripts besides"});
  check_error<VE>(
      [&] {
        einsum("ij,ik", {a, b});
      },
      {"\"ij,ik\"", "[2, 3], [3, 4]", "subscript i has size 3 in operand 1", "size 2 seen before"});
  check_error<VE>(
      [&] {
        einsum("...,...", {a, zeros({4}, TensorOptions(kFloat64))});
      },
      {"under \"...\"", "size 4", "size 3 seen before"});
  check_error<VE>([&] { einsum("ii", {a}); }, {"subscript i is repeated in operand 0", "sizes 2 and 3"});
  check_error<VE>([&] { einsum("i1,jk", {a, b}); }, {"invalid subscript '1' at index 1"});
  check_error<VE>([&] { einsum("ij,jk->iK", {a, b}); }, {"\"ij,jk->iK\"", "output subscript K does not appear"});
  check_error<VE>([&] { einsum("ij,jk->ii", {a, b}); }, {"output subscript i appears more than once"});
  check_error<VE>([&] { einsum("ij,jk->i-", {a, b}); }, {"invalid subscript '-' at index 8"});
  check_error<VE>([&] { einsum("i.j", {a}); }, {"'.' at index 1 is not part of an ellipsis"});
  check_error<VE>([&] { einsum("...i...", {a}); }, {"a second '.' sequence for operand 0"});
  check_error<VE>([&] { einsum("ij->..", {a}); }, {"is not part of an ellipsis"});
  check_error<VE>([&] { einsum("...->......", {a}); }, {"a second \"...\" in the output"});
  check_error<VE>([&] { einsum("ij", {}); }, {"give at least one operand"});
  check_error<VE>([&] { einsum("ij", {Tensor()}); }, {"operand 0 is undefined"});
  check_error<TypeError>(
      [&] {
        einsum("ij,jk", {a, b.to(kFloat32)});
      },
      {"operand 1 is float32", "operand 0 is float64"});
  check_error<TypeError>([&] { einsum("ij", {zeros({2, 2}, TensorOptions(kInt64))}); }, {"floating-point"});
  check_error<Error>([&] { einsum("ij,jk", {a, b.to(Device("cpu:1"))}); }, {"einsum", "cpu:1"});
}

TEST_CASE("cdist by hand: p 0 1 2 inf and the gradients at zero distance and at ties", "[autograd][cdist]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x1 = f64({0, 0, 3, 4}, {2, 2}, dev), x2 = f64({3, 4}, {1, 2}, dev);
    CHECK_VALUES(cdist(x1, x2, 2), {5, 0});
    CHECK_VALUES(cdist(x1, x2, 1), {7, 0});
    CHECK_VALUES(cdist(x1, x2, kInf), {4, 0});
    CHECK_VALUES(cdist(x1, x2, 0), {2, 0});
    CHECK(cdist(x1, x2).sizes() == IntArrayRef({2, 1}));
    // Zero distance: gradient 0 (p = 2's g * diff / dist would be 0 / 0).
    for (double p : {2.0, 3.0, 0.5, 1.0, kInf, 0.0}) {
      INFO("p = " << p);
      const Tensor a = f64({1, 2}, {1, 2}, dev).requires_grad_(true), b = f64({1, 2}, {1, 2}, dev).requires_grad_(true);
      sum(cdist(a, b, p)).backward();
      REQUIRE(a.grad().defined());
      CHECK_VALUES(a.grad(), {0, 0});
      CHECK_VALUES(b.grad(), {0, 0});
    }
    // inf: both differences tie at 2, and each gets the whole gradient (PyTorch's _cdist_backward).
    const Tensor a = f64({0, 0}, {1, 2}, dev).requires_grad_(true), b = f64({2, -2}, {1, 2}, dev);
    sum(cdist(a, b, kInf)).backward();
    CHECK_VALUES(a.grad(), {-1, 1});
    // Batch dims broadcast; an empty column count gives zeros.
    CHECK(cdist(zeros({2, 1, 3, 4}, TensorOptions(kFloat64).device(dev)),
                zeros({5, 2, 4}, TensorOptions(kFloat64).device(dev)))
              .sizes() == IntArrayRef({2, 5, 3, 2}));
    CHECK_VALUES(
        cdist(zeros({2, 0}, TensorOptions(kFloat64).device(dev)), zeros({1, 0}, TensorOptions(kFloat64).device(dev))),
        {0, 0});
  }
}

TEST_CASE("cdist gradchecks and double backward in float64", "[autograd][cdist][gradcheck]") {
  for (Device dev : wick::test::test_devices()) {
    for (double p : {0.0, 0.5, 1.0, 2.0, 3.0, kInf}) {
      INFO("p = " << p << " on " << dev.str());
      const std::vector<Tensor> x = {leaf({2, 3, 2}, dev), leaf({1, 4, 2}, dev)};
      CHECK_GRADCHECKS([p](const std::vector<Tensor>& t) { return std::vector<Tensor>{cdist(t[0], t[1], p)}; }, x);
    }
  }
}

TEST_CASE("cdist errors: ranks columns batch p dtype and compute_mode", "[autograd][cdist][errors]") {
  const TensorOptions o(kFloat64);
  const Tensor a = zeros({3, 4}, o), b = zeros({5, 4}, o);
  using VE = ValueError;
  check_error<VE>([&] { cdist(zeros({4}, o), b); }, {"cdist", "at least 2 dims", "[4] and [5, 4]"});
  check_error<VE>([&] { cdist(a, zeros({5, 3}, o)); }, {"[3, 4] and x2 [5, 3]", "4 and 3 columns"});
  check_error<VE>([&] { cdist(zeros({2, 3, 4}, o), zeros({3, 5, 4}, o)); }, {"cdist"});
  check_error<VE>([&] { cdist(a, b, -1.0); }, {"p is -1", "p >= 0"});
  check_error<VE>([&] { cdist(a, b, std::numeric_limits<double>::quiet_NaN()); }, {"p >= 0"});
  check_error<VE>([&] { cdist(a, b, 2.0, 5); }, {"compute_mode 5"});
  check_error<TypeError>([&] { cdist(a, b.to(kFloat32)); }, {"float64 and float32"});
  check_error<TypeError>(
      [&] {
        cdist(zeros({3, 4}, TensorOptions(kInt64)), zeros({3, 4}, TensorOptions(kInt64)));
      },
      {"floating-point"});
  for (int64_t mode : {0, 1, 2})
    CHECK_VALUES(cdist(f64({0, 0}, {1, 2}, kCPU), f64({3, 4}, {1, 2}, kCPU), 2.0, mode), {5});
}
