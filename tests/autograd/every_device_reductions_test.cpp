// Rows of the every-device table (tests/support/every_device_ops.h, run by every_device_test.cpp).
// Reductions, scans, order statistics and sorting (values, indices and gradients).
#include <wick/wick.h>

#include "support/every_device_ops.h"

using namespace wick;
using namespace wick::test::every_device;

namespace {

[[maybe_unused]] const bool registered = add_every_device_ops({
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
        return std::vector<Tensor>{round(seeded({3, 5, 2}, 3, d) * 2.0) * 0.5};
      },
      [](const std::vector<Tensor>& x) {
        auto [v, i] = mode(x[0], 1);
        auto [v2, i2] = mode(x[0], 0, true);
        return cat({v.flatten(), i.to(kFloat64).flatten(), v2.flatten(), i2.to(kFloat64).flatten()});
      },
      {true}}},
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
});

// Counting and searching on the host (Note [Host ops] in autograd/src/host_ops.h): results on the
// input's device, no gradient.
Tensor triple(const std::tuple<Tensor, Tensor, Tensor>& r) {
  return cat({std::get<0>(r).flatten(), std::get<1>(r).to(kFloat64).flatten(), std::get<2>(r).to(kFloat64)});
}
OpCase ties(std::function<Tensor(const Tensor&)> f) {
  return values_only({[](Device d) {
                        return std::vector<Tensor>{round(seeded({4, 3}, 5, d))};
                      },
                      [f](const std::vector<Tensor>& x) { return f(x[0]); },
                      {false}});
}
[[maybe_unused]] const bool registered_counting = add_every_device_ops({
    {"unique", ties([](const Tensor& a) {
       return cat({triple(unique(a, true, true, true)), triple(unique(a, true, true, true, 1))});
     })},
    {"unique_dim", ties([](const Tensor& a) { return triple(unique_dim(a, 0, true, true, true)); })},
    {"unique_consecutive",
     ties([](const Tensor& a) { return triple(unique_consecutive(std::get<0>(sort(a.flatten())), true, true)); })},
    {"bincount", ties([](const Tensor& a) {
       const Tensor x = abs(a).to(kInt64).flatten();
       return cat({bincount(x, {}, 5).to(kFloat64), bincount(x, a.flatten())});
     })},
    {"histc", values_only(reduce([](const Tensor& a) {
       return cat({histc(a, 7), histc(a, 4, -1, 0.5)});
     }))},
    {"searchsorted", values_only(reduce([](const Tensor& a) {
       const Tensor b = std::get<0>(sort(a.flatten()));
       const Tensor rows = std::get<0>(sort(a.view({6, 5}), 1));
       return cat({searchsorted(b, a).flatten(), searchsorted(rows, a.view({6, 5}), false, true).flatten(),
                   searchsorted(a.flatten(), a.flatten(), false, false, "right", argsort(a.flatten()))})
           .to(kFloat64);
     }))},
    {"bucketize", values_only(reduce([](const Tensor& a) {
       return bucketize(a, std::get<0>(sort(a.flatten())).narrow(0, 3, 10), false, true).to(kFloat64);
     }))},
});

}  // namespace
