// DataParallel and data_parallel on CPU devices: the non-CUDA-only cases of PyTorch's
// test_data_parallel.py about inputs, outputs, devices and gradients. Replicas inside forward,
// gathering, errors and numerical equivalence: data_parallel_replicas_test.cpp.
#include "wick/parallel/data_parallel.h"

#include <wick/nn/nn.h>
#include <wick/nn/optim/optim.h>

#include <catch2/catch.hpp>

#include "parallel/parallel_test_util.h"
#include "support/gradcheck.h"
#include "wick/parallel/scatter_gather.h"

using namespace wick;
using namespace wick::parallel;
using nn::Value;
using wick::test::cpu;
using wick::test::cpus;
using wick::test::f64;
using wick::test::grads_of;

namespace {

// forward(var1, var2, float1, var3 = None) of test_data_parallel_multiple_input.
class MultiInput : public nn::Cloneable<MultiInput> {
 public:
  Tensor forward(const Tensor& var1, const Tensor& var2, double float1, std::optional<Tensor> var3) {
    if (!var3) return float1 * (var1 * var2);
    return float1 * (var1 * var2 + *var3);
  }
};

// forward(x) = x * t_rg + t_not_rg, with a buffer that requires grad.
class BuffersRequiringGrad : public nn::Cloneable<BuffersRequiringGrad> {
 public:
  BuffersRequiringGrad() {
    Tensor t = randn({100}, f64());
    rg_ = register_buffer("t_rg", t.detach().requires_grad_());
    not_rg_ = register_buffer("t_not_rg", t.detach().clone());
  }
  Tensor forward(const Tensor& x) { return x * buffer(rg_) + buffer(not_rg_); }
  nn::BufferSlot rg_, not_rg_;
};

// Returns [x, (sin, cos, [x + 1]), x, {a: x, b: [sin]}] (test_data_parallel_nested_output).
class NestedOutput : public nn::Cloneable<NestedOutput> {
 public:
  Value forward_value(const std::vector<Value>& args) override {
    const Tensor& x = args[0].tensor();
    return Value::list({x, Value::tuple({x.sin(), x.cos(), Value::list({x + 1.0})}), x,
                        Value::dict({"a", "b"}, {x, Value::list({x.sin()})})});
  }
};

// Returns input[1][0] (test_data_parallel_nested_input).
class NestedInput : public nn::Cloneable<NestedInput> {
 public:
  Value forward_value(const std::vector<Value>& args) override { return args[0].items()[1].items()[0]; }
};

class ZeroInputs : public nn::Cloneable<ZeroInputs> {
 public:
  Tensor forward() {
    Tensor e = eye(2, 3, f64());
    return e + (1.0 - e);
  }
};

class AssertNoGrad : public nn::Cloneable<AssertNoGrad> {
 public:
  Tensor forward(const Tensor& x) {
    WICK_CHECK(!GradMode::is_enabled(), "grad mode is on inside forward");
    return x;
  }
};

}  // namespace

TEST_CASE("DataParallel: gradcheck through a buffer that requires grad (test_data_parallel_buffers_requiring_grad)") {
  auto m = std::make_shared<BuffersRequiringGrad>();
  auto dpm = std::make_shared<DataParallel>(m, std::vector<Device>{cpu(0), cpu(1)});
  Tensor input = randn({2, 100}, f64());
  auto fn = [&](const TensorList& t) {
    m->set_buffer_entry(0, t[0]);
    return TensorList{dpm->forward(input)};
  };
  CHECK_GRADCHECK(fn, {m->buffer(m->rg_)});
}

TEST_CASE("data_parallel with several inputs, a float and an optional tensor (test_data_parallel_multiple_input)") {
  auto m = std::make_shared<MultiInput>();
  Tensor var1 = randn({5, 5}, f64().requires_grad());
  Tensor var2 = randn({5, 5}, f64().requires_grad());
  Tensor var3 = randn({5, 5}, f64());
  const double float1 = 1.7;
  Tensor expected = m->forward(var1, var2, float1, std::nullopt);
  expected.sum().backward();
  Tensor g1 = var1.grad().clone(), g2 = var2.grad().clone();
  Tensor expected3 = m->forward(var1, var2, float1, var3);

  auto check = [&](const Value& out, const Tensor& exp) {
    var1.set_grad(Tensor());
    var2.set_grad(Tensor());
    CHECK_ALLCLOSE(out.tensor(), exp, 1e-14, 0);
    out.tensor().sum().backward();
    CHECK_ALLCLOSE(var1.grad(), g1, 1e-14, 0);
    CHECK_ALLCLOSE(var2.grad(), g2, 1e-14, 0);
  };
  std::vector<Value> args{var1, var2, float1, Value()};
  check(data_parallel(m, args, {cpu(0), cpu(1)}), expected);
  check(data_parallel(m, args, {cpu(0)}), expected);
  // with (1, 0): the module has no parameters, so any first device works
  check(data_parallel(m, args, {cpu(1), cpu(0)}), expected);
  std::vector<Value> args3{var1, var2, float1, var3};
  check(DataParallel(m, cpus(2)).forward_value(args3), expected3);
  check(DataParallel(m, {cpu(0)}).forward_value(args3), expected3);
  check(data_parallel(m, args3, {cpu(0), cpu(1), cpu(2)}), expected3);
}

TEST_CASE("data_parallel equals the module (test_data_parallel_small_back, test_data_parallel_module)") {
  auto l = std::make_shared<nn::LinearImpl>(10, 5, f64());
  Tensor i = randn({20, 10}, f64());
  Tensor out = data_parallel(l, i, {cpu(0), cpu(1)});
  CHECK_ALLCLOSE(out, l->forward(i), 1e-14, 0);
  auto dp = std::make_shared<DataParallel>(l, cpus(3));
  Tensor o2 = dp->forward(i);
  CHECK(o2.device() == cpu(0));
  CHECK_ALLCLOSE(o2, l->forward(i), 1e-14, 0);
  CHECK(dp->named_parameters().keys()[0] == "module.weight");
}

TEST_CASE("DataParallel: the module must live on device_ids[0] (test_data_parallel_model_device)") {
  auto expect = [](std::shared_ptr<nn::Module> inner, std::vector<Device> ids, bool should_fail) {
    Tensor inp = randn({4, 2}, f64());
    auto dp = std::make_shared<DataParallel>(inner, ids);
    if (should_fail) {
      const std::string msg = fmt::format("module must have its parameters and buffers on device {}", ids[0]);
      CHECK_THROWS_WITH(dp->forward(inp), Catch::Contains(msg) && Catch::Contains("(device_ids[0])"));
      CHECK_THROWS_WITH(data_parallel(inner, inp, ids), Catch::Contains(msg));
    } else {
      CHECK_NOTHROW(dp->forward(inp));
      CHECK_NOTHROW(data_parallel(inner, inp, ids));
    }
  };
  auto lin = [](Device d) { return std::make_shared<nn::LinearImpl>(2, 2, f64(d)); };
  expect(lin(cpu(0)), {cpu(0), cpu(1)}, false);
  expect(lin(cpu(1)), {cpu(0), cpu(1)}, true);
  expect(lin(cpu(0)), {cpu(1), cpu(0)}, true);
  expect(lin(cpu(1)), {cpu(1), cpu(0)}, false);
  auto seq = [&](Device a, Device b) {
    auto s = std::make_shared<nn::SequentialImpl>();
    s->push_back(lin(a));
    s->push_back(lin(b));
    return s;
  };
  expect(seq(cpu(0), cpu(0)), {cpu(0), cpu(1)}, false);
  expect(seq(cpu(0), cpu(1)), {cpu(0), cpu(1)}, true);
  expect(seq(cpu(2), cpu(0)), {cpu(0), cpu(1)}, true);
  expect(seq(cpu(0), cpu(0)), {cpu(1), cpu(0)}, true);
  expect(seq(cpu(1), cpu(1)), {cpu(1), cpu(0)}, false);
  // a module moved by to() passes
  auto moved = seq(cpu(0), cpu(2));
  moved->to(cpu(1));
  expect(moved, {cpu(1), cpu(0)}, false);
  // the error names the device of the misplaced tensor
  auto dp = std::make_shared<DataParallel>(lin(cpu(2)), std::vector<Device>{cpu(0), cpu(1)});
  CHECK_THROWS_WITH(dp->forward(randn({4, 2}, f64())), Catch::Contains("found one of them on device: cpu:2"));
}

TEST_CASE("data_parallel: grad mode reaches the workers (test_data_parallel_no_grad)") {
  auto m = std::make_shared<AssertNoGrad>();
  Tensor i = randn({4, 3}, f64());
  {
    NoGradGuard ng;
    CHECK_NOTHROW(data_parallel(m, i, {cpu(0), cpu(1)}));
  }
  CHECK_THROWS_WITH(data_parallel(m, i, {cpu(0), cpu(1)}), Catch::Contains("grad mode is on inside forward"));
}

TEST_CASE("data_parallel: output on device_ids[0], gradients equal the single-device ones (test_data_parallel)") {
  auto l = std::make_shared<nn::LinearImpl>(10, 5, f64(cpu(1)));
  Tensor i = randn({20, 10}, f64(cpu(1)));
  Tensor expected = l->forward(i);
  expected.sum().backward();
  auto expected_grads = grads_of(*l);
  for (std::vector<Device> ids : {std::vector<Device>{cpu(0), cpu(1)}, std::vector<Device>{cpu(1), cpu(0)}}) {
    l->to(ids[0]);
    l->zero_grad();
    Tensor out = data_parallel(l, i.to(ids[0]), ids);
    CHECK(out.device() == ids[0]);
    CHECK_ALLCLOSE(out, expected, 1e-14, 0);
    out.sum().backward();
    auto g = grads_of(*l);
    for (size_t k = 0; k < g.size(); ++k) {
      CHECK(g[k].device() == ids[0]);
      CHECK_ALLCLOSE(g[k], expected_grads[k], 1e-13, 0);
    }
  }
  // no devices named and no GPU: data_parallel refuses, DataParallel is a plain call
  if (default_device_ids().empty()) {
    CHECK_THROWS_WITH(data_parallel(l, i.to(cpu(1))), Catch::Contains("no devices to run on"));
    DataParallel plain(l);
    CHECK_ALLCLOSE(plain.forward(i.to(cpu(1))), expected, 0, 0);
  }
}

TEST_CASE("DataParallel: nested outputs keep their structure (test_data_parallel_nested_output)") {
  auto m = std::make_shared<NestedOutput>();
  Tensor i = randn({2, 2}, f64(cpu(1)));
  m->to(cpu(1));
  Value out = DataParallel(m, {cpu(1), cpu(0), cpu(2), cpu(3)}).forward_value({i});  // 2 rows: 2 devices used
  Value expected = m->forward_value({i});
  REQUIRE(out.is_list());
  REQUIRE(out.items().size() == 4);
  CHECK(out.items()[0].is_tensor());
  CHECK_ALLCLOSE(out.items()[0].tensor(), i, 0, 0);
  REQUIRE(out.items()[1].is_tuple());
  CHECK_ALLCLOSE(out.items()[1].items()[0].tensor(), i.sin(), 0, 0);
  CHECK_ALLCLOSE(out.items()[1].items()[1].tensor(), i.cos(), 0, 0);
  REQUIRE(out.items()[1].items()[2].is_list());
  CHECK_ALLCLOSE(out.items()[1].items()[2].items()[0].tensor(), i + 1.0, 0, 0);
  CHECK_ALLCLOSE(out.items()[2].tensor(), i, 0, 0);
  REQUIRE(out.items()[3].is_dict());
  CHECK(out.items()[3].dict().keys == std::vector<std::string>{"a", "b"});
  CHECK_ALLCLOSE(out.items()[3].dict().values[0].tensor(), i, 0, 0);
  REQUIRE(out.items()[3].dict().values[1].is_list());
  CHECK_ALLCLOSE(out.items()[3].dict().values[1].items()[0].tensor(), i.sin(), 0, 0);
  CHECK(out.items()[0].tensor().device() == cpu(1));
}

TEST_CASE("DataParallel: nested inputs are scattered leaf by leaf (test_data_parallel_nested_input)") {
  auto m = std::make_shared<NestedInput>();
  Tensor i = randn({20, 3}, f64(cpu(1)));
  Value input = Value::tuple({i.cos(), Value::tuple({i.sin(), i}), i.sin()});
  Value out = DataParallel(m, {cpu(1), cpu(0), cpu(2)}).forward_value({input});
  CHECK_ALLCLOSE(out.tensor(), i.sin(), 0, 0);
}

TEST_CASE("DataParallel: a module without inputs runs once on device_ids[0] (test_data_parallel_module_zero_inputs)") {
  auto model = std::make_shared<ZeroInputs>();
  for (auto ids : {std::vector<Device>{cpu(0)}, std::vector<Device>{cpu(0), cpu(1)}}) {
    Value out = DataParallel(model, ids).forward_value({});
    CHECK(out.tensor().device() == cpu(0));
    CHECK_VALUES_EQUAL(out.tensor(), ones({2, 3}, f64()));
    Value out2 = data_parallel(model, std::vector<Value>{}, ids);
    CHECK_VALUES_EQUAL(out2.tensor(), ones({2, 3}, f64()));
  }
}

TEST_CASE("data_parallel: device arguments (test_data_parallel_device_args)") {
  auto l = std::make_shared<nn::LinearImpl>(10, 5, f64());
  Tensor i = randn({20, 10}, f64());
  CHECK_ALLCLOSE(data_parallel(l, i, {cpu(0), cpu(1)}, cpu(0)), l->forward(i), 1e-14, 0);
  CHECK_ALLCLOSE(data_parallel(l, i, {Device("cpu:0"), Device("cpu:1")}), l->forward(i), 1e-14, 0);
  Tensor on2 = data_parallel(l, i, {cpu(0), cpu(1)}, cpu(2));
  CHECK(on2.device() == cpu(2));
}
