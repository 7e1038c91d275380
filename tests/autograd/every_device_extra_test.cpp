// Rows of the every-device table (tests/support/every_device_ops.h, run by every_device_test.cpp):
// scans, elementwise math, integration, rearranging, selection and scattered writes, and the
// indexed writes, membership and products of functions_index_more.h.
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
    // functions_index_more.h (the index tensors and the bool and int64 results are not differentiated)
    {"index_copy",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), idx({3, 0, 3}, {3}, d), seeded({3, 3}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return index_copy(x[0], 1, x[1], x[2]); },
      {true, false, true}}},
    {"index_fill",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), idx({-1, 0, 3}, {3}, d), seeded({}, 2, d)};
      },
      [](const std::vector<Tensor>& x) {
        return add(index_fill(x[0], 1, x[1], x[2]), index_fill(x[0], -1, x[1], 2.5));
      },
      {true, false, true}}},
    {"index_reduce",
     {[](Device d) {
        return std::vector<Tensor>{seeded({4, 3}, 1, d), idx({3, 0, 3}, {3}, d), seeded({3, 3}, 2, d)};
      },
      [](const std::vector<Tensor>& x) {
        Tensor out = index_reduce(x[0], 0, x[1], x[2], "prod");
        for (const char* r : {"mean", "amax", "amin"})
          out = add(out, add(index_reduce(x[0], 0, x[1], x[2], r), index_reduce(x[0], 0, x[1], x[2], r, false)));
        return out;
      },
      {true, false, true}}},
    {"put",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), idx({11, -2, 3, 11}, {2, 2}, d), seeded({4}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return add(put(x[0], x[1], x[2]), put(x[0], x[1], x[2], true)); },
      {true, false, true}}},
    {"argwhere", values_only(reduce([](const Tensor& a) { return argwhere(gt(a, zeros_like(a))); }))},
    {"isin", values_only(binary([](const Tensor& a, const Tensor& b) {
       return add(to(isin(round(a), round(b)), a.device(), kFloat64),
                  to(isin(round(a), 1.0, false, true), a.device(), kFloat64));
     }))},
    {"diagflat", reduce([](const Tensor& a) { return diagflat(a, -2); })},
    {"combinations", unary([](const Tensor& a) { return combinations(reshape(a, {-1}), 3, true); })},
    {"vander", unary([](const Tensor& a) { return vander(reshape(a, {-1}), 4, true); })},
    {"addcmul",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), seeded({4}, 2, d), seeded({3, 1}, 3, d)};
      },
      [](const std::vector<Tensor>& x) { return addcmul(x[0], x[1], x[2], -0.5); },
      {true, true, true}}},
    {"addcdiv",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), seeded({4}, 2, d), pos({3, 1}, 3, d)};
      },
      [](const std::vector<Tensor>& x) { return addcdiv(x[0], x[1], x[2], 2.0); },
      {true, true, true}}},
    {"addbmm",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 1}, 1, d), seeded({2, 3, 4}, 2, d), seeded({2, 4, 5}, 3, d)};
      },
      [](const std::vector<Tensor>& x) { return addbmm(x[0], x[1], x[2], 0.5, -2.0); },
      {true, true, true}}},
    {"addmv",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3}, 1, d), seeded({3, 4}, 2, d), seeded({4}, 3, d)};
      },
      [](const std::vector<Tensor>& x) { return addmv(x[0], x[1], x[2], 2.0, 0.5); },
      {true, true, true}}},
    {"addr",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), seeded({3}, 2, d), seeded({4}, 3, d)};
      },
      [](const std::vector<Tensor>& x) { return addr(x[0], x[1], x[2], 0.0, 1.5); },
      {false, true, true}}},
    {"chain_matmul",
     {[](Device d) {
        return std::vector<Tensor>{seeded({2, 5}, 1, d), seeded({5, 3}, 2, d), seeded({3, 4}, 3, d)};
      },
      [](const std::vector<Tensor>& x) { return chain_matmul(x); },
      {true, true, true}}},
    {"ger", binary([](const Tensor& a, const Tensor& b) { return ger(reshape(a, {-1}), b); })},
    {"vdot", binary([](const Tensor& a, const Tensor& b) { return vdot(select(a, 0, 1), b); })},
    {"logdet",
     unary([](const Tensor& a) { return logdet(add(matmul(a, transpose(a, 0, 1)), eye(3, on(a.device())))); })},
    {"pdist",
     reduce([](const Tensor& a) { return add(sum(pdist(select(a, 2, 0))), sum(pdist(select(a, 2, 1), 1.0))); })},
});

}  // namespace
