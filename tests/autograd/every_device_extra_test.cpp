// Rows of the every-device table (tests/support/every_device_ops.h, run by every_device_test.cpp):
// scans, elementwise math, integration, rearranging, selection and scattered writes.
#include <wick/wick.h>

#include "support/every_device_ops.h"

using namespace wick;
using namespace wick::test::every_device;

namespace {

[[maybe_unused]] const bool registered = add_every_device_ops({
    {"logcumsumexp", reduce([](const Tensor& a) { return add(logcumsumexp(a, 1), logcumsumexp(a, 0)); })},
    {"cummax", reduce([](const Tensor& a) {
       auto [v, i] = cummax(a, 1);
       return add(v, i.to(kFloat64));
     })},
    {"cummin", reduce([](const Tensor& a) {
       auto [v, i] = cummin(a, 0);
       return add(v, i.to(kFloat64));
     })},
    {"renorm", reduce([](const Tensor& a) { return renorm(a, 2, 1, 1.0); })},
    {"nan_to_num", reduce([](const Tensor& a) { return nan_to_num(specials(a), 0.5, 7.0, -7.0); })},
    {"logit", unary([](const Tensor& a) { return logit(sigmoid(a), 0.1); })},
    {"xlogy", binary([](const Tensor& a, const Tensor& b) {
       return add(xlogy(a, abs(b)), add(xlogy(2.0, abs(b)), xlogy(a, 3.0)));
     })},
    {"lerp",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), seeded({4}, 2, d), seeded({3, 1}, 3, d)};
      },
      [](const std::vector<Tensor>& x) { return add(lerp(x[0], x[1], x[2]), lerp(x[0], x[1], 0.7)); },
      {true, true, true}}},
    {"hypot", binary([](const Tensor& a, const Tensor& b) { return hypot(a, b); })},
    {"trapezoid", binary([](const Tensor& a, const Tensor& b) { return add(trapezoid(a, b), trapezoid(a, 0.5, 1)); })},
    {"trapz", binary([](const Tensor& a, const Tensor& b) { return add(trapz(a, b, 1), trapz(a, 2.0, -1)); })},
    {"rot90", reduce([](const Tensor& a) {
       return add(rot90(a, 1, {0, 1}), rot90(a, 3, {0, 1}));
     })},
    {"repeat_interleave",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), idx({2, 0, 1}, {3}, d)};
      },
      [](const std::vector<Tensor>& x) {
        return add(repeat_interleave(x[0], x[1], 0), narrow(repeat_interleave(x[0], 2, 1), 1, 0, 4));
      },
      {true, false}}},
    {"tile", reduce([](const Tensor& a) {
       return tile(a, {2, 1});
     })},
    {"masked_select", reduce([](const Tensor& a) { return masked_select(a, gt(a, zeros_like(a))); })},
    {"take_along_dim",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), idx({0, 3, 3, 1, 2, 0}, {3, 2}, d)};
      },
      [](const std::vector<Tensor>& x) { return take_along_dim(x[0], x[1], 1); },
      {true, false}}},
    {"scatter_reduce",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), idx({0, 3, 3, 1, 2, 0}, {3, 2}, d), seeded({3, 2}, 2, d)};
      },
      [](const std::vector<Tensor>& x) {
        Tensor out = scatter_reduce(x[0], 1, x[1], x[2], "sum");
        for (const char* r : {"prod", "mean", "amax", "amin"})
          out = add(out, add(scatter_reduce(x[0], 1, x[1], x[2], r), scatter_reduce(x[0], 1, x[1], x[2], r, false)));
        return out;
      },
      {true, false, true}}},
    {"index_put",
     {[](Device d) {
        return std::vector<Tensor>{seeded({4, 3}, 1, d), idx({3, 0, 3}, {3}, d), seeded({3, 3}, 2, d)};
      },
      [](const std::vector<Tensor>& x) {
        return add(index_put(x[0], {x[1]}, x[2], true), index_put(x[0], {x[1]}, x[2]));
      },
      {true, false, true}}},
    {"tensordot", binary([](const Tensor& a, const Tensor& b) { return tensordot(a, b, {1}, {0}); })},
});

}  // namespace
