// A linear model y = x W^T + b fitted to noisy data with autograd and plain SGD: the smallest
// complete training loop in wick. Prints the loss falling.
#include <fmt/format.h>
#include <wick/wick.h>

int main() {
  wick::manual_seed(0);
  const int64_t n = 256, features = 4;
  wick::Tensor true_w = wick::tensor({2.0, -3.0, 0.5, 1.0}, {1, features}, wick::kFloat32);
  wick::Tensor x = wick::randn({n, features});
  wick::Tensor y = x.matmul(true_w.t()) + 0.7 + wick::randn({n, 1}) * 0.01;

  wick::Tensor w = wick::zeros({1, features}, wick::TensorOptions().requires_grad());
  wick::Tensor b = wick::zeros({1}, wick::TensorOptions().requires_grad());
  const double lr = 0.1;
  for (int step = 0; step <= 100; ++step) {
    wick::Tensor pred = x.matmul(w.t()) + b;
    wick::Tensor loss = (pred - y).square().mean();
    loss.backward();
    {
      wick::NoGradGuard no_grad;
      w.sub_(w.grad() * lr);
      b.sub_(b.grad() * lr);
    }
    w.mutable_grad() = {};
    b.mutable_grad() = {};
    if (step % 10 == 0) fmt::print("step {:3d}  loss {:.6f}\n", step, loss.item<double>());
  }
  fmt::print("learned w = {}\nlearned b = {}\n", w.detach(), b.detach());
  return 0;
}
