// A program outside the wick tree: one differentiable computation through the installed package.
#include <wick/wick.h>

#include <cstdio>

int main() {
  wick::Tensor x = wick::tensor({1.0, 2.0, 3.0}, wick::kFloat64).requires_grad_();
  (x * x).sum().backward();
  const auto g = x.grad().to_vector<double>();
  if (g != std::vector<double>{2.0, 4.0, 6.0}) return 1;
  std::printf("consumer ok\n");
  return 0;
}
