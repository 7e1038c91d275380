// Rows of the every-device table (tests/support/every_device_ops.h, run by every_device_test.cpp).
// Statistics (functions_stats.h): NaN-ignoring reductions, quantiles, moments, counts, covariance
// and cumulative integration. NaNs are planted where the op skips them; their gradient is 0.
#include <wick/wick.h>

#include <limits>

#include "support/every_device_ops.h"

using namespace wick;
using namespace wick::test::every_device;

namespace {

// The reduce() input [3, 5, 2] with a NaN at every 7th element (none where noted).
Tensor holes(const Tensor& a) {
  const Tensor pos = arange(0, a.numel(), 1, TensorOptions(kInt64).device(a.device())).view(a.sizes());
  return where(remainder(pos, Scalar(7)).eq(0), Scalar(std::numeric_limits<double>::quiet_NaN()), a);
}
Tensor both(const std::tuple<Tensor, Tensor>& t) { return cat({std::get<0>(t).flatten(), std::get<1>(t).flatten()}); }

[[maybe_unused]] const bool registered = add_every_device_ops({
    {"nansum", reduce([](const Tensor& a) {
       const Tensor h = holes(a);
       return cat({nansum(h).reshape({1}), nansum(h, {1}).flatten(), nansum(h, {0, 2}, true).flatten()});
     })},
    {"nanmean", reduce([](const Tensor& a) {
       const Tensor h = holes(a);
       return cat({nanmean(h).reshape({1}), nanmean(h, {1}, true).flatten()});
     })},
    {"nanmedian", reduce([](const Tensor& a) {
       const Tensor h = holes(a);
       Tensor v, i;
       std::tie(v, i) = nanmedian(h, 1);
       return cat({v.flatten(), i.to(kFloat64).flatten(), nanmedian(h).reshape({1})});
     })},
    {"quantile",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 5, 2}, 3, d), tensor({0.1, 0.5, 0.8}, on(d))};
      },
      [](const std::vector<Tensor>& x) {
        return cat({quantile(x[0], x[1], 1).flatten(), quantile(x[0], 0.3, std::nullopt, true, "midpoint").flatten(),
                    quantile(x[0], x[1], 0, false, "nearest").flatten()});
      },
      {true, true}}},
    {"nanquantile",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 5, 2}, 3, d), tensor({0.25, 0.6}, on(d))};
      },
      [](const std::vector<Tensor>& x) {
        const Tensor h = holes(x[0]);
        return cat({nanquantile(h, x[1], 1).flatten(), nanquantile(h, 0.4, 2, true, "lower").flatten()});
      },
      {true, true}}},
    {"std_mean", reduce([](const Tensor& a) {
       return cat({both(std_mean(a)), both(std_mean(a, {1}, false, true)),
                   both(std_mean(a, {0, 2}, std::optional<int64_t>(2), false))});
     })},
    {"var_mean", reduce([](const Tensor& a) {
       return cat({both(var_mean(a)), both(var_mean(a, {2}, true, false)),
                   both(var_mean(a, {0}, std::optional<int64_t>(0), true))});
     })},
    {"aminmax", values_only(reduce([](const Tensor& a) {
       return cat({both(aminmax(a)), both(aminmax(holes(a), 1)), both(aminmax(a, -1, true))});
     }))},
    {"count_nonzero", values_only(reduce([](const Tensor& a) {
       const Tensor z = where(abs(a).lt(0.5), Scalar(0.0), holes(a));
       return cat({count_nonzero(z).reshape({1}), count_nonzero(z, {0, 2})}).to(kFloat64);
     }))},
    {"cov",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 5}, 3, d), pos({5}, 4, d)};
      },
      [](const std::vector<Tensor>& x) {
        const Tensor f = tensor(std::vector<int64_t>{1, 2, 0, 3, 1}, {5}).to(x[0].device());
        return cat({cov(x[0]).flatten(), cov(x[0], 2, f, x[1]).flatten(), cov(x[0].select(0, 1), 0).reshape({1})});
      },
      {true, true}}},
    {"corrcoef",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 5}, 3, d)};
      },
      [](const std::vector<Tensor>& x) { return corrcoef(x[0]); },
      {true}}},
    {"cumulative_trapezoid",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 5, 2}, 3, d), seeded({5}, 4, d)};
      },
      [](const std::vector<Tensor>& x) {
        return cat({cumulative_trapezoid(x[0], x[1], 1).flatten(), cumulative_trapezoid(x[0], 0.5, 0).flatten()});
      },
      {true, true}}},
});

}  // namespace
