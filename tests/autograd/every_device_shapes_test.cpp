// Rows of the every-device table (tests/support/every_device_ops.h, run by every_device_test.cpp).
// Shapes, views, joins and splits, and indexing (gather/scatter, masks, triangles).
#include <wick/wick.h>

#include "support/every_device_ops.h"

using namespace wick;
using namespace wick::test::every_device;

namespace {

[[maybe_unused]] const bool registered = add_every_device_ops({
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
        return std::vector<Tensor>{seeded({1, 4}, 1, d)};
      },
      [](const std::vector<Tensor>& x) {
        return mul(expand(x[0], {3, 4}), arange(12, on(x[0].device())).view({3, 4}));
      },
      {true}}},
    {"squeeze",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 1, 2}, 1, d)};
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
    {"repeat", reduce([](const Tensor& a) {
       return repeat(a, {2, 1, 1, 3});
     })},
    {"flip", reduce([](const Tensor& a) {
       return flip(a, {0, 2});
     })},
    {"roll", reduce([](const Tensor& a) { return add(roll(a, {2}, {1}), roll(a, {-1})); })},
    {"diag",
     {[](Device d) {
        return std::vector<Tensor>{seeded({4, 5}, 1, d), seeded({3}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return add(diag(diag(x[0], 1)), diag(x[1], -1)); },
      {true, true}}},
    {"unbind", reduce([](const Tensor& a) { return unbind(a, 1)[3]; })},
    {"tril",
     {[](Device d) {
        return std::vector<Tensor>{seeded({4, 5}, 1, d)};
      },
      [](const std::vector<Tensor>& x) { return add(tril(x[0]), tril(x[0], -1)); },
      {true}}},
    {"triu",
     {[](Device d) {
        return std::vector<Tensor>{seeded({4, 5}, 1, d)};
      },
      [](const std::vector<Tensor>& x) { return add(triu(x[0]), triu(x[0], 2)); },
      {true}}},
    {"index_select",
     {[](Device d) {
        return std::vector<Tensor>{seeded({4, 3}, 1, d), idx({3, 0, 3}, {3}, d)};
      },
      [](const std::vector<Tensor>& x) { return index_select(x[0], 0, x[1]); },
      {true, false}}},
    {"index_add",
     {[](Device d) {
        return std::vector<Tensor>{seeded({4, 3}, 1, d), idx({3, 0, 3}, {3}, d), seeded({3, 3}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return index_add(x[0], 0, x[1], x[2]); },
      {true, false, true}}},
    {"gather",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), idx({0, 3, 3, 1, 2, 0}, {3, 2}, d)};
      },
      [](const std::vector<Tensor>& x) { return gather(x[0], 1, x[1]); },
      {true, false}}},
    {"scatter_add",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), idx({0, 3, 3, 1, 2, 0}, {3, 2}, d), seeded({3, 2}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return scatter_add(x[0], 1, x[1], x[2]); },
      {true, false, true}}},
    {"masked_fill", reduce([](const Tensor& a) {
       return add(masked_fill(a, gt(a, zeros_like(a)), 0.5),
                  masked_fill(a, lt(a, zeros_like(a)), scalar_tensor(-2.0, on(a.device()))));
     })},
});

// Building tensors from others (autograd/src/ops_construct.cpp).
[[maybe_unused]] const bool registered_building = add_every_device_ops({
    {"meshgrid", binary([](const Tensor& a, const Tensor& b) {
       const std::vector<Tensor> g = meshgrid({a.flatten(), b}, "xy");
       return add(g[0], mul(g[1], g[1]));
     })},
    {"cartesian_prod", binary([](const Tensor& a, const Tensor& b) {
       return cartesian_prod({select(a, 0, 1), b});
     })},
    {"diag_embed",
     reduce([](const Tensor& a) { return add(diag_embed(a, 1, 0, 2).sum({3}), a.diag_embed(-2).sum()); })},
    {"block_diag", binary([](const Tensor& a, const Tensor& b) {
       return block_diag({a, b, select(b, 0, 2)});
     })},
    {"kron", binary([](const Tensor& a, const Tensor& b) { return kron(a, b); })},
});

}  // namespace
