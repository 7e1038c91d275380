// wick::optim: several steps of each optimizer configuration against the update formulas
// computed independently in float64 (plain std::vector<double> math, support/optim_reference.h).
// Parameter groups and options: optim_groups_test.cpp; state dicts: optim_state_test.cpp. The
// schedulers are in lr_scheduler_test.cpp.
#include "wick/nn/optim/optim.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "support/devices.h"
#include "support/optim_reference.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/modules/linear.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::optim;
using namespace wick::test::optim_reference;

TEST_CASE("optim: SGD matches the float64 reference for every configuration", "[optim]") {
  for (const auto& cf : sgd_configs())
    for (bool fused : {true, false}) run_against_reference({cf}, kFloat64, fused, 6, 1e-13);
}

TEST_CASE("optim: Adam and AdamW match the float64 reference for every configuration", "[optim]") {
  for (const auto& cf : adam_configs())
    for (bool fused : {true, false}) run_against_reference({cf}, kFloat64, fused, 6, 1e-12);
}

TEST_CASE("optim: float32 parameters follow the reference to float32 precision", "[optim]") {
  for (const auto& cf : sgd_configs())
    for (bool fused : {true, false}) run_against_reference({cf}, kFloat32, fused, 4, 2e-5);
  for (const auto& cf : adam_configs())
    for (bool fused : {true, false}) run_against_reference({cf}, kFloat32, fused, 4, 2e-5);
}
