// Rows of the every-device table (tests/support/every_device_ops.h, run by every_device_test.cpp).
// Factories and the *_like functions: values made on the device (random ones draw the same
// counters on every device), no gradient.
#include <wick/wick.h>

#include "support/every_device_ops.h"

using namespace wick;
using namespace wick::test::every_device;

namespace {

[[maybe_unused]] const bool registered = add_every_device_ops({
    {"zeros", factory([](Device d) {
       return zeros({2, 3}, on(d));
     })},
    {"ones", factory([](Device d) {
       return ones({2, 3}, on(d));
     })},
    {"full", factory([](Device d) {
       return full({2, 3}, 2.5, on(d));
     })},
    {"arange", factory([](Device d) { return arange(1, 10, 3, on(d)); })},
    {"linspace", factory([](Device d) { return linspace(-1, 1, 7, on(d)); })},
    {"eye", factory([](Device d) { return eye(3, 4, on(d)); })},
    {"rand", factory([](Device d) {
       manual_seed(5);
       return rand({50}, on(d, kFloat32));
     })},
    {"randn", factory([](Device d) {
       manual_seed(5);
       return randn({50}, on(d));
     })},
    {"randint", factory([](Device d) {
       manual_seed(5);
       return randint(-4, 9, {50}, on(d, kInt64));
     })},
    {"zeros_like", values_only(unary([](const Tensor& a) { return zeros_like(a); }))},
    {"ones_like", values_only(unary([](const Tensor& a) { return ones_like(a); }))},
    {"full_like", values_only(unary([](const Tensor& a) { return full_like(a, -1.5); }))},
    {"rand_like", values_only(unary([](const Tensor& a) {
       manual_seed(6);
       return rand_like(a);
     }))},
    {"randn_like", values_only(unary([](const Tensor& a) {
       manual_seed(6);
       return randn_like(a);
     }))},
    {"scalar_tensor", factory([](Device d) { return scalar_tensor(3.25, on(d)); })},
    {"tensor", factory([](Device d) {
       return tensor({1.0, 2.0, 3.0, 4.0}, {2, 2}, on(d));
     })},
    {"one_hot", factory([](Device d) {
       return one_hot(tensor(std::vector<int64_t>{2, 0, 4, 2}, {4}, TensorOptions(kInt64)).to(d), 6);
     })},
    {"multinomial", factory([](Device d) {
       manual_seed(8);
       Tensor p = tensor({0.1, 0.0, 0.5, 0.4, 0.2, 0.3, 0.0, 0.5}, {2, 4}, on(d));
       return cat({multinomial(p, 3, false), multinomial(p, 6, true)}, 1);
     })},
});

// The triangle index factories (autograd/src/ops_construct.cpp).
[[maybe_unused]] const bool registered_tri_indices = add_every_device_ops({
    {"tril_indices", factory([](Device d) { return tril_indices(4, 3, -1, TensorOptions(kInt64).device(d)); })},
    {"triu_indices", factory([](Device d) { return triu_indices(3, 5, 1, TensorOptions(kInt64).device(d)); })},
});

}  // namespace
