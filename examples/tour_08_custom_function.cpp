// Tour page 8 (docs/tour/08-custom-function.md): an op with its own backward, written as a
// custom autograd function; its node, what its context keeps, double backward, and the error
// when a saved tensor is modified in place.
//
//   tour_08_custom_function [output dir]   writes cube.dot there (default: .)
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "wick/wick.h"

using namespace wick;
using autograd::AutogradContext;
using autograd::variable_list;

// y = scale * x^3. `scale` is a plain double: it gets no gradient.
struct Cube : autograd::Function<Cube> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, double scale) {
    ctx->save_for_backward({x});       // kept with its version, checked in backward
    ctx->saved_data["scale"] = scale;  // non-tensor state
    return pow(x, 3.0) * scale;
  }
  // One gradient per forward argument: dy/dx for x, an undefined Tensor for scale.
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const Tensor x = ctx->get_saved_variables()[0];
    const double scale = ctx->saved_data["scale"].toDouble();
    return {grad_outputs[0] * (x * x) * (3.0 * scale), Tensor()};
  }
};

namespace {
void print(const char* what, const Tensor& t) {
  std::printf("%-28s", what);
  for (double v : t.to(kFloat64).to_vector<double>()) std::printf(" %g", v);
  std::printf("\n");
}
}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(dir);

  Tensor x = tensor({1.0, 2.0, 3.0}, TensorOptions().dtype(kFloat64)).requires_grad_();
  Tensor y = Cube::apply(x, 2.0);
  const auto node = y.grad_fn();
  std::printf("y.grad_fn(): %s, %zu edge(s), %zu saved tensor(s)\n", node->name().c_str(), node->next_edges().size(),
              node->saved_tensors().size());
  std::ofstream(dir + "/cube.dot") << autograd::to_dot({y});
  std::printf("wrote %s/cube.dot\n", dir.c_str());

  // First derivative, keeping the graph of the backward itself (create_graph).
  Tensor g = autograd::grad({y.sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  print("dy/dx = 6 x^2:", g);
  // The backward used differentiable ops, so it differentiates again.
  print("d2y/dx2 = 12 x:", autograd::grad({g.sum()}, {x})[0]);

  // Modify the saved input after the call: backward refuses, naming the function.
  Tensor a = x * 1.0;  // a non-leaf copy (a leaf that requires grad cannot change in place)
  Tensor b = Cube::apply(a, 2.0);
  a.add_(ones_like(a));
  try {
    b.sum().backward();
  } catch (const Error& e) {
    std::printf("in-place change caught:\n  %s\n", e.what());
  }
  return 0;
}
