#pragma once
// The table of tests/autograd/every_device_test.cpp: one row per function of functions.h, each
// building its inputs on a device and calling the op. The rows live in the every_device_*_test.cpp
// files of tests/autograd, one group of ops each; each file adds its rows at static initialisation
// with add_every_device_ops(), and the test reads the whole table from every_device_ops() when it
// runs. Everything here is inline, so the files may compile in one batch (Note [Test batches]).
#include <wick/wick.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace wick::test::every_device {

// One op: builds its inputs on `d` (deterministic: the same values for every device) and calls
// the op. `diff` marks the inputs whose gradients are compared.
struct OpCase {
  std::function<std::vector<Tensor>(Device)> inputs;
  std::function<Tensor(const std::vector<Tensor>&)> call;
  std::vector<bool> diff;
  std::function<Tensor(Device)> make;  ///< set for factories instead of inputs and call
};

/// The whole table, by op name (filled before main() by the every_device_*_test.cpp files).
inline std::map<std::string, OpCase>& every_device_ops() {
  static std::map<std::string, OpCase> table;
  return table;
}
/// Names added more than once (the test fails on any).
inline std::vector<std::string>& every_device_duplicate_ops() {
  static std::vector<std::string> names;
  return names;
}
/// Adds `rows` to the table; returns true (for a namespace-scope `const bool` initialiser).
inline bool add_every_device_ops(std::map<std::string, OpCase> rows) {
  for (auto& [name, c] : rows)
    if (!every_device_ops().emplace(name, std::move(c)).second) every_device_duplicate_ops().push_back(name);
  return true;
}

// Deterministic float64 values (randn), the same on every device (made on the CPU, then moved).
inline Tensor seeded(IntArrayRef shape, uint64_t seed, Device d, double shift = 0.0) {
  manual_seed(seed);
  Tensor t = randn(shape, kFloat64);
  if (shift != 0.0) t = add(abs(t), scalar_tensor(shift, kFloat64));
  return t.to(d);
}
inline Tensor pos(IntArrayRef shape, uint64_t seed, Device d) { return seeded(shape, seed, d, 0.5); }
// `a` with NaN, +inf and -inf planted by value: above 0.5 +inf, below -0.5 NaN, in [-0.5, 0)
// -inf, the rest kept (randn data has all four kinds).
inline Tensor specials(const Tensor& a) {
  const Tensor zero = zeros_like(a);
  return where(gt(a, full_like(a, 0.5)), div(abs(a), zero),
               where(lt(a, full_like(a, -0.5)), div(zero, zero), where(lt(a, zero), div(a, zero), a)));
}
inline Tensor idx(std::vector<int64_t> v, IntArrayRef shape, Device d) {
  return tensor(v, shape, TensorOptions(kInt64)).to(d);
}

inline OpCase unary(std::function<Tensor(const Tensor&)> f, bool positive = false) {
  return {[positive](Device d) {
            return std::vector<Tensor>{positive ? pos({3, 4}, 1, d) : seeded({3, 4}, 1, d)};
          },
          [f](const std::vector<Tensor>& x) { return f(x[0]); },
          {true}};
}
inline OpCase binary(std::function<Tensor(const Tensor&, const Tensor&)> f, bool diff = true) {
  return {[](Device d) {
            return std::vector<Tensor>{seeded({3, 4}, 1, d), seeded({4}, 2, d)};
          },
          [f](const std::vector<Tensor>& x) { return f(x[0], x[1]); },
          {diff, diff}};
}
inline OpCase reduce(std::function<Tensor(const Tensor&)> f, bool diff = true) {
  return {[](Device d) {
            return std::vector<Tensor>{seeded({3, 5, 2}, 3, d)};
          },
          [f](const std::vector<Tensor>& x) { return f(x[0]); },
          {diff}};
}
// A factory: the device is its only input.
inline OpCase factory(std::function<Tensor(Device)> f) { return {{}, {}, {}, std::move(f)}; }

// The same case, with no gradient compared (outputs that do not depend differentiably on inputs).
inline OpCase values_only(OpCase c) {
  c.diff.assign(c.diff.size(), false);
  return c;
}
inline TensorOptions on(Device d, DType t = kFloat64) { return TensorOptions(t).device(d); }

}  // namespace wick::test::every_device
