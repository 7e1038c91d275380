#pragma once
// Helpers for the parallel tests: CPU devices by index and exact value comparison.
#include <catch2/catch.hpp>

#include <wick/wick.h>

#include "support/allclose.h"

namespace wick::test {

inline Device cpu(int i) { return Device(DeviceType::CPU, i); }

inline std::vector<Device> cpus(int n) {
  std::vector<Device> out;
  for (int i = 0; i < n; ++i) out.push_back(cpu(i));
  return out;
}

/// True when a and b have the same shape and exactly the same values (any devices).
inline bool same_values(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.sizes() == b.sizes() && a.to_vector<double>() == b.to_vector<double>();
}

}  // namespace wick::test

#define CHECK_VALUES_EQUAL(a, b) CHECK_ALLCLOSE((a), (b), 0.0, 0.0)
