// Rows of the every-device table (tests/support/every_device_ops.h, run by every_device_test.cpp).
// Linear algebra: the matrix products.
#include <wick/wick.h>

#include "support/every_device_ops.h"

using namespace wick;
using namespace wick::test::every_device;

namespace {

[[maybe_unused]] const bool registered = add_every_device_ops({
    {"matmul",
     {[](Device d) {
        return std::vector<Tensor>{seeded({2, 3, 4}, 1, d), seeded({4, 5}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); },
      {true, true}}},
    {"mm",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), seeded({4, 5}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return mm(x[0], x[1]); },
      {true, true}}},
    {"linear",
     {[](Device d) {
        return std::vector<Tensor>{seeded({6, 4}, 1, d), seeded({3, 4}, 2, d), seeded({3}, 3, d)};
      },
      [](const std::vector<Tensor>& x) { return linear(x[0], x[1], x[2]); },
      {true, true, true}}},
    {"bmm",
     {[](Device d) {
        return std::vector<Tensor>{seeded({2, 3, 4}, 1, d), seeded({2, 4, 5}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return bmm(x[0], x[1]); },
      {true, true}}},
    {"baddbmm",
     {[](Device d) {
        return std::vector<Tensor>{seeded({2, 3, 5}, 3, d), seeded({2, 3, 4}, 1, d), seeded({2, 4, 5}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return baddbmm(x[0], x[1], x[2], 0.5, 2.0); },
      {true, true, true}}},
    {"addmm",
     {[](Device d) {
        return std::vector<Tensor>{seeded({5}, 3, d), seeded({3, 4}, 1, d), seeded({4, 5}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return addmm(x[0], x[1], x[2], 2.0, -1.0); },
      {true, true, true}}},
    {"outer",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3}, 1, d), seeded({4}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return outer(x[0], x[1]); },
      {true, true}}},
    {"dot",
     {[](Device d) {
        return std::vector<Tensor>{seeded({6}, 1, d), seeded({6}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return dot(x[0], x[1]); },
      {true, true}}},
});

}  // namespace
