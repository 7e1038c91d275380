// Ops: broadcasting edge cases (size-0 and size-1 dims, scalars, 0-dim tensors) and the errors
// for bad input (shape and device mismatches), each naming the op and the operands. Values
// (special values, reductions, indexing, matmul's shape cases): ops_values_test.cpp.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "support/allclose.h"
#include "support/small_tensors.h"

using namespace wick;
using namespace wick::test;
using Catch::Matchers::Contains;

// ---------------------------------------------------------------------------------------------
// Broadcasting
// ---------------------------------------------------------------------------------------------

TEST_CASE("broadcasting with size-1 dims, missing dims, scalars and 0-dim tensors") {
  Tensor col = f64({1, 2, 3}, {3, 1}), row = f64({10, 20}, {1, 2});
  Tensor s = add(col, row);
  CHECK(s.sizes() == IntArrayRef({3, 2}));
  CHECK_VALUES(s, {11, 21, 12, 22, 13, 23});
  CHECK_VALUES(sub(row, col), {9, 19, 8, 18, 7, 17});
  CHECK(add(seq({2, 1, 4}), seq({3, 1})).sizes() == IntArrayRef({2, 3, 4}));
  Tensor zero_dim = scalar_tensor(100.0, kFloat64);
  CHECK(add(zero_dim, col).sizes() == IntArrayRef({3, 1}));
  CHECK_VALUES(mul(col, zero_dim), {100, 200, 300});
  CHECK(add(zero_dim, zero_dim).dim() == 0);
  CHECK(add(zero_dim, zero_dim).item<double>() == 200);
  CHECK_VALUES(col + 1.5, {2.5, 3.5, 4.5});
  CHECK_VALUES(1.5 - col, {0.5, -0.5, -1.5});
  CHECK_VALUES(6.0 / col, {6, 3, 2});
  CHECK_VALUES(col / 2, {0.5, 1, 1.5});
  CHECK_VALUES(-col, {-1, -2, -3});
  // Non-contiguous and expanded operands.
  Tensor m = seq({3, 4});
  CHECK_VALUES(add(m.t(), f64({100, 200, 300}, {3})), {100, 204, 308, 101, 205, 309, 102, 206, 310, 103, 207, 311});
  CHECK_VALUES(mul(col.expand({3, 2}), row), {10, 20, 20, 40, 30, 60});
  CHECK_VALUES(m.slice(1, 0, std::nullopt, 3) + 0.5, {0.5, 3.5, 4.5, 7.5, 8.5, 11.5});
}

TEST_CASE("broadcasting with size-0 dims gives empty results and never touches memory") {
  Tensor e = zeros({0, 3}, kFloat64);
  CHECK(add(e, f64({1, 2, 3}, {3})).sizes() == IntArrayRef({0, 3}));
  CHECK(add(zeros({2, 0}), zeros({2, 1})).sizes() == IntArrayRef({2, 0}));
  CHECK(add(zeros({2, 0}), zeros({1})).sizes() == IntArrayRef({2, 0}));
  CHECK(mul(zeros({0}), scalar_tensor(3.0)).sizes() == IntArrayRef({0}));
  CHECK(exp(e).sizes() == IntArrayRef({0, 3}));
  CHECK(where(zeros({0, 3}, kBool), e, e).numel() == 0);
  CHECK_VALUES(sum(e, {0}), {0, 0, 0});
  CHECK(sum(e).item<double>() == 0);
  CHECK(sum(e, {1}).sizes() == IntArrayRef({0}));
  CHECK(std::isnan(mean(e).item<double>()));
  CHECK(amax(e, {1}).sizes() == IntArrayRef({0}));
  CHECK_THROWS_WITH(amax(e, {0}), Contains("amax") && Contains("size 0"));
  CHECK_THROWS_WITH(argmax(e, 0), Contains("argmax") && Contains("size 0"));
  Tensor mm0 = matmul(zeros({2, 0}, kFloat64), zeros({0, 3}, kFloat64));
  CHECK(mm0.sizes() == IntArrayRef({2, 3}));
  CHECK_VALUES(mm0, {0, 0, 0, 0, 0, 0});
  CHECK(matmul(zeros({0, 4}), zeros({4, 3})).sizes() == IntArrayRef({0, 3}));
  CHECK(cat({zeros({0, 3}), ones({2, 3})}).sizes() == IntArrayRef({2, 3}));
  CHECK(softmax(zeros({0, 3}), 1).numel() == 0);
  CHECK(index_select(seq({3, 2}), 0, zeros({0}, kInt64)).sizes() == IntArrayRef({0, 2}));
}

TEST_CASE("shape mismatches raise errors naming the op and both shapes") {
  Tensor a = zeros({2, 3}), b = zeros({4});
  for (auto [name, fn] : std::vector<std::pair<const char*, std::function<Tensor()>>>{
           {"add", [&] { return add(a, b); }},
           {"sub", [&] { return sub(a, b); }},
           {"mul", [&] { return mul(a, b); }},
           {"div", [&] { return div(a, b); }},
           {"pow", [&] { return pow(a, b); }},
           {"maximum", [&] { return maximum(a, b); }},
           {"minimum", [&] { return minimum(a, b); }},
           {"eq", [&] { return eq(a, b); }},
           {"lt", [&] { return lt(a, b); }},
           {"where",
            [&] {
              return where(zeros({2, 3}, kBool), a, b);
            }},
       }) {
    INFO(name);
    CHECK_THROWS_WITH(fn(), Contains(std::string(name) + ":") && Contains("[2, 3]") && Contains("[4]") &&
                                Contains("cannot be broadcast"));
  }
  CHECK_THROWS_WITH(matmul(zeros({2, 3}), zeros({4, 5})),
                    Contains("matmul") && Contains("[2, 3]") && Contains("[4, 5]") && Contains("3 != 4"));
  CHECK_THROWS_WITH(matmul(zeros({2, 2, 3}), zeros({3, 3, 4})), Contains("matmul") && Contains("broadcast"));
  CHECK_THROWS_WITH(matmul(zeros({}), zeros({3})), Contains("matmul") && Contains("0-dim"));
  CHECK_THROWS_WITH(matmul(zeros({3}, kInt64), zeros({3}, kInt64)), Contains("matmul") && Contains("int64"));
  CHECK_THROWS_WITH(mm(zeros({2, 3, 4}), zeros({4, 5})), Contains("mm") && Contains("[2, 3, 4]"));
  CHECK_THROWS_WITH(cat({zeros({2, 3}), zeros({2, 4})}, 0),
                    Contains("cat") && Contains("[2, 4]") && Contains("[2, 3]") && Contains("tensor 1"));
  CHECK_THROWS_WITH(cat({zeros({2, 3}), zeros({3})}, 0), Contains("cat") && Contains("tensor 1 has 1 dims"));
  CHECK_THROWS_WITH(cat({}, 0), Contains("cat") && Contains("non-empty"));
  CHECK_THROWS_WITH(cat({zeros({})}, 0), Contains("cat") && Contains("zero-dim"));
  CHECK_THROWS_WITH(stack({zeros({2, 3}), zeros({3, 2})}, 0), Contains("stack") && Contains("tensor 1"));
  CHECK_THROWS_WITH(a.add_(zeros({3, 3})), Contains("add") && Contains("[3, 3]"));
  CHECK_THROWS_WITH(a.add_(zeros({2, 2, 3})), Contains("add_") && Contains("[2, 2, 3]") && Contains("[2, 3]"));
}

// ---------------------------------------------------------------------------------------------
// Device mismatches
// ---------------------------------------------------------------------------------------------

TEST_CASE("every multi-input op refuses operands on two devices, naming the op and both devices") {
  const Device d0("cpu:0"), d1("cpu:1");
  Tensor a = ones({2, 3}, TensorOptions(kFloat64).device(d0));
  Tensor b = ones({2, 3}, TensorOptions(kFloat64).device(d1));
  Tensor idx0 = zeros({2}, TensorOptions(kInt64).device(d0)), idx1 = zeros({2}, TensorOptions(kInt64).device(d1));
  Tensor gidx1 = zeros({2, 3}, TensorOptions(kInt64).device(d1));
  Tensor cond1 = ones({2, 3}, TensorOptions(kBool).device(d1));
  std::vector<std::pair<std::string, std::function<void()>>> cases = {
      {"add", [&] { add(a, b); }},
      {"sub", [&] { sub(a, b); }},
      {"mul", [&] { mul(a, b); }},
      {"div", [&] { div(a, b); }},
      {"pow", [&] { pow(a, b); }},
      {"maximum", [&] { maximum(a, b); }},
      {"minimum", [&] { minimum(a, b); }},
      {"eq", [&] { eq(a, b); }},
      {"ne", [&] { ne(a, b); }},
      {"lt", [&] { lt(a, b); }},
      {"le", [&] { le(a, b); }},
      {"gt", [&] { gt(a, b); }},
      {"ge", [&] { ge(a, b); }},
      {"logical_and", [&] { logical_and(a, b); }},
      {"logical_or", [&] { logical_or(a, b); }},
      {"where", [&] { where(cond1, a, a); }},
      {"where",
       [&] {
         where(native::ones({2, 3}, kBool, d0), a, b);
       }},
      {"matmul", [&] { matmul(a, b.t()); }},
      {"mm", [&] { mm(a, b.t()); }},
      {"cat",
       [&] {
         cat({a, b});
       }},
      {"stack",
       [&] {
         stack({a, b});
       }},
      {"index_select", [&] { index_select(a, 0, idx1); }},
      {"index_add", [&] { index_add(a, 0, idx0, b); }},
      {"gather", [&] { gather(a, 1, gidx1); }},
      {"scatter_add", [&] { scatter_add(a, 1, gidx1, a); }},
      {"add", [&] { operator+(a, b); }},
      {"add",
       [&] {
         Tensor c = a.clone();
         NoGradGuard g;
         c.add_(b);
       }},
      {"mul",
       [&] {
         Tensor c = a.clone();
         NoGradGuard g;
         c.mul_(b);
       }},
      {"native add", [&] { native::binary(BinaryOp::Add, a, b); }},
      {"native mm", [&] { native::mm(a, b.t()); }},
  };
  for (auto& [name, fn] : cases) {
    INFO(name);
    const std::string op = name.rfind("native ", 0) == 0 ? name.substr(7) : name;
    CHECK_THROWS_WITH(fn(), Contains(op + ":") && Contains("cpu:0") && Contains("cpu:1"));
  }
  // Single-device inputs on a non-default device work.
  CHECK(add(b, b).device() == d1);
  CHECK(matmul(b, b.t()).device() == d1);
  CHECK(cat({b, b}).device() == d1);
  // copy_ is the one op that moves data between devices.
  Tensor c = a.clone();
  c.copy_(b);
  CHECK(c.device() == d0);
}
