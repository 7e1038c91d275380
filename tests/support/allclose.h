#pragma once
// Comparing tensors in tests: allclose with a readable report, and Catch2 macros around it.
//
//   CHECK_ALLCLOSE(actual, expected, rtol, atol);   // |a - e| <= atol + rtol * |e|, elementwise
//   REQUIRE_ALLCLOSE(...)                           // the same, stopping the test case
//   CHECK_VALUES(t, {1.0, 2.0, 3.0});               // exact (after conversion to double)
//
// Both tensors are converted to float64 on the host first, so any dtype and device compares.
// Shapes must match exactly (no broadcasting). NaN matches NaN and an infinity matches the same
// infinity; any other non-finite value is a mismatch. On failure the message names the first
// offending element (index and values), the worst absolute and relative errors, and both shapes.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "support/printers.h"
#include "wick/core/tensor.h"

namespace wick::test {

struct CloseResult {
  bool ok = true;
  std::string message;     ///< empty when ok
  double max_abs_err = 0;  ///< max |a - e| over finite elements
  double max_rel_err = 0;  ///< max |a - e| / |e| over finite elements with e != 0
};

/// Elementwise |actual - expected| <= atol + rtol * |expected|.
CloseResult allclose(const Tensor& actual, const Tensor& expected, double rtol, double atol);

/// The values of `t` as doubles (row-major), for quick exact checks.
std::vector<double> values(const Tensor& t);

}  // namespace wick::test

#define WICK_TEST_ALLCLOSE_IMPL(MACRO, actual, expected, rtol, atol)                                            \
  do {                                                                                                          \
    const ::wick::test::CloseResult wick_close_ = ::wick::test::allclose((actual), (expected), (rtol), (atol)); \
    INFO(#actual " vs " #expected ": " << wick_close_.message);                                                 \
    MACRO(wick_close_.ok);                                                                                      \
  } while (0)

#define CHECK_ALLCLOSE(actual, expected, rtol, atol) WICK_TEST_ALLCLOSE_IMPL(CHECK, actual, expected, rtol, atol)
#define REQUIRE_ALLCLOSE(actual, expected, rtol, atol) WICK_TEST_ALLCLOSE_IMPL(REQUIRE, actual, expected, rtol, atol)
#define CHECK_VALUES(t, ...) CHECK(::wick::test::values(t) == std::vector<double>(__VA_ARGS__))
