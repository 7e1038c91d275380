#pragma once
// Catch2 wrappers around wick::autograd::gradcheck / gradgradcheck that print the mismatch.
//
//   CHECK_GRADCHECK([](const TensorList& x) { return TensorList{wick::exp(x[0])}; },
//                   {wick::randn({3, 4}, wick::TensorOptions(wick::kFloat64).requires_grad())});
#include <catch2/catch.hpp>

#include "wick/autograd/gradcheck.h"

#define WICK_TEST_GRADCHECK_IMPL(CHECKER, fn, ...)                    \
  do {                                                                \
    const auto wick_gc_ = ::wick::autograd::CHECKER(fn, __VA_ARGS__); \
    INFO(#CHECKER ": " << wick_gc_.message);                          \
    CHECK(wick_gc_.ok);                                               \
  } while (0)

/// CHECK_GRADCHECK(fn, inputs[, GradcheckOptions])
#define CHECK_GRADCHECK(fn, ...) WICK_TEST_GRADCHECK_IMPL(gradcheck, fn, __VA_ARGS__)
/// CHECK_GRADGRADCHECK(fn, inputs[, GradcheckOptions])
#define CHECK_GRADGRADCHECK(fn, ...) WICK_TEST_GRADCHECK_IMPL(gradgradcheck, fn, __VA_ARGS__)
/// CHECK_GRADCHECK and CHECK_GRADGRADCHECK of the same fn and inputs.
#define CHECK_GRADCHECKS(fn, ...)         \
  do {                                    \
    CHECK_GRADCHECK(fn, __VA_ARGS__);     \
    CHECK_GRADGRADCHECK(fn, __VA_ARGS__); \
  } while (0)
