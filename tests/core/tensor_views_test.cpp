// Tensors: views and version counters, conversions and copies, element access and printing.
// Factories: tensor_test.cpp.
#include <wick/wick.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "support/allclose.h"
#include "support/devices.h"

using namespace wick;
using Catch::Matchers::Contains;

// ---------------------------------------------------------------------------------------------
// Views and version counters
// ---------------------------------------------------------------------------------------------

TEST_CASE("views share memory: writes through a view show in the base and vice versa") {
  NoGradGuard ng;
  Tensor base = arange(0, 12, 1, kFloat64).view({3, 4});
  Tensor row = base.select(0, 1);  // [4, 5, 6, 7]
  row.fill_(-1);
  CHECK(base.to_vector<double>() == std::vector<double>{0, 1, 2, 3, -1, -1, -1, -1, 8, 9, 10, 11});
  Tensor col = base.t().narrow(0, 2, 1);  // column 2, as a 1x3 view
  col.mul_(10);
  CHECK(base.at<double>({0, 2}) == 20);
  CHECK(base.at<double>({1, 2}) == -10);
  CHECK(base.at<double>({2, 2}) == 100);
  Tensor every_other = base.slice(1, 0, std::nullopt, 2);  // columns 0 and 2
  CHECK(every_other.sizes() == IntArrayRef({3, 2}));
  every_other.zero_();
  CHECK(base.at<double>({2, 0}) == 0);
  CHECK(base.at<double>({2, 1}) == 9);
  base.add_(1);  // a base write shows in the views
  CHECK(row.to_vector<double>() == std::vector<double>{1, 0, 1, 0});
  Tensor p = base.view({3, 2, 2}).permute({2, 0, 1}).unsqueeze(0).squeeze(0);
  CHECK(p.sizes() == IntArrayRef({2, 3, 2}));
  p.select(0, 0).select(0, 0).fill_(42);  // base[0][0] and base[0][2]
  CHECK(base.at<double>({0, 0}) == 42);
  CHECK(base.at<double>({0, 2}) == 42);
  CHECK(base.flatten().data_ptr() == base.data_ptr());
  CHECK(base.reshape({12}).data_ptr() == base.data_ptr());  // reshape of a contiguous tensor is a view
  // A transposed tensor cannot be flattened without a copy: reshape copies, view refuses.
  Tensor tr = base.t();
  CHECK_FALSE(tr.is_contiguous());
  Tensor flat = tr.reshape({12});
  CHECK(flat.data_ptr() != tr.data_ptr());
  CHECK_THROWS_WITH(tr.view({12}), Contains("view") && Contains("reshape"));
  CHECK(tr.contiguous().is_contiguous());
  CHECK(base.contiguous().is_same(base));
}

TEST_CASE("view metadata: sizes, strides and offsets") {
  Tensor t = zeros({2, 3, 4});
  CHECK(t.transpose(0, 2).strides() == IntArrayRef({1, 4, 12}));
  CHECK(t.permute({1, 2, 0}).sizes() == IntArrayRef({3, 4, 2}));
  CHECK(t.narrow(2, 1, 2).storage_offset() == 1);
  CHECK(t.narrow(-1, -3, 2).storage_offset() == 1);
  CHECK(t.select(1, 2).storage_offset() == 8);
  CHECK(t.select(1, -1).storage_offset() == 8);
  CHECK(t.unsqueeze(3).sizes() == IntArrayRef({2, 3, 4, 1}));
  CHECK(t.unsqueeze(-1).sizes() == IntArrayRef({2, 3, 4, 1}));
  CHECK(t.unsqueeze(0).strides() == IntArrayRef({24, 12, 4, 1}));  // as torch
  CHECK(zeros({1, 3, 1}).squeeze().sizes() == IntArrayRef({3}));
  CHECK(zeros({1, 3, 1}).squeeze(0).sizes() == IntArrayRef({3, 1}));
  CHECK(zeros({1, 3, 1}).squeeze(1).sizes() == IntArrayRef({1, 3, 1}));
  CHECK(t.flatten(1).sizes() == IntArrayRef({2, 12}));
  CHECK(t.flatten(0, 1).sizes() == IntArrayRef({6, 4}));
  CHECK(zeros({}).flatten().sizes() == IntArrayRef({1}));
  CHECK(t.view({-1, 4}).sizes() == IntArrayRef({6, 4}));
  CHECK(zeros({3, 1}).expand({2, 3, 5}).strides() == IntArrayRef({0, 1, 0}));
  CHECK(zeros({3, 1}).expand({-1, 5}).sizes() == IntArrayRef({3, 5}));
  CHECK(t.slice(2, 1, 4, 2).sizes() == IntArrayRef({2, 3, 2}));
  CHECK(t.slice(2, -10, 100).sizes() == IntArrayRef({2, 3, 4}));  // clamped, as Python slicing
  CHECK(t.slice(0, 5, std::nullopt).numel() == 0);
  CHECK(zeros({5}).t().sizes() == IntArrayRef({5}));
  auto parts = arange(0, 10, 1, kFloat64).split(4);
  REQUIRE(parts.size() == 3);
  CHECK(parts[2].to_vector<double>() == std::vector<double>{8, 9});
  auto chunks = arange(0, 10, 1, kFloat64).chunk(3);
  REQUIRE(chunks.size() == 3);
  CHECK(chunks[0].numel() == 4);
  CHECK(chunks[2].numel() == 2);
  CHECK(native::split_with_sizes(arange(0, 6, 1, kFloat64), {1, 0, 5}, 0)[2].numel() == 5);
}

TEST_CASE("bad view arguments raise errors naming the op and the shapes") {
  Tensor t = zeros({2, 3, 4});
  CHECK_THROWS_WITH(t.view({5, 5}), Contains("view") && Contains("[5, 5]") && Contains("[2, 3, 4]"));
  CHECK_THROWS_WITH(t.reshape({-1, -1}), Contains("reshape") && Contains("only one dim may be -1"));
  CHECK_THROWS_WITH(t.reshape({7, -1}), Contains("reshape") && Contains("[7, -1]"));
  CHECK_THROWS_WITH(t.transpose(0, 3), Contains("transpose") && Contains("dim 3 is out of range"));
  CHECK_THROWS_WITH(t.permute({0, 1}), Contains("permute") && Contains("3 dims"));
  CHECK_THROWS_WITH(t.permute({0, 1, 1}), Contains("permute") && Contains("repeats"));
  CHECK_THROWS_WITH(t.narrow(1, 2, 2), Contains("narrow") && Contains("exceeds size 3"));
  CHECK_THROWS_WITH(t.narrow(1, 0, -1), Contains("narrow"));
  CHECK_THROWS_WITH(t.select(0, 2), Contains("select") && Contains("index 2 is out of range"));
  CHECK_THROWS_WITH(t.select(0, -3), Contains("select"));
  CHECK_THROWS_WITH(zeros({}).select(0, 0), Contains("select") && Contains("0-dim"));
  CHECK_THROWS_WITH(t.expand({2, 5, 4}), Contains("expand") && Contains("[2, 3, 4]") && Contains("[2, 5, 4]"));
  CHECK_THROWS_WITH(t.expand({3, 4}), Contains("expand") && Contains("fewer dims"));
  CHECK_THROWS_WITH(zeros({1}).expand({-2}), Contains("expand"));
  CHECK_THROWS_WITH(t.slice(0, 0, 1, 0), Contains("slice") && Contains("step"));
  CHECK_THROWS_WITH(t.flatten(2, 1), Contains("flatten"));
  CHECK_THROWS_WITH(t.t(), Contains("t: ") && Contains("[2, 3, 4]"));
  CHECK_THROWS_WITH(t.split(0), Contains("split"));
  CHECK_THROWS_WITH(t.chunk(0), Contains("chunk"));
  CHECK_THROWS_WITH(native::split_with_sizes(t, {1, 2}, 2), Contains("split_with_sizes") && Contains("sum to 3"));
  CHECK_THROWS_WITH(t.unsqueeze(4), Contains("unsqueeze"));
  CHECK_THROWS_WITH(t.size(3), Contains("Tensor::size"));
}

TEST_CASE("views share the version counter, in-place ops bump it exactly once") {
  NoGradGuard ng;
  Tensor t = zeros({2, 3}, kFloat64);
  Tensor v = t.view({3, 2});
  Tensor s = t.select(0, 1);
  Tensor d = t.detach();
  CHECK(t.version() == 0);
  t.add_(1.0);
  CHECK(t.version() == 1);
  CHECK(v.version() == 1);
  CHECK(s.version() == 1);
  CHECK(d.version() == 1);
  s.mul_(2.0);
  CHECK(t.version() == 2);
  uint32_t before = t.version();
  Tensor other = ones({2, 3}, kFloat64);
  t.add_(other);
  t.sub_(other);
  t.mul_(other);
  t.div_(other);
  t.add_(other, 2.0);
  t.mul_(3);
  t.div_(3);
  t.zero_();
  t.fill_(1);
  t.clamp_(0, 1);
  t.copy_(other);
  t += other;
  t *= 2.0;
  CHECK(t.version() == before + 13);
  // A fresh result of an op or a clone starts at 0; so does a conversion.
  CHECK(t.clone().version() == 0);
  CHECK((t + t).version() == 0);
  CHECK(t.to(kFloat32).version() == 0);
  CHECK(cat({t, t}).version() == 0);
  // alias_with_new_version gives a counter of its own (PyTorch's .data).
  Tensor a = native::alias_with_new_version(t);
  a.add_(1.0);
  CHECK(a.version() == 1);
  CHECK(t.version() == before + 13);
  CHECK(t.at<double>({0, 0}) == a.at<double>({0, 0}));  // still the same memory
}

// ---------------------------------------------------------------------------------------------
// Conversions, copies and element access
// ---------------------------------------------------------------------------------------------

TEST_CASE("to(device), to(dtype), clone and copy_") {
  NoGradGuard ng;
  Tensor t = tensor({1.7, -1.7, 0.0, 2.0}, {2, 2}, kFloat64);
  CHECK(t.to(kFloat64).is_same(t));
  CHECK(t.to(Device("cpu:0")).is_same(t));
  Tensor c1 = t.to(Device("cpu:1"));
  CHECK(c1.device() == Device("cpu:1"));
  CHECK(c1.data_ptr() != t.data_ptr());
  CHECK(c1.to_vector<double>() == t.to_vector<double>());
  CHECK(t.to(kInt64).to_vector<int64_t>() == std::vector<int64_t>{1, -1, 0, 2});  // truncation, as C
  CHECK(t.to(kBool).to_vector<bool>() == std::vector<bool>{true, true, false, true});
  CHECK(t.to(Device("cpu:2"), kFloat32).dtype() == kFloat32);
  Tensor tt = t.t();  // non-contiguous source
  Tensor cl = tt.clone();
  CHECK(cl.is_contiguous());
  CHECK(cl.to_vector<double>() == std::vector<double>{1.7, 0.0, -1.7, 2.0});
  CHECK(cl.data_ptr() != tt.data_ptr());
  CHECK(tt.to(Device("cpu:1")).to_vector<double>() == cl.to_vector<double>());

  Tensor dst = zeros({2, 3}, kFloat32);
  dst.copy_(tensor({1.0, 2.0, 3.0}, kInt64));  // broadcast + dtype conversion
  CHECK(dst.to_vector<float>() == std::vector<float>{1, 2, 3, 1, 2, 3});
  Tensor other_dev = full({2, 3}, 5.0, TensorOptions(kFloat64).device("cpu:3"));
  dst.copy_(other_dev);  // across devices
  CHECK(dst.device() == Device("cpu:0"));
  CHECK(dst.to_vector<float>() == std::vector<float>(6, 5.f));
  Tensor strided = zeros({3, 2}, kFloat64).t();
  strided.copy_(tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}, kFloat64));
  CHECK(strided.to_vector<double>() == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK_THROWS_WITH(dst.copy_(zeros({4})), Contains("copy_") && Contains("[4]") && Contains("[2, 3]"));
}

TEST_CASE("item and the bounds-checked element accessor") {
  Tensor t = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}, kFloat64);
  CHECK(t.at<double>({1, 2}) == 6.0);
  CHECK(t.at<double>({-1, -1}) == 6.0);
  CHECK(t.t().at<double>({2, 0}) == 3.0);
  CHECK(t.at<int64_t>({0, 1}) == 2);
  CHECK(t.sum().item<double>() == 21.0);
  CHECK(t.select(0, 1).select(0, 0).item<double>() == 4.0);
  CHECK(tensor({7.0}).item<float>() == 7.0f);
  CHECK(ones({1, 1, 1}, kInt64).item<int64_t>() == 1);
  CHECK(ones({}, kBool).item<bool>());
  CHECK_THROWS_WITH(t.item(), Contains("item") && Contains("2x3"));
  CHECK_THROWS_WITH(zeros({0}).item(), Contains("item"));
  CHECK_THROWS_WITH(t.at<double>({2, 0}), Contains("at") && Contains("index 2 is out of bounds for dim 0 of size 2"));
  CHECK_THROWS_WITH(t.at<double>({0, -4}), Contains("at") && Contains("out of bounds"));
  CHECK_THROWS_WITH(t.at<double>({0}), Contains("at") && Contains("2 dims") && Contains("1 indices"));
  CHECK_THROWS_WITH(t.data_ptr<float>(), Contains("data_ptr") && Contains("float64") && Contains("float32"));
  CHECK(t.data_ptr<double>()[4] == 5.0);
  CHECK_THROWS_WITH(Tensor().sizes(), Contains("undefined"));
  CHECK_THROWS_WITH(Tensor().numel(), Contains("undefined"));
}

// ---------------------------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------------------------

TEST_CASE("fmt printing shows values, shape, dtype and device, and elides large tensors") {
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2});
  CHECK(fmt::format("{}", a) ==
        "tensor([[1.0000, 2.0000],\n        [3.0000, 4.0000]], shape=[2, 2], dtype=float32, device=cpu:0)");
  CHECK(fmt::format("{}", arange(3, TensorOptions(kInt64).device("cpu:4"))) ==
        "tensor([0, 1, 2], shape=[3], dtype=int64, device=cpu:4)");
  CHECK(fmt::format("{}", tensor({1.0, 0.0}).to(kBool)) ==
        "tensor([True, False], shape=[2], dtype=bool, device=cpu:0)");
  CHECK(fmt::format("{}", scalar_tensor(2.5, kFloat64)) == "tensor(2.5000, shape=[], dtype=float64, device=cpu:0)");
  CHECK(fmt::format("{}", zeros({0})) == "tensor([], shape=[0], dtype=float32, device=cpu:0)");
  CHECK(fmt::format("{}", Tensor()) == "tensor(undefined)");
  CHECK(fmt::format("{}", a.t()) ==
        "tensor([[1.0000, 3.0000],\n        [2.0000, 4.0000]], shape=[2, 2], dtype=float32, device=cpu:0)");
  const std::string big = fmt::format("{}", arange(2000));
  CHECK(big == "tensor([0, 1, 2, ..., 1997, 1998, 1999], shape=[2000], dtype=int64, device=cpu:0)");
  const std::string big2 = fmt::format("{}", arange(0, 3000, 1, kInt64).view({100, 30}));
  CHECK_THAT(big2, Contains("[0, 1, 2, ..., 27, 28, 29]") && Contains("...") &&
                       Contains("[2970, 2971, 2972, ..., 2997, 2998, 2999]]") && Contains("shape=[100, 30]"));
  CHECK(big2.size() < 400);
  CHECK(a.to_string() == fmt::format("{}", a));
}
