// autograd::to_dot: the backward graph of an MLP loss against a golden file, and the drawing's
// properties checked by hand (names, saved tensors, dashed view edges, device clusters, ids
// independent of earlier graphs).
#include <catch2/catch.hpp>

#include "golden.h"
#include "wick/wick.h"

using namespace wick;

namespace {

// A fixed MLP: x [5, 3] -> fc1 (4) -> relu -> fc2 (2) -> view [10] -> mse against zeros.
struct Mlp {
  std::shared_ptr<nn::SequentialImpl> net = std::make_shared<nn::SequentialImpl>();
  Mlp() {
    net->push_back("fc1", std::make_shared<nn::LinearImpl>(3, 4));
    net->push_back("act", std::make_shared<nn::ReLUImpl>());
    net->push_back("fc2", std::make_shared<nn::LinearImpl>(4, 2));
  }
  Tensor loss() const {
    Tensor x = ones({5, 3});
    Tensor y = net->forward(x).view({10});
    return nn::F::mse_loss(y, zeros({10}));
  }
};

std::string mlp_dot() {
  Mlp m;
  autograd::DotOptions o = nn::dot_options(*m.net);
  o.root_names = {"loss"};
  return autograd::to_dot({m.loss()}, o);
}

}  // namespace

TEST_CASE("autograd to_dot: MLP loss graph equals the golden file") {
  wick::test::check_golden("mlp_loss.dot", mlp_dot());
}

TEST_CASE("autograd to_dot: ids do not depend on graphs built before") {
  const std::string first = mlp_dot();
  for (int i = 0; i < 3; ++i) (void)Mlp().loss();  // advances the global sequence numbers
  CHECK(mlp_dot() == first);
}

TEST_CASE("autograd to_dot: leaves named, saved tensors with shape, view edge dashed") {
  const std::string dot = mlp_dot();
  CHECK(dot.find("label=\"fc1.weight\\n[4, 3] float32\"") != std::string::npos);
  CHECK(dot.find("label=\"fc2.bias\\n[2] float32\"") != std::string::npos);
  CHECK(dot.find("saved 0\\n[5, 3] float32") != std::string::npos);  // the input saved for fc1's weight grad
  CHECK(dot.find("style=dashed") != std::string::npos);              // the view
  CHECK(dot.find("label=\"loss\\n[] float32\"") != std::string::npos);
  CHECK(dot.find("0x") == std::string::npos);  // no pointers
}

TEST_CASE("autograd to_dot: one cluster per device, edge labels are input indices") {
  Tensor a = ones({2}, TensorOptions().requires_grad(true));
  Tensor b = mul(a, full({2}, 2.0)).to(Device(DeviceType::CPU, 1));
  Tensor c = sub(ones({2}, Device(DeviceType::CPU, 1)), b);
  autograd::DotOptions o;
  o.names = {{"a", a}};
  o.show_saved = false;
  const std::string dot = autograd::to_dot({c}, o);
  wick::test::emit_dot("two_devices.dot", dot);
  CHECK(dot.find("subgraph \"cluster_cpu_0\"") != std::string::npos);
  CHECK(dot.find("subgraph \"cluster_cpu_1\"") != std::string::npos);
  // Nodes in post-order from the root: n0 AccumulateGrad(a), n1 MulBackward, n2 ToCopyBackward,
  // n3 SubBackward.
  CHECK(dot.find("n0 [label=\"a\\n[2] float32\"") != std::string::npos);
  CHECK(dot.find("n1 [label=\"MulBackward\"") != std::string::npos);
  CHECK(dot.find("n0 -> n1 [label=\"0\"]") != std::string::npos);  // a is mul's input 0
  CHECK(dot.find("n2 -> n3 [label=\"1\"]") != std::string::npos);  // b is sub's input 1
  CHECK(dot.find("saved") == std::string::npos);
}

TEST_CASE("autograd to_dot: ids do not depend on the order the nodes were created in") {
  // The same graph, its two branches built in opposite orders (as two replicas' forwards on their
  // device threads may interleave): the drawings are byte-identical.
  auto draw = [](bool left_first) {
    Tensor x = ones({2}, TensorOptions().requires_grad(true));
    Tensor y = ones({2}, TensorOptions().requires_grad(true));
    Tensor left, right;
    if (left_first) {
      left = mul(x, full({2}, 2.0));
      right = exp(y);
    } else {
      right = exp(y);
      left = mul(x, full({2}, 2.0));
    }
    autograd::DotOptions o;
    o.names = {{"x", x}, {"y", y}};
    return autograd::to_dot({add(left, right)}, o);
  };
  const std::string a = draw(true), b = draw(false);
  CHECK(a == b);
  CHECK(a.find("n1 [label=\"MulBackward\"") != std::string::npos);
  CHECK(a.find("n3 [label=\"ExpBackward\"") != std::string::npos);
}

TEST_CASE("autograd to_dot: a root that does not require grad is drawn alone") {
  const std::string dot = autograd::to_dot({ones({3})});
  CHECK(dot.find("r0 [label=\"output 0\\n[3] float32\"") != std::string::npos);
  CHECK(dot.find("->") == std::string::npos);
}
