// nn::utils::rnn against PyTorch 1.13 (generate.py's packed_sequence_cases, float64, on every test
// device): pack_padded_sequence, pad_packed_sequence, pad_sequence, pack_sequence, and LSTM, GRU
// and RNN's forward_with_packed_input (outputs, final states and the gradients of the input, the
// states and every parameter). Then hand-computed packings (batch sizes, permutations, lengths,
// padding, which rows get a gradient) and the typed errors of the utilities.
// Layers on packed input beyond the oracle: packed_rnn_test.cpp.
#include <catch2/catch.hpp>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "support/layer_oracle.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"
#include "wick/autograd/grad.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using namespace wick::nn::utils::rnn;
using wick::test::expect_error;
using wick::test::OracleCase;

namespace {
constexpr double kRtol = 1e-10, kAtol = 1e-13;
const TensorOptions kF64(kFloat64);

std::vector<int64_t> values(const Tensor& t) {
  const Tensor c = t.to(kCPU).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

using wick::test::f64;

// The packed output of a layer case: its data or, with kwargs output "padded", pad_packed_sequence of it.
Tensor packed_output(const OracleCase& c, const PackedSequence& out) {
  if (c.kw<std::string>("output", "data") == "data") return out.data();
  return std::get<0>(pad_packed_sequence(out, c.kw<bool>("batch_first", false)));
}

PackedSequence packed_input(const OracleCase& c, const Tensor& x) {
  return pack_padded_sequence(x, c.kwargs.at("lengths").get<std::vector<int64_t>>(), c.kw<bool>("batch_first", false),
                              c.kw<bool>("enforce_sorted", true));
}

RNNOptions rnn_options(const OracleCase& c) {
  return RNNOptions(3, 4)
      .num_layers(c.kw<int64_t>("num_layers", 1))
      .bidirectional(c.kw<bool>("bidirectional", false))
      .batch_first(c.kw<bool>("batch_first", false))
      .nonlinearity(c.kw<std::string>("nonlinearity", "tanh") == "relu" ? kReLU : kTanh);
}
}  // namespace

TEST_CASE("packed sequences: pack_padded_sequence pad_packed_sequence pad_sequence and pack_sequence match PyTorch",
          "[nn][oracle][packed_sequence]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    const bool pack = c.op == "pack_padded_sequence", unpack = c.op == "pad_packed_sequence";
    const bool pad = c.op == "pad_sequence", pack_seq = c.op == "pack_sequence";
    if (!pack && !unpack && !pad && !pack_seq) continue;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      const bool batch_first = c.kw<bool>("batch_first", false);
      Tensor out;
      if (pack) {
        out = pack_padded_sequence(x[0], c.inputs[1], batch_first, c.kw<bool>("enforce_sorted", true)).data();
      } else if (unpack) {
        const PackedSequence seq(x[0], c.inputs[1], x.size() > 2 ? x[2] : Tensor());
        const auto total = c.kwargs.contains("total_length")
                               ? std::optional<int64_t>(c.kwargs.at("total_length").get<int64_t>())
                               : std::nullopt;
        out = std::get<0>(pad_packed_sequence(seq, batch_first, c.kw<double>("padding_value", 0.0), total));
      } else if (pad) {
        out = pad_sequence(x, batch_first, c.kw<double>("padding_value", 0.0));
      } else {
        out = pack_sequence(x, c.kw<bool>("enforce_sorted", true)).data();
      }
      wick::test::check_oracle_case(c, out, x, dev, kRtol, kRtol, kAtol);
    }
    ++seen[c.op];
  }
  CHECK(seen["pack_padded_sequence"] >= 4);
  CHECK(seen["pad_packed_sequence"] >= 3);
  CHECK(seen["pad_sequence"] >= 2);
  CHECK(seen["pack_sequence"] >= 2);
}

TEST_CASE("packed sequences: LSTM GRU and RNN on packed input match PyTorch with unsorted lengths and initial states",
          "[nn][oracle][packed_sequence]") {
  using namespace wick::test::layer_oracle;
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "lstm_packed" && c.op != "gru_packed" && c.op != "rnn_packed") continue;
    const RNNOptions o = rnn_options(c);
    const auto base = RNNOptionsBase(3, 4).num_layers(o.num_layers()).bidirectional(o.bidirectional());
    for (Device dev : wick::test::test_devices()) {
      if (c.op == "lstm_packed") {
        LSTM m(base, kF64);
        check_layer(c, *m, dev, [&c](Module& mod, const Inputs& in) -> std::vector<Tensor> {
          auto hx =
              in.count("h0") ? std::optional<std::tuple<Tensor, Tensor>>({in.at("h0"), in.at("c0")}) : std::nullopt;
          auto [out, state] =
              static_cast<LSTMImpl&>(mod).forward_with_packed_input(packed_input(c, in.at("input")), hx);
          return {packed_output(c, out), std::get<0>(state), std::get<1>(state)};
        });
      } else if (c.op == "gru_packed") {
        GRU m(base, kF64);
        check_layer(c, *m, dev, [&c](Module& mod, const Inputs& in) -> std::vector<Tensor> {
          auto [out, h] = static_cast<GRUImpl&>(mod).forward_with_packed_input(packed_input(c, in.at("input")),
                                                                               input_or_none(in, "h0"));
          return {packed_output(c, out), h};
        });
      } else {
        RNN m(o, kF64);
        check_layer(c, *m, dev, [&c](Module& mod, const Inputs& in) -> std::vector<Tensor> {
          auto [out, h] = static_cast<RNNImpl&>(mod).forward_with_packed_input(packed_input(c, in.at("input")),
                                                                               input_or_none(in, "h0"));
          return {packed_output(c, out), h};
        });
      }
    }
    ++seen[c.op];
  }
  CHECK(seen["lstm_packed"] >= 2);
  CHECK(seen["gru_packed"] >= 2);
  CHECK(seen["rnn_packed"] >= 2);
}

TEST_CASE("packed sequences: a hand-packed batch with unsorted lengths and its round trip", "[nn][packed_sequence]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // T = 3, B = 4: x[t][b] = 4 t + b; lengths 1, 3, 2, 3 -> sorted order 1, 3, 2, 0 (stable).
    Tensor x = wick::arange(12, kF64).reshape({3, 4}).to(dev).requires_grad_(true);
    const PackedSequence p = pack_padded_sequence(x, wick::tensor(std::vector<int64_t>{1, 3, 2, 3}, {4}), false, false);
    CHECK(p.data().device() == dev);
    CHECK_ALLCLOSE(p.data(), f64({1, 3, 2, 0, 5, 7, 6, 9, 11}, {9}), 0, 0);
    CHECK(values(p.batch_sizes()) == std::vector<int64_t>{4, 3, 2});
    CHECK(p.batch_sizes().device() == kCPU);
    CHECK(values(p.sorted_indices()) == std::vector<int64_t>{1, 3, 2, 0});
    CHECK(values(p.unsorted_indices()) == std::vector<int64_t>{3, 0, 2, 1});
    CHECK(p.sorted_indices().device() == dev);
    // Only the rows inside a sequence get a gradient.
    auto g = autograd::grad({sum(p.data() * p.data())}, {x});
    CHECK_ALLCLOSE(g[0], f64({0, 2, 4, 6, 0, 10, 12, 14, 0, 18, 0, 22}, {3, 4}), 0, 0);
    auto [padded, lengths] = pad_packed_sequence(p, true, -1.0, 4);
    CHECK(values(lengths) == std::vector<int64_t>{1, 3, 2, 3});
    CHECK(lengths.device() == kCPU);
    CHECK_ALLCLOSE(padded, f64({0, -1, -1, -1, 1, 5, 9, -1, 2, 6, -1, -1, 3, 7, 11, -1}, {4, 4}), 0, 0);
  }
}

TEST_CASE("packed sequences: sorted batch_first packing of a B x T x 2 batch and its blocks", "[nn][packed_sequence]") {
  // B = 3, T = 4, lengths 4, 2, 2 sorted: steps 0-1 hold 3 sequences, steps 2-3 one.
  Tensor x = wick::arange(24, kF64).reshape({3, 4, 2});
  const PackedSequence p = pack_padded_sequence(x, std::vector<int64_t>{4, 2, 2}, true);
  CHECK(values(p.batch_sizes()) == std::vector<int64_t>{3, 3, 1, 1});
  CHECK_FALSE(p.sorted_indices().defined());
  CHECK_FALSE(p.unsorted_indices().defined());
  CHECK_ALLCLOSE(p.data(), f64({0, 1, 8, 9, 16, 17, 2, 3, 10, 11, 18, 19, 4, 5, 6, 7}, {8, 2}), 0, 0);
  auto [back, lengths] = pad_packed_sequence(p, true);
  CHECK(values(lengths) == std::vector<int64_t>{4, 2, 2});
  CHECK_ALLCLOSE(back, f64({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 0, 0, 0, 16, 17, 18, 19, 0, 0, 0, 0}, {3, 4, 2}),
                 0, 0);
  // The packed data is a copy, never a view of the input (also for one block).
  Tensor one = wick::zeros({2, 1, 2}, kF64);
  const PackedSequence q = pack_padded_sequence(one, std::vector<int64_t>{2});
  one.fill_(5.0);
  CHECK_ALLCLOSE(q.data(), wick::zeros({2, 2}, kF64), 0, 0);
}

TEST_CASE("packed sequences: pad_sequence with an empty sequence and pack_sequence of int64 tokens",
          "[nn][packed_sequence]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = TensorOptions(kFloat64).device(dev);
    Tensor a = wick::tensor({1.0, 2.0, 3.0}, o), b = wick::zeros({0}, o), c = wick::tensor({4.0}, o);
    CHECK_ALLCLOSE(pad_sequence({a, b, c}, true, 9.0), f64({1, 2, 3, 9, 9, 9, 4, 9, 9}, {3, 3}), 0, 0);
    CHECK_ALLCLOSE(pad_sequence({a, b, c}), f64({1, 0, 4, 2, 0, 0, 3, 0, 0}, {3, 3}), 0, 0);
    Tensor t1 = wick::tensor(std::vector<int64_t>{7, 8}, {2}).to(dev),
           t2 = wick::tensor(std::vector<int64_t>{5}, {1}).to(dev);
    Tensor t3 = wick::tensor(std::vector<int64_t>{1, 2, 3}, {3}).to(dev);
    const PackedSequence p = pack_sequence({t1, t2, t3}, false);
    CHECK(p.data().dtype() == kInt64);
    CHECK(values(p.data()) == std::vector<int64_t>{1, 7, 5, 2, 8, 3});
    CHECK(values(p.batch_sizes()) == std::vector<int64_t>{3, 2, 1});
    CHECK(values(std::get<1>(pad_packed_sequence(p))) == std::vector<int64_t>{2, 1, 3});
    // to() moves data and indices; batch_sizes stays on the CPU.
    const PackedSequence moved = p.to(Device("cpu:1"));
    CHECK(moved.data().device() == Device("cpu:1"));
    CHECK(moved.unsorted_indices().device() == Device("cpu:1"));
    CHECK(moved.batch_sizes().device() == kCPU);
    CHECK(p.to(kFloat64).data().dtype() == kFloat64);
  }
}

TEST_CASE("packed sequences: bad lengths shapes and indices give typed errors naming the function",
          "[nn][packed_sequence][errors]") {
  const Tensor x = wick::zeros({3, 2, 1}, kF64);
  using L = std::vector<int64_t>;
  expect_error<ValueError>(
      [&] {
        pack_padded_sequence(x, L{2, 3});
      },
      {"pack_padded_sequence", "lengths [2, 3]", "decreasing", "enforce_sorted = false"});
  expect_error<ValueError>(
      [&] {
        pack_padded_sequence(x, L{3, 0}, false, false);
      },
      {"pack_padded_sequence", "lengths [3, 0]", "0 at index 1", "[1, 3]"});
  expect_error<ValueError>(
      [&] {
        pack_padded_sequence(x, L{4, 2});
      },
      {"pack_padded_sequence", "4 at index 0", "[1, 3]"});
  expect_error<ValueError>(
      [&] {
        pack_padded_sequence(x, L{3, 2, 1});
      },
      {"pack_padded_sequence", "3 entries", "[3, 2, 1]", "batch of 2"});
  expect_error<TypeError>(
      [&] {
        pack_padded_sequence(x, wick::tensor({3.0, 2.0}));
      },
      {"pack_padded_sequence", "lengths", "int64", "float32"});
  expect_error<ValueError>(
      [&] {
        pack_padded_sequence(x, wick::tensor(L{3, 2}, {1, 2}));
      },
      {"pack_padded_sequence", "1-d", "[1, 2]"});
  expect_error<ValueError>([&] { pack_padded_sequence(wick::zeros({3}, kF64), L{3}); },
                           {"pack_padded_sequence", "[T, B, *]", "[3]"});
  for (Device dev : wick::test::test_devices()) {
    if (dev.is_cpu()) continue;  // lengths on any CPU device are fine; elsewhere refused, as PyTorch's
    expect_error<ValueError>(
        [&] {
          pack_padded_sequence(x.to(dev), wick::tensor(L{3, 2}, {2}).to(dev));
        },
        {"pack_padded_sequence", "lengths", "CPU", dev.str()});
  }
  CHECK(values(pack_padded_sequence(x, wick::tensor(L{3, 2}, {2}).to(Device("cpu:1"))).batch_sizes()) == L{2, 2, 1});
  const PackedSequence p = pack_padded_sequence(x, L{3, 1});
  expect_error<ValueError>([&] { pad_packed_sequence(p, false, 0.0, 2); },
                           {"pad_packed_sequence", "total_length = 2", "3 steps"});
  expect_error<ValueError>([] { pad_sequence({}); }, {"pad_sequence", "empty list"});
  expect_error<ValueError>(
      [] {
        pad_sequence({wick::zeros({2, 3}), wick::zeros({1, 2})});
      },
      {"pad_sequence", "sequence 1", "[1, 2]", "[2, 3]", "trailing shape"});
  expect_error<TypeError>(
      [] {
        pad_sequence({wick::zeros({2}), wick::zeros({1}, kF64)});
      },
      {"pad_sequence", "sequence 1", "float64", "float32"});
  expect_error<ValueError>(
      [] {
        pad_sequence({wick::zeros({2}), wick::zeros({1}, TensorOptions().device(Device("cpu:1")))});
      },
      {"pad_sequence", "sequence 1", "cpu:1", "cpu:0"});
  expect_error<ValueError>(
      [] {
        pack_sequence({wick::zeros({2}), wick::zeros({0})});
      },
      {"pack_sequence", "sequence 1", "length 0"});
  expect_error<ValueError>(
      [] {
        pack_sequence({wick::zeros({1}), wick::zeros({2})});
      },
      {"pack_sequence", "sequence 1", "longer", "enforce_sorted = false"});
  const Tensor bs = wick::tensor(L{2, 1}, {2});
  expect_error<ValueError>(
      [&] {
        PackedSequence(wick::zeros({3}), wick::tensor(L{1, 2}, {2}));
      },
      {"PackedSequence", "batch_sizes [1, 2]", "non-increasing"});
  expect_error<ValueError>([&] { PackedSequence(wick::zeros({4}), bs); }, {"PackedSequence", "sum to 3", "4 rows"});
  expect_error<ValueError>(
      [&] {
        PackedSequence(wick::zeros({3}), bs, wick::tensor(L{1, 1}, {2}));
      },
      {"PackedSequence", "sorted_indices [1, 1]", "permutation of [0, 2)"});
  expect_error<TypeError>([&] { PackedSequence(wick::zeros({3}), bs.to(kFloat64)); },
                          {"PackedSequence", "batch_sizes", "int64", "float64"});
  for (Device dev : wick::test::test_devices())
    if (!dev.is_cpu())
      expect_error<ValueError>([&] { PackedSequence(wick::zeros({3}, TensorOptions().device(dev)), bs.to(dev)); },
                               {"PackedSequence", "batch_sizes", "CPU", dev.str()});
}

TEST_CASE("packed sequences: a PackedSequence keeps copies of its index tensors", "[nn][packed_sequence]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev);
    const TensorOptions o = TensorOptions(kFloat64).device(dev);
    // Lengths 1, 3, 2 (unsorted): batch_sizes [3, 2, 1], sorted_indices [1, 2, 0].
    const Tensor padded = wick::arange(0, 9, 1, o).reshape({3, 3, 1});
    const PackedSequence p = pack_padded_sequence(padded, std::vector<int64_t>{1, 3, 2}, false, false);
    const auto [want, want_lengths] = pad_packed_sequence(p);
    Tensor bs = wick::tensor(std::vector<int64_t>{3, 2, 1}, {3}, TensorOptions(kInt64));
    Tensor sorted = p.sorted_indices().clone(), unsorted = p.unsorted_indices().clone();
    const PackedSequence q(p.data(), bs, sorted, unsorted);
    // The caller's tensors changed in place afterwards: q is not.
    bs.fill_(1000);
    sorted.fill_(1000);
    unsorted.fill_(1000);
    const auto [got, got_lengths] = pad_packed_sequence(q);
    CHECK_ALLCLOSE(got, want, 0, 0);
    CHECK(values(got_lengths) == values(want_lengths));
    CHECK(values(q.batch_sizes()) == std::vector<int64_t>{3, 2, 1});
    // Its own tensors changed in place: the readers refuse them instead of reading out of bounds.
    Tensor(q.unsorted_indices()).fill_(1000);
    CHECK_THROWS_AS(pad_packed_sequence(q), ValueError);
    CHECK_THROWS_WITH(pad_packed_sequence(q), Catch::Contains("unsorted_indices"));
    // batch_sizes changed in place to [1, 2, 3] (the same sum): a layer refuses them.
    RNN rnn(RNNOptions(1, 2), kF64);
    rnn->to(dev);
    const PackedSequence s(p.data(), wick::tensor(std::vector<int64_t>{3, 2, 1}, {3}, TensorOptions(kInt64)));
    CHECK_NOTHROW(rnn->forward_with_packed_input(s));
    Tensor(s.batch_sizes()).copy_(wick::tensor(std::vector<int64_t>{1, 2, 3}, {3}, TensorOptions(kInt64)));
    CHECK_THROWS_AS(rnn->forward_with_packed_input(s), ValueError);
    CHECK_THROWS_WITH(rnn->forward_with_packed_input(s), Catch::Contains("non-increasing"));
  }
}

TEST_CASE("packed sequences: batch sizes that overflow and huge permutations are refused", "[nn][packed_sequence]") {
  const int64_t big = std::numeric_limits<int64_t>::max();
  const Tensor row = wick::zeros({1, 1}, kF64);
  // Positive and non-increasing, but the sum wraps: a ValueError, not a wrapped count.
  CHECK_THROWS_WITH(PackedSequence(row, wick::tensor(std::vector<int64_t>{big, big, 2}, {3}, TensorOptions(kInt64))),
                    Catch::Contains("sum past int64"));
  // 2^50 sequences (an expanded view) with a one-entry sorted_indices: refused before n flags.
  const int64_t n = int64_t{1} << 50;
  const Tensor rows = row.expand({n, 1});
  const Tensor one = wick::tensor(std::vector<int64_t>{0}, {1}, TensorOptions(kInt64));
  CHECK_THROWS_AS(PackedSequence(rows, wick::tensor(std::vector<int64_t>{n}, {1}, TensorOptions(kInt64)), one),
                  ValueError);
}
