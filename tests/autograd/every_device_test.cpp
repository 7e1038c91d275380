// Every op of functions.h, one test body on every test device (tests/support/devices.h), compared
// with the same call on cpu:0: forward values and, for differentiable ops, the gradient of every
// input under a random upstream gradient. Two CPU devices run the same kernels, so they must
// agree bit for bit; another device type agrees to rtol 1e-12 in float64 (reductions may sum in
// another order). A last case reads functions.h and fails on any function that is neither
// in the table nor exempted with a reason, so a new op cannot skip this test silently.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "support/allclose.h"
#include "support/devices.h"

using namespace wick;

namespace {

// One op: builds its inputs on `d` (deterministic: the same values for every device) and calls
// the op. `diff` marks the inputs whose gradients are compared.
struct OpCase {
  std::function<std::vector<Tensor>(Device)> inputs;
  std::function<Tensor(const std::vector<Tensor>&)> call;
  std::vector<bool> diff;
  std::function<Tensor(Device)> make;  ///< set for factories instead of inputs and call
};

// Deterministic float64 values, the same on every device (made on the CPU, then moved).
Tensor data(IntArrayRef shape, uint64_t seed, Device d, double shift = 0.0) {
  manual_seed(seed);
  Tensor t = randn(shape, kFloat64);
  if (shift != 0.0) t = add(abs(t), scalar_tensor(shift, kFloat64));
  return t.to(d);
}
Tensor pos(IntArrayRef shape, uint64_t seed, Device d) { return data(shape, seed, d, 0.5); }
// `a` with NaN, +inf and -inf planted by value: above 0.5 +inf, below -0.5 NaN, in [-0.5, 0)
// -inf, the rest kept (randn data has all four kinds).
Tensor specials(const Tensor& a) {
  const Tensor zero = zeros_like(a);
  return where(gt(a, full_like(a, 0.5)), div(abs(a), zero),
               where(lt(a, full_like(a, -0.5)), div(zero, zero), where(lt(a, zero), div(a, zero), a)));
}
Tensor idx(std::vector<int64_t> v, IntArrayRef shape, Device d) {
  return tensor(v, shape, TensorOptions(kInt64)).to(d);
}

OpCase unary(std::function<Tensor(const Tensor&)> f, bool positive = false) {
  return {[positive](Device d) {
            return std::vector<Tensor>{positive ? pos({3, 4}, 1, d) : data({3, 4}, 1, d)};
          },
          [f](const std::vector<Tensor>& x) { return f(x[0]); },
          {true}};
}
OpCase binary(std::function<Tensor(const Tensor&, const Tensor&)> f, bool diff = true) {
  return {[](Device d) {
            return std::vector<Tensor>{data({3, 4}, 1, d), data({4}, 2, d)};
          },
          [f](const std::vector<Tensor>& x) { return f(x[0], x[1]); },
          {diff, diff}};
}
OpCase reduce(std::function<Tensor(const Tensor&)> f, bool diff = true) {
  return {[](Device d) {
            return std::vector<Tensor>{data({3, 5, 2}, 3, d)};
          },
          [f](const std::vector<Tensor>& x) { return f(x[0]); },
          {diff}};
}
// A factory: the device is its only input.
OpCase factory(std::function<Tensor(Device)> f) { return {{}, {}, {}, std::move(f)}; }

// The same case, with no gradient compared (outputs that do not depend differentiably on inputs).
OpCase values_only(OpCase c) {
  c.diff.assign(c.diff.size(), false);
  return c;
}
TensorOptions on(Device d, DType t = kFloat64) { return TensorOptions(t).device(d); }

const std::map<std::string, OpCase>& ops() {
  static const std::map<std::string, OpCase> table = {
      // factories (random ones draw the same counters on every device)
      {"zeros", factory([](Device d) {
         return zeros({2, 3}, on(d));
       })},
      {"ones", factory([](Device d) {
         return ones({2, 3}, on(d));
       })},
      {"full", factory([](Device d) {
         return full({2, 3}, 2.5, on(d));
       })},
      {"arange", factory([](Device d) { return arange(1, 10, 3, on(d)); })},
      {"linspace", factory([](Device d) { return linspace(-1, 1, 7, on(d)); })},
      {"eye", factory([](Device d) { return eye(3, 4, on(d)); })},
      {"rand", factory([](Device d) {
         manual_seed(5);
         return rand({50}, on(d, kFloat32));
       })},
      {"randn", factory([](Device d) {
         manual_seed(5);
         return randn({50}, on(d));
       })},
      {"randint", factory([](Device d) {
         manual_seed(5);
         return randint(-4, 9, {50}, on(d, kInt64));
       })},
      {"zeros_like", values_only(unary([](const Tensor& a) { return zeros_like(a); }))},
      {"ones_like", values_only(unary([](const Tensor& a) { return ones_like(a); }))},
      {"full_like", values_only(unary([](const Tensor& a) { return full_like(a, -1.5); }))},
      {"rand_like", values_only(unary([](const Tensor& a) {
         manual_seed(6);
         return rand_like(a);
       }))},
      {"randn_like", values_only(unary([](const Tensor& a) {
         manual_seed(6);
         return randn_like(a);
       }))},
      {"scalar_tensor", factory([](Device d) { return scalar_tensor(3.25, on(d)); })},
      {"tensor", factory([](Device d) {
         return tensor({1.0, 2.0, 3.0, 4.0}, {2, 2}, on(d));
       })},
      // elementwise
      {"add", binary([](const Tensor& a, const Tensor& b) { return add(a, b, 0.5); })},
      {"sub", binary([](const Tensor& a, const Tensor& b) { return sub(a, b, 2); })},
      {"mul", binary([](const Tensor& a, const Tensor& b) { return mul(a, b); })},
      {"div",
       {[](Device d) {
          return std::vector<Tensor>{data({3, 4}, 1, d), pos({4}, 2, d)};
        },
        [](const std::vector<Tensor>& x) { return div(x[0], x[1]); },
        {true, true}}},
      {"pow",
       {[](Device d) {
          return std::vector<Tensor>{pos({3, 4}, 1, d), data({3, 4}, 2, d)};
        },
        [](const std::vector<Tensor>& x) { return add(pow(x[0], x[1]), pow(x[0], 2.5)); },
        {true, true}}},
      {"maximum", binary([](const Tensor& a, const Tensor& b) { return maximum(a, b); })},
      {"minimum", binary([](const Tensor& a, const Tensor& b) { return minimum(a, b); })},
      {"neg", unary([](const Tensor& a) { return neg(a); })},
      {"abs", unary([](const Tensor& a) { return abs(a); })},
      {"exp", unary([](const Tensor& a) { return exp(a); })},
      {"log", unary([](const Tensor& a) { return log(a); }, true)},
      {"sqrt", unary([](const Tensor& a) { return sqrt(a); }, true)},
      {"rsqrt", unary([](const Tensor& a) { return rsqrt(a); }, true)},
      {"tanh", unary([](const Tensor& a) { return tanh(a); })},
      {"sigmoid", unary([](const Tensor& a) { return sigmoid(a); })},
      {"relu", unary([](const Tensor& a) { return relu(a); })},
      {"gelu", unary([](const Tensor& a) { return gelu(a); })},
      {"sin", unary([](const Tensor& a) { return sin(a); })},
      {"cos", unary([](const Tensor& a) { return cos(a); })},
      {"square", unary([](const Tensor& a) { return square(a); })},
      {"reciprocal", unary([](const Tensor& a) { return reciprocal(a); }, true)},
      {"sign", values_only(unary([](const Tensor& a) { return sign(a); }))},
      {"erf", unary([](const Tensor& a) { return erf(a); })},
      {"log1p", unary([](const Tensor& a) { return log1p(a); }, true)},
      {"expm1", unary([](const Tensor& a) { return expm1(a); })},
      {"floor", unary([](const Tensor& a) { return floor(a); })},
      {"ceil", unary([](const Tensor& a) { return ceil(a); })},
      {"round", unary([](const Tensor& a) { return round(a); })},
      {"trunc", unary([](const Tensor& a) { return trunc(a); })},
      {"frac", unary([](const Tensor& a) { return frac(a); })},
      {"remainder", binary([](const Tensor& a, const Tensor& b) { return add(remainder(a, b), remainder(a, 0.7)); })},
      {"fmod", binary([](const Tensor& a, const Tensor& b) { return add(fmod(a, b), fmod(a, -0.7)); })},
      {"atan2", binary([](const Tensor& a, const Tensor& b) { return atan2(a, b); })},
      {"tan", unary([](const Tensor& a) { return tan(a); })},
      {"asin", unary([](const Tensor& a) { return asin(tanh(a)); })},  // tanh: inside (-1, 1)
      {"acos", unary([](const Tensor& a) { return acos(tanh(a)); })},
      {"atan", unary([](const Tensor& a) { return atan(a); })},
      {"sinh", unary([](const Tensor& a) { return sinh(a); })},
      {"cosh", unary([](const Tensor& a) { return cosh(a); })},
      {"asinh", unary([](const Tensor& a) { return asinh(a); })},
      {"acosh", unary([](const Tensor& a) { return acosh(add(a, ones_like(a))); }, true)},  // above 1
      {"atanh", unary([](const Tensor& a) { return atanh(tanh(a)); })},
      {"clamp", unary([](const Tensor& a) { return clamp(a, Scalar(-0.5), Scalar(0.7)); })},
      {"where",
       {[](Device d) {
          return std::vector<Tensor>{data({3, 4}, 1, d), data({3, 4}, 2, d), data({4}, 3, d)};
        },
        [](const std::vector<Tensor>& x) {
          const Tensor c = gt(x[0], zeros_like(x[0]));
          return add(add(where(c, x[1], x[2]), where(c, x[1], 0.5)), add(where(c, -1.0, x[2]), where(c, 2.0, 3.0)));
        },
        {false, true, true}}},
      {"eq", binary([](const Tensor& a, const Tensor& b) { return eq(a, where(gt(b, zeros_like(b)), b, a)); }, false)},
      {"ne", binary([](const Tensor& a, const Tensor& b) { return ne(a, b); }, false)},
      {"lt", binary([](const Tensor& a, const Tensor& b) { return lt(a, b); }, false)},
      {"le", binary([](const Tensor& a, const Tensor& b) { return le(a, b); }, false)},
      {"gt", binary([](const Tensor& a, const Tensor& b) { return gt(a, b); }, false)},
      {"ge", binary([](const Tensor& a, const Tensor& b) { return ge(a, b); }, false)},
      {"logical_not", values_only(unary([](const Tensor& a) { return logical_not(gt(a, zeros_like(a))); }))},
      {"logical_and",
       binary([](const Tensor& a, const Tensor& b) { return logical_and(gt(a, b), lt(a, ones_like(a))); }, false)},
      {"logical_or",
       binary([](const Tensor& a, const Tensor& b) { return logical_or(gt(a, b), lt(a, ones_like(a))); }, false)},
      // reductions
      {"sum", reduce([](const Tensor& a) {
         return add(sum(a, {0, 2}), sum(a));
       })},
      {"mean", reduce([](const Tensor& a) { return add(mean(a, {1}, true), mean(a)); })},
      {"amax", reduce([](const Tensor& a) { return amax(a, {1}); })},
      {"amin", reduce([](const Tensor& a) {
         return amin(a, {0, 2}, true);
       })},
      {"max", reduce([](const Tensor& a) {
         auto [v, i] = max(a, 1);
         return add(add(v, i.to(kFloat64)), max(a));
       })},
      {"min", reduce([](const Tensor& a) {
         auto [v, i] = min(a, 2, true);
         return add(add(v, i.to(kFloat64)), min(a));
       })},
      {"argmax", reduce([](const Tensor& a) { return argmax(a, 1); }, false)},
      {"argmin", reduce([](const Tensor& a) { return argmin(a, 0, true); }, false)},
      {"var", reduce([](const Tensor& a) {
         return add(add(var(a, {1}, true), var(a)), var(a, {1}, std::optional<int64_t>(0), false));
       })},
      {"logsumexp", reduce([](const Tensor& a) { return logsumexp(a, {2}); })},
      {"softmax", reduce([](const Tensor& a) { return softmax(a, 1); })},
      {"log_softmax", reduce([](const Tensor& a) { return log_softmax(a, -1); })},
      // linear algebra
      {"matmul",
       {[](Device d) {
          return std::vector<Tensor>{data({2, 3, 4}, 1, d), data({4, 5}, 2, d)};
        },
        [](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); },
        {true, true}}},
      {"mm",
       {[](Device d) {
          return std::vector<Tensor>{data({3, 4}, 1, d), data({4, 5}, 2, d)};
        },
        [](const std::vector<Tensor>& x) { return mm(x[0], x[1]); },
        {true, true}}},
      {"linear",
       {[](Device d) {
          return std::vector<Tensor>{data({6, 4}, 1, d), data({3, 4}, 2, d), data({3}, 3, d)};
        },
        [](const std::vector<Tensor>& x) { return linear(x[0], x[1], x[2]); },
        {true, true, true}}},
      // shapes and views
      {"view", reduce([](const Tensor& a) {
         return view(a, {6, 5});
       })},
      {"reshape", reduce([](const Tensor& a) { return reshape(transpose(a, 0, 1), {-1}); })},
      {"transpose", reduce([](const Tensor& a) {
         Tensor t = transpose(a, 0, 2);
         return add(t, t);
       })},
      {"permute", reduce([](const Tensor& a) {
         return contiguous(permute(a, {2, 0, 1}));
       })},
      {"narrow", reduce([](const Tensor& a) { return narrow(a, 1, 1, 3); })},
      {"slice", reduce([](const Tensor& a) { return slice(a, 1, 0, 5, 2); })},
      {"select", reduce([](const Tensor& a) { return select(a, 1, 3); })},
      {"expand",
       {[](Device d) {
          return std::vector<Tensor>{data({1, 4}, 1, d)};
        },
        [](const std::vector<Tensor>& x) {
          return mul(expand(x[0], {3, 4}), arange(12, on(x[0].device())).view({3, 4}));
        },
        {true}}},
      {"squeeze",
       {[](Device d) {
          return std::vector<Tensor>{data({3, 1, 2}, 1, d)};
        },
        [](const std::vector<Tensor>& x) { return add(squeeze(x[0]), squeeze(x[0], 1)); },
        {true}}},
      {"unsqueeze", reduce([](const Tensor& a) { return unsqueeze(a, 1); })},
      {"flatten", reduce([](const Tensor& a) { return flatten(a, 1); })},
      {"contiguous", reduce([](const Tensor& a) { return contiguous(transpose(a, 1, 2)); })},
      {"clone", reduce([](const Tensor& a) { return clone(a); })},
      {"to", reduce([](const Tensor& a) { return to(a, a.device(), kFloat32).to(kFloat64); })},
      {"sum_to", reduce([](const Tensor& a) {
         return sum_to(a, {5, 1});
       })},
      {"cat", binary([](const Tensor& a, const Tensor& b) {
         return cat({a, unsqueeze(b, 0)}, 0);
       })},
      {"stack", binary([](const Tensor& a, const Tensor& b) {
         return stack({select(a, 0, 1), b}, 1);
       })},
      {"split", reduce([](const Tensor& a) { return exp(split(a, 2, 1)[1]); })},
      {"split_with_sizes", reduce([](const Tensor& a) {
         return split_with_sizes(a, {1, 4}, 1)[1];
       })},
      {"chunk", reduce([](const Tensor& a) { return chunk(a, 2, 0)[1]; })},
      // indexing
      {"index_select",
       {[](Device d) {
          return std::vector<Tensor>{data({4, 3}, 1, d), idx({3, 0, 3}, {3}, d)};
        },
        [](const std::vector<Tensor>& x) { return index_select(x[0], 0, x[1]); },
        {true, false}}},
      {"index_add",
       {[](Device d) {
          return std::vector<Tensor>{data({4, 3}, 1, d), idx({3, 0, 3}, {3}, d), data({3, 3}, 2, d)};
        },
        [](const std::vector<Tensor>& x) { return index_add(x[0], 0, x[1], x[2]); },
        {true, false, true}}},
      {"gather",
       {[](Device d) {
          return std::vector<Tensor>{data({3, 4}, 1, d), idx({0, 3, 3, 1, 2, 0}, {3, 2}, d)};
        },
        [](const std::vector<Tensor>& x) { return gather(x[0], 1, x[1]); },
        {true, false}}},
      {"scatter_add",
       {[](Device d) {
          return std::vector<Tensor>{data({3, 4}, 1, d), idx({0, 3, 3, 1, 2, 0}, {3, 2}, d), data({3, 2}, 2, d)};
        },
        [](const std::vector<Tensor>& x) { return scatter_add(x[0], 1, x[1], x[2]); },
        {true, false, true}}},
      // the tensor API of issue 14
      {"isnan", values_only(unary([](const Tensor& a) { return isnan(specials(a)); }))},
      {"isinf", values_only(unary([](const Tensor& a) { return isinf(specials(a)); }))},
      {"isfinite", values_only(unary([](const Tensor& a) { return isfinite(specials(a)); }))},
      {"isclose",
       binary([](const Tensor& a, const Tensor& b) { return isclose(a, add(a, mul(b, full_like(b, 1e-6)))); }, false)},
      {"allclose", binary(
                       [](const Tensor& a, const Tensor& b) {
                         return scalar_tensor(allclose(a, add(a, mul(b, full_like(b, 1e-9)))) ? 1.0 : 0.0,
                                              on(a.device()));
                       },
                       false)},
      {"equal", binary(
                    [](const Tensor& a, const Tensor& b) {
                      return scalar_tensor((equal(a, clone(a)) ? 1.0 : 0.0) + (equal(a, add(a, b)) ? 2.0 : 0.0),
                                           on(a.device()));
                    },
                    false)},
      {"all", values_only(reduce([](const Tensor& a) {
         return cat({all(gt(a, full_like(a, -2.0))).reshape({1}), all(gt(a, zeros_like(a)), 1).flatten()});
       }))},
      {"any", values_only(reduce([](const Tensor& a) {
         return cat({any(gt(a, full_like(a, 2.0))).reshape({1}), any(gt(a, zeros_like(a)), 2, true).flatten()});
       }))},
      {"std", reduce([](const Tensor& a) {
         return cat({wick::std(a).reshape({1}), wick::std(a, {1}, false).flatten(),
                     wick::std(a, {0, 2}, std::optional<int64_t>(0), true).flatten()});
       })},
      {"norm", reduce([](const Tensor& a) {
         return cat({norm(a).reshape({1}), norm(a, 1.0, {1}).flatten(), norm(a, INFINITY, {2}, true).flatten()});
       })},
      {"cumsum", reduce([](const Tensor& a) { return cumsum(a, 1); })},
      {"cumprod", reduce([](const Tensor& a) { return cumprod(a, 1); })},
      {"prod", reduce([](const Tensor& a) {
         return cat({prod(a).reshape({1}), prod(a, 1).flatten(), prod(a, 2, true).flatten()});
       })},
      {"kthvalue", reduce([](const Tensor& a) {
         auto [v, i] = kthvalue(a, 2, 1);
         return add(v, i.to(kFloat64));
       })},
      {"median", reduce([](const Tensor& a) {
         auto [v, i] = median(a, 1);
         return cat({v.flatten(), i.to(kFloat64).flatten(), median(a).reshape({1})});
       })},
      {"mode",
       {[](Device d) {
          // Halves (randn rounded to 0.5), so each slice has repeats; the gradient goes to the index.
          return std::vector<Tensor>{round(data({3, 5, 2}, 3, d) * 2.0) * 0.5};
        },
        [](const std::vector<Tensor>& x) {
          auto [v, i] = mode(x[0], 1);
          auto [v2, i2] = mode(x[0], 0, true);
          return cat({v.flatten(), i.to(kFloat64).flatten(), v2.flatten(), i2.to(kFloat64).flatten()});
        },
        {true}}},
      {"masked_fill", reduce([](const Tensor& a) {
         return add(masked_fill(a, gt(a, zeros_like(a)), 0.5),
                    masked_fill(a, lt(a, zeros_like(a)), scalar_tensor(-2.0, on(a.device()))));
       })},
      {"tril",
       {[](Device d) {
          return std::vector<Tensor>{data({4, 5}, 1, d)};
        },
        [](const std::vector<Tensor>& x) { return add(tril(x[0]), tril(x[0], -1)); },
        {true}}},
      {"triu",
       {[](Device d) {
          return std::vector<Tensor>{data({4, 5}, 1, d)};
        },
        [](const std::vector<Tensor>& x) { return add(triu(x[0]), triu(x[0], 2)); },
        {true}}},
      {"bmm",
       {[](Device d) {
          return std::vector<Tensor>{data({2, 3, 4}, 1, d), data({2, 4, 5}, 2, d)};
        },
        [](const std::vector<Tensor>& x) { return bmm(x[0], x[1]); },
        {true, true}}},
      {"baddbmm",
       {[](Device d) {
          return std::vector<Tensor>{data({2, 3, 5}, 3, d), data({2, 3, 4}, 1, d), data({2, 4, 5}, 2, d)};
        },
        [](const std::vector<Tensor>& x) { return baddbmm(x[0], x[1], x[2], 0.5, 2.0); },
        {true, true, true}}},
      {"addmm",
       {[](Device d) {
          return std::vector<Tensor>{data({5}, 3, d), data({3, 4}, 1, d), data({4, 5}, 2, d)};
        },
        [](const std::vector<Tensor>& x) { return addmm(x[0], x[1], x[2], 2.0, -1.0); },
        {true, true, true}}},
      {"outer",
       {[](Device d) {
          return std::vector<Tensor>{data({3}, 1, d), data({4}, 2, d)};
        },
        [](const std::vector<Tensor>& x) { return outer(x[0], x[1]); },
        {true, true}}},
      {"dot",
       {[](Device d) {
          return std::vector<Tensor>{data({6}, 1, d), data({6}, 2, d)};
        },
        [](const std::vector<Tensor>& x) { return dot(x[0], x[1]); },
        {true, true}}},
      {"sort", reduce([](const Tensor& a) {
         auto [v, i] = sort(a, 1, true);
         auto [v2, i2] = sort(a, std::optional<bool>(true), 2, false);
         return cat({v.flatten(), i.to(kFloat64).flatten(), v2.flatten(), i2.to(kFloat64).flatten()});
       })},
      {"argsort", values_only(reduce([](const Tensor& a) { return argsort(a, 0, true); }))},
      {"topk", reduce([](const Tensor& a) {
         auto [v, i] = topk(a, 2, 1);
         return add(v, i.to(kFloat64));
       })},
      {"repeat", reduce([](const Tensor& a) {
         return repeat(a, {2, 1, 1, 3});
       })},
      {"flip", reduce([](const Tensor& a) {
         return flip(a, {0, 2});
       })},
      {"roll", reduce([](const Tensor& a) { return add(roll(a, {2}, {1}), roll(a, {-1})); })},
      {"diag",
       {[](Device d) {
          return std::vector<Tensor>{data({4, 5}, 1, d), data({3}, 2, d)};
        },
        [](const std::vector<Tensor>& x) { return add(diag(diag(x[0], 1)), diag(x[1], -1)); },
        {true, true}}},
      {"unbind", reduce([](const Tensor& a) { return unbind(a, 1)[3]; })},
      {"silu", unary([](const Tensor& a) { return silu(a); })},
      {"one_hot", factory([](Device d) {
         return one_hot(tensor(std::vector<int64_t>{2, 0, 4, 2}, {4}, TensorOptions(kInt64)).to(d), 6);
       })},
      {"multinomial", factory([](Device d) {
         manual_seed(8);
         Tensor p = tensor({0.1, 0.0, 0.5, 0.4, 0.2, 0.3, 0.0, 0.5}, {2, 4}, on(d));
         return cat({multinomial(p, 3, false), multinomial(p, 6, true)}, 1);
       })},
  };
  return table;
}

// Functions of functions.h this test does not call, each with the reason.
const std::map<std::string, std::string>& exempt() {
  static const std::map<std::string, std::string> e = {
      {"empty", "uninitialised memory: no value to compare"},
      {"empty_like", "uninitialised memory: no value to compare"},
      {"from_blob", "wraps host memory: CPU only by definition"},
  };
  return e;
}

// Forward value and input gradients of `c` on `d`.
std::vector<Tensor> run(const OpCase& c, Device d) {
  if (c.make) return {c.make(d)};
  std::vector<Tensor> in = c.inputs(d);
  for (size_t j = 0; j < in.size(); ++j)
    if (j < c.diff.size() && c.diff[j]) in[j] = in[j].detach().requires_grad_(true);
  Tensor out = c.call(in);
  std::vector<Tensor> result = {out};
  std::vector<Tensor> wrt;
  for (size_t j = 0; j < in.size(); ++j)
    if (j < c.diff.size() && c.diff[j]) wrt.push_back(in[j]);
  if (wrt.empty()) return result;
  REQUIRE(out.requires_grad());
  manual_seed(99);
  Tensor upstream = randn(out.sizes(), on(kCPU, out.dtype())).to(d);
  for (Tensor& g : autograd::grad({out}, wrt, {upstream})) result.push_back(g);
  return result;
}

}  // namespace

TEST_CASE("every device: each op of functions.h agrees with cpu:0, forward and backward") {
  for (const auto& [name, c] : ops()) {
    INFO(name << " on cpu:0");
    const std::vector<Tensor> reference = run(c, kCPU);
    for (const Device& d : test::test_devices()) {
      if (d == kCPU) continue;
      INFO(name << " on " << d);
      const std::vector<Tensor> got = run(c, d);
      REQUIRE(got.size() == reference.size());
      for (size_t k = 0; k < got.size(); ++k) {
        INFO((k == 0 ? std::string("forward") : "gradient " + std::to_string(k - 1)));
        CHECK(got[k].device() == d);
        CHECK(got[k].dtype() == reference[k].dtype());
        if (d.is_cpu()) {
          CHECK_ALLCLOSE(got[k], reference[k], 0.0, 0.0);  // the same kernels: bit for bit
        } else {
          CHECK_ALLCLOSE(got[k], reference[k], 1e-12, 1e-14);
        }
      }
    }
  }
}

TEST_CASE("every device: every function of functions.h is in the table or exempted with a reason") {
  const std::filesystem::path header = std::filesystem::path(WICK_TEST_DATA_DIR) / ".." / ".." / "autograd" /
                                       "include" / "wick" / "autograd" / "functions.h";
  std::ifstream in(header);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  // A declaration at the start of a line: a return type, then the function's name and '('.
  const std::regex decl(
      R"(\n(?:inline |template <[^>]*>\s*)?(?:Tensor&?|std::vector<Tensor>|std::tuple<[^>]*>|bool) ([a-z_0-9]+)\()");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), decl); it != std::sregex_iterator(); ++it)
    names.insert((*it)[1].str());
  CHECK(names.size() > 90);
  for (const std::string& n : names) {
    INFO(n);
    if (!ops().count(n) && !exempt().count(n))
      FAIL("functions.h declares '" << n << "', which tests/autograd/every_device_test.cpp neither runs nor exempts");
  }
}
