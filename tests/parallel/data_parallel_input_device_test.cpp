// DataParallel fed an input that does not live on device_ids[0] (PyTorch's test_data_parallel
// keeps its input on cuda:1 for device_ids (0, 1) and (1, 0)). data_parallel_test's port moves
// the input to device_ids[0] first, so scattering from another device was covered only by
// functions_test's Scatter case (helper29 review, T8). Checked against the plain module on one
// device: the output is on device_ids[0] with the module's values, the parameters' gradients
// (on device_ids[0]) and the input's gradient (on the input's own device) are the module's.
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>

#include "parallel/parallel_test_util.h"
#include "wick/parallel/data_parallel.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;
using wick::test::f64;

namespace {

std::vector<Tensor> grads_of(const nn::Module& m) {
  std::vector<Tensor> g;
  for (const Tensor& p : m.parameters()) g.push_back(p.grad().defined() ? p.grad().clone() : Tensor());
  return g;
}

}  // namespace

TEST_CASE("data_parallel: an input on a device other than device_ids[0] gives the single-device output and gradients") {
  manual_seed(0);
  auto l = std::make_shared<nn::LinearImpl>(10, 5, f64(cpu(1)));
  const Tensor data = randn({20, 10}, f64(cpu(1)));
  // The reference: the plain module, everything on cpu:1.
  Tensor i = data.clone().requires_grad_();
  const Tensor expected = l->forward(i);
  expected.sum().backward();
  const auto expected_grads = grads_of(*l);
  const Tensor expected_input_grad = i.grad().clone();

  for (const std::vector<Device>& ids : {std::vector<Device>{cpu(0), cpu(1)}, std::vector<Device>{cpu(1), cpu(0)}}) {
    for (Device input_device : {cpu(1), cpu(2)}) {  // cpu:2 is in neither list
      INFO("device_ids [" << ids[0] << ", " << ids[1] << "], input on " << input_device);
      l->to(ids[0]);
      l->zero_grad();
      Tensor x = data.to(input_device).clone().requires_grad_();  // a fresh leaf each time
      REQUIRE(x.device() == input_device);
      Tensor out = data_parallel(l, x, ids);
      CHECK(out.device() == ids[0]);
      CHECK_ALLCLOSE(out, expected, 1e-12, 1e-13);
      out.sum().backward();
      const auto g = grads_of(*l);
      REQUIRE(g.size() == expected_grads.size());
      for (size_t k = 0; k < g.size(); ++k) {
        REQUIRE(g[k].defined());
        CHECK(g[k].device() == ids[0]);
        CHECK_ALLCLOSE(g[k], expected_grads[k], 1e-12, 1e-13);
      }
      REQUIRE(x.grad().defined());
      CHECK(x.grad().device() == input_device);
      CHECK_ALLCLOSE(x.grad(), expected_input_grad, 1e-12, 1e-13);
    }
  }
}

TEST_CASE("DataParallel: an input on device_ids[1] is scattered from there, the output lands on device_ids[0]") {
  manual_seed(1);
  auto l = std::make_shared<nn::LinearImpl>(6, 3, f64());
  const Tensor data = randn({8, 6}, f64());
  const Tensor expected = l->forward(data);
  expected.sum().backward();
  const auto expected_grads = grads_of(*l);
  l->zero_grad();
  DataParallel dp(l, {cpu(0), cpu(1)});
  Tensor out = dp.forward(data.to(cpu(1)));
  CHECK(out.device() == cpu(0));
  CHECK_ALLCLOSE(out, expected, 1e-12, 1e-13);
  out.sum().backward();
  const auto g = grads_of(*l);
  REQUIRE(g.size() == expected_grads.size());
  for (size_t k = 0; k < g.size(); ++k) {
    REQUIRE(g[k].defined());
    CHECK(g[k].device() == cpu(0));
    CHECK_ALLCLOSE(g[k], expected_grads[k], 1e-12, 1e-13);
  }
}
