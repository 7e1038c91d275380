// Rows of the every-device table (tests/support/every_device_ops.h, run by every_device_test.cpp).
// Elementwise ops: arithmetic, unary math, comparisons and logic, the NaN/inf predicates and the
// closeness tests.
#include <wick/wick.h>

#include "support/every_device_ops.h"

using namespace wick;
using namespace wick::test::every_device;

namespace {

[[maybe_unused]] const bool registered = add_every_device_ops({
    {"add", binary([](const Tensor& a, const Tensor& b) { return add(a, b, 0.5); })},
    {"sub", binary([](const Tensor& a, const Tensor& b) { return sub(a, b, 2); })},
    {"mul", binary([](const Tensor& a, const Tensor& b) { return mul(a, b); })},
    {"div",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), pos({4}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return div(x[0], x[1]); },
      {true, true}}},
    {"pow",
     {[](Device d) {
        return std::vector<Tensor>{pos({3, 4}, 1, d), seeded({3, 4}, 2, d)};
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
        return std::vector<Tensor>{seeded({3, 4}, 1, d), seeded({3, 4}, 2, d), seeded({4}, 3, d)};
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
    {"silu", unary([](const Tensor& a) { return silu(a); })},
});

}  // namespace
