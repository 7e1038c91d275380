// DataParallel and data_parallel on CPU devices: the non-CUDA-only cases of PyTorch's
// test_data_parallel.py about replicas inside forward (zero_grad, broadcast parameters, device
// indices), gathering scalars and dicts, failures of a replica, output devices, numerical
// equivalence with serial steps and every attention, transformer and recurrent layer. Inputs,
// outputs and gradients: data_parallel_test.cpp.
#include <wick/nn/nn.h>
#include <wick/nn/optim/optim.h>

#include <catch2/catch.hpp>

#include "parallel/parallel_test_util.h"
#include "support/gradcheck.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/scatter_gather.h"

using namespace wick;
using namespace wick::parallel;
using nn::Value;
using wick::test::cpu;
using wick::test::cpus;
using wick::test::f64;
using wick::test::grads_of;

namespace {

class Throws : public nn::Cloneable<Throws> {
 public:
  Tensor forward(const Tensor&) { throw std::runtime_error("Badness!"); }
};

class Ones : public nn::Cloneable<Ones> {
 public:
  Tensor forward(const Tensor&) { return ones({3}); }
};

class DeviceIndex : public nn::Cloneable<DeviceIndex> {
 public:
  Tensor forward(const Tensor& x) {
    return tensor({double(x.device().index)}, TensorOptions(kInt64).device(x.device()));
  }
};

class ZeroGradInForward : public nn::Cloneable<ZeroGradInForward> {
 public:
  ZeroGradInForward() { w_ = register_parameter("w", ones({1}, f64())); }
  Tensor forward(const Tensor& x) {
    zero_grad();
    return x * param(w_);
  }
  nn::ParamSlot w_;
};

// Checks inside forward that its parameters are broadcast outputs (test_parameter_list_dict_replica).
class ParamsAreBroadcastOutputs : public nn::Cloneable<ParamsAreBroadcastOutputs> {
 public:
  ParamsAreBroadcastOutputs() {
    p1_ = register_parameter("0", randn({1}, f64()));
    p2_ = register_parameter("1", randn({1}, f64()));
  }
  Tensor forward(const Tensor& x) {
    for (auto s : {p1_, p2_}) {
      WICK_CHECK(param(s).requires_grad() && param(s).grad_fn() != nullptr, "not a broadcast output");
      WICK_CHECK(is_replica(), "not a replica");
    }
    return x * param(p1_) * param(p2_);
  }
  nn::ParamSlot p1_, p2_;
};

// Returns a 0-dim tensor: the sum of its input.
class SumToScalar : public nn::Cloneable<SumToScalar> {
 public:
  Tensor forward(const Tensor& x) { return x.sum(); }
};

// A dict output whose number of keys depends on the replica's chunk size.
class UnevenDicts : public nn::Cloneable<UnevenDicts> {
 public:
  Value forward_value(const std::vector<Value>& args) override {
    const Tensor& x = args[0].tensor();
    if (x.size(0) == 1) return Value::dict({"a"}, {x});
    return Value::dict({"b", "a"}, {x, x});
  }
};

// Conv2d(2, 2, k = 2) -> relu -> view(-1, 8) -> Linear(8, 2) -> log_softmax (DataParallelNumericalEquivalence).
class SmallConvNet : public nn::Cloneable<SmallConvNet> {
 public:
  SmallConvNet() {
    conv_ = register_module("conv", std::make_shared<nn::Conv2dImpl>(nn::Conv2dOptions(2, 2, 2), f64()));
    fc_ = register_module("fc", std::make_shared<nn::LinearImpl>(8, 2, f64()));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = child(conv_).forward(x).relu().reshape({-1, 8});
    return child(fc_).forward(h).log_softmax(1);
  }
  nn::ChildSlot<nn::Conv2dImpl> conv_;
  nn::ChildSlot<nn::LinearImpl> fc_;
};

}  // namespace

TEST_CASE("DataParallel: gradient penalty through double backward (test_data_parallel_function_deletion)") {
  auto l = std::make_shared<nn::LinearImpl>(4, 1, f64());
  auto net = std::make_shared<DataParallel>(l, std::vector<Device>{cpu(0), cpu(1)});
  Tensor x = ones({2, 4}, f64().requires_grad());
  Tensor out = net->forward(x);
  Tensor g = autograd::grad({out}, {x}, {ones_like(out)}, true, /*create_graph=*/true)[0];
  g.mean().backward();
  CHECK(l->weight().grad().device() == cpu(0));
  CHECK_ALLCLOSE(l->weight().grad(), full({1, 4}, 0.25, f64()), 1e-15, 0);
  REQUIRE(l->bias().grad().defined());  // zero, materialized by Broadcast's backward
  CHECK_VALUES(l->bias().grad(), {0.0});
}

TEST_CASE("DataParallel: scalar outputs are gathered into a vector (test_gather with scalars)") {
  auto m = std::make_shared<SumToScalar>();
  Tensor i = randn({4, 3}, f64().requires_grad());
  Tensor out = data_parallel(m, i, {cpu(0), cpu(1)});
  CHECK(out.sizes() == IntArrayRef({2}));
  CHECK(out.at<double>({0}) == Approx(i.narrow(0, 0, 2).sum().item<double>()));
  out.backward(tensor({1.0, 2.0}, f64()));
  CHECK_VALUES(i.grad().narrow(0, 0, 2).sum(), {6.0});
  CHECK_VALUES(i.grad().narrow(0, 2, 2).sum(), {12.0});
}

TEST_CASE("gather: dicts with different numbers of keys are an error (test_gather_different_len_dicts)") {
  std::vector<Value> outs{Value::dict({"a"}, {ones({1})}), Value::dict({"b", "a"}, {ones({1}), ones({1})})};
  CHECK_THROWS_WITH(gather(outs, cpu(0)), Catch::Contains("All dicts must have the same number of keys"));
  auto m = std::make_shared<UnevenDicts>();
  CHECK_THROWS_WITH(data_parallel(m, randn({3, 2}), {cpu(0), cpu(1)}), Catch::Contains("same number of keys"));
  std::vector<Value> ints{Value(1), Value(2)};
  CHECK_THROWS_WITH(gather(ints, cpu(0)), Catch::Contains("only tensors can be gathered"));
  CHECK(gather(std::vector<Value>{Value(3), Value(3)}, cpu(0)).to_int() == 3);
}

TEST_CASE("DataParallel: zero_grad inside forward is refused on replicas (test_zero_grad)") {
  auto m = std::make_shared<ZeroGradInForward>();
  CHECK_THROWS_WITH(DataParallel(m, cpus(2)).forward(randn({4, 1}, f64())),
                    Catch::Contains("in replica 0") && Catch::Contains("zero_grad"));
}

TEST_CASE("DataParallel: inside forward the parameters are broadcast outputs (test_parameter_list_dict_replica)") {
  auto m = std::make_shared<ParamsAreBroadcastOutputs>();
  const Tensor x = randn({4, 1}, f64());
  Tensor out;
  CHECK_NOTHROW(out = DataParallel(m, cpus(2)).forward(x));
  // The replicas' values are the original's: out = x * p1 * p2, each row on the device that ran it.
  CHECK_ALLCLOSE(out, x * m->param(m->p1_) * m->param(m->p2_), 0, 0);
}

TEST_CASE("DataParallel: dict arguments with empty containers are passed whole (kwargs_only_empty_*)") {
  class DictInput : public nn::Cloneable<DictInput> {
   public:
    Tensor forward(const Value& input) {
      WICK_CHECK(input.is_dict(), "expected a dict");
      const Value& unused = input.dict().values[1];
      WICK_CHECK(is_empty_container(unused), "the empty container was not passed whole");
      return input.dict().values[0].tensor() * 2.0;
    }
    static bool is_empty_container(const Value& v) {
      return (v.is_sequence() && v.items().empty()) || (v.is_dict() && v.dict().keys.empty());
    }
  };
  auto m = std::make_shared<DictInput>();
  Tensor i = randn({20, 10}, f64());
  for (Value empty : {Value::list({}), Value::dict({}, {}), Value::tuple({})}) {
    Value out = DataParallel(m, cpus(2)).forward_value({Value::dict({"data", "unused"}, {i, empty})});
    CHECK_ALLCLOSE(out.tensor(), i * 2.0, 0, 0);
  }
}

TEST_CASE("data_parallel rethrows a failure of a replica (ParallelApplyRethrowsException)") {
  auto m = std::make_shared<Throws>();
  CHECK_THROWS_WITH(data_parallel(m, ones({10, 3}), {cpu(0), cpu(1)}), Catch::Contains("Badness!"));
}

TEST_CASE("DataParallel: the output goes to output_device (DataParallelPlacesTheOutputOnTheRequestedDevice)") {
  auto m = std::make_shared<Ones>();
  Tensor out = DataParallel(m, {cpu(0), cpu(1)}, cpu(1)).forward(ones({4, 2}));
  CHECK(out.device() == cpu(1));
  CHECK(out.numel() == 6);
  // with one device it is a plain call: the output stays where the module put it
  Tensor single = DataParallel(m, {cpu(0)}, cpu(1)).forward(ones({4, 2}));
  CHECK(single.device() == cpu(0));
}

TEST_CASE("DataParallel uses every device given (DataParallelUsesAllAvailableCUDADevices)") {
  auto m = std::make_shared<DeviceIndex>();
  Tensor out = data_parallel(m, ones({4, 1}), cpus(4));
  CHECK(out.numel() == 4);
  CHECK_VALUES(out, {0.0, 1.0, 2.0, 3.0});
}

TEST_CASE("three SGD steps through data_parallel match the serial ones (DataParallelNumericalEquivalence)") {
  manual_seed(3);
  auto model = std::make_shared<SmallConvNet>();
  auto model_dp = std::make_shared<SmallConvNet>();
  model_dp->load_state_dict(model->state_dict());
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  optim::SGD opt_dp(model_dp->parameters(), optim::SGDOptions(0.1));
  for (int it = 0; it < 3; ++it) {
    Tensor input = ones({16, 2, 3, 3}, f64()) + double(it);
    opt.zero_grad();
    nn::F::mse_loss(model->forward(input), zeros({16, 2}, f64())).backward();
    opt.step();
    opt_dp.zero_grad();
    Tensor out = data_parallel(model_dp, input, cpus(3));
    nn::F::mse_loss(out, zeros({16, 2}, f64())).backward();
    opt_dp.step();
    auto p = model->parameters(), q = model_dp->parameters();
    for (size_t k = 0; k < p.size(); ++k) CHECK_ALLCLOSE(q[k], p[k], 1e-12, 1e-14);
  }
}

TEST_CASE("DataParallel runs the attention, transformer and recurrent layers as the plain module (batch_first)") {
  // Each layer, batch_first so that scatter splits the batch: outputs and parameter gradients on
  // 1-3 CPU devices equal the plain module's on the whole batch.
  auto check = [](const std::shared_ptr<nn::Module>& m, const std::vector<Value>& args) {
    INFO(m->name());
    const Value expected = m->forward_value(args);
    std::vector<Tensor> outs;
    expected.for_each_tensor([&](const Tensor& t) { outs.push_back(t); });
    Tensor loss = outs[0].sum();
    for (size_t k = 1; k < outs.size(); ++k) loss = loss + outs[k].sum() * 0.5;
    loss.backward();
    const auto expected_grads = grads_of(*m);
    for (int n : {1, 2, 3}) {
      INFO(n << " devices");
      m->zero_grad();
      const Value got = data_parallel(m, args, cpus(n));
      std::vector<Tensor> g;
      got.for_each_tensor([&](const Tensor& t) { g.push_back(t); });
      REQUIRE(g.size() == outs.size());
      CHECK_ALLCLOSE(g[0], outs[0], 1e-12, 1e-13);
      // Every other output is gathered along dim 0 too, as PyTorch does: the plain module's
      // outputs on each chunk of the batch, concatenated. Where dim 0 is the batch (attention
      // weights) that is the whole-batch output; a recurrent layer's h_n [layers, N, H] becomes
      // [n * layers, N / n, H].
      {
        NoGradGuard no_grad;
        std::vector<std::vector<Tensor>> per_chunk(outs.size());
        for (int c = 0; c < n; ++c) {
          std::vector<Value> chunk_args;
          for (const Value& a : args) chunk_args.push_back(a.is_tensor() ? Value(a.tensor().chunk(n)[c]) : a);
          std::vector<Tensor> o;
          m->forward_value(chunk_args).for_each_tensor([&](const Tensor& t) { o.push_back(t); });
          REQUIRE(o.size() == outs.size());
          for (size_t k = 0; k < o.size(); ++k) per_chunk[k].push_back(o[k]);
        }
        for (size_t k = 1; k < g.size(); ++k) {
          INFO("output " << k);
          CHECK_ALLCLOSE(g[k], cat(per_chunk[k], 0), 1e-12, 1e-13);
        }
      }
      Tensor l = g[0].sum();
      for (size_t k = 1; k < g.size(); ++k) l = l + g[k].sum() * 0.5;
      l.backward();
      const auto grads = grads_of(*m);
      for (size_t k = 0; k < grads.size(); ++k) CHECK_ALLCLOSE(grads[k], expected_grads[k], 1e-12, 1e-13);
    }
  };
  manual_seed(3);
  const Value x = randn({6, 5, 4}, f64()), none;
  check(std::make_shared<nn::TransformerEncoderLayerImpl>(
            nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(8).dropout(0.0).batch_first(true), f64()),
        {x, none, none, Value(true)});
  check(std::make_shared<nn::MultiheadAttentionImpl>(nn::MultiheadAttentionOptions(4, 2).batch_first(true), f64()),
        {x, x, x, none, Value(true), none, Value(true), Value(false)});
  check(std::make_shared<nn::GRUImpl>(nn::GRUOptions(4, 3).num_layers(2).batch_first(true), f64()), {x, none});
  check(std::make_shared<nn::LSTMImpl>(nn::LSTMOptions(4, 3).batch_first(true), f64()), {x, none});
}

TEST_CASE("scatter_args: tensors that split into different numbers of chunks are a ValueError, not dropped rows") {
  // PyTorch zips the chunks and silently drops the longer tensor's rows; wick refuses.
  const std::vector<Device> two = {cpu(0), cpu(1)};
  Tensor five = randn({5, 2}, f64()), one = randn({1, 2}, f64());
  try {
    (void)scatter_args({Value(five), Value(one)}, two);
    FAIL("expected a ValueError");
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("[5, 2]") && Catch::Contains("[1, 2]") && Catch::Contains("2 chunks"));
  }
  // Nested under a list, and in the other order.
  CHECK_THROWS_AS(scatter_args({Value(one), Value::list({Value(five)})}, two), ValueError);
  CHECK_THROWS_AS(scatter(Value::dict({"a", "b"}, {Value(five), Value(one)}), two), ValueError);
  // Through DataParallel, before any replica runs.
  auto l = std::make_shared<nn::LinearImpl>(2, 3, f64());
  CHECK_THROWS_AS(DataParallel(l, two).forward_value({Value(five), Value(one)}), ValueError);
  // Same number of chunks from different sizes stays allowed (4 rows: 2, 2; 5 rows: 3, 2), and
  // leaves that are not tensors go to every replica the tensors use.
  Tensor four = randn({4, 2}, f64());
  auto parts = scatter_args({Value(four), Value(five), Value(int64_t{7})}, two);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0][0].tensor().size(0) == 2);
  CHECK(parts[0][1].tensor().size(0) == 3);
  CHECK(parts[1][1].tensor().size(0) == 2);
  CHECK(parts[1][2].to_int() == 7);
  auto short_parts = scatter_args({Value(int64_t{7}), Value(one)}, two);
  REQUIRE(short_parts.size() == 1);
  CHECK_VALUES_EQUAL(short_parts[0][1].tensor(), one);
}
