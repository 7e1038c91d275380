// Tour page 1 (docs/tour/01-tensor.md): tensors, devices, and the smallest graph.
//
//   tour_01_tensor [output dir]     writes tensor_graph.dot there (default: .)
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "wick/wick.h"

using namespace wick;

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(dir);
  // A tensor is a handle: sizes, strides, dtype, device, and shared storage.
  Tensor a = full({2, 3}, 2.0, TensorOptions().requires_grad(true));
  Tensor b = arange(6.0, TensorOptions(kFloat32)).view({2, 3});  // a view of a fresh tensor
  Tensor c = add(mul(a, b), a);                                  // c = a * b + a
  Tensor loss = c.sum();
  std::printf("a: %s\nb: %s\nloss = %.1f\n", a.to_string().c_str(), b.to_string().c_str(), loss.item<double>());

  autograd::DotOptions o;
  o.names = {{"a", a}, {"b", b}};
  o.root_names = {"loss"};
  std::ofstream(dir + "/tensor_graph.dot") << autograd::to_dot({loss}, o);
  loss.backward();
  std::printf("a.grad = b + 1: %s\nwrote %s/tensor_graph.dot\n", a.grad().to_string().c_str(), dir.c_str());
  return 0;
}
