#pragma once
// Helpers for the GPU tests: random CPU inputs of every dtype, moving tensors between cpu:0
// and cuda:N, and comparing a CUDA result with the CPU backend's.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "wick/core/backend.h"
#include "wick/core/native.h"
#include "wick/cuda/runtime.h"

namespace wick::cuda_test {

namespace nat = wick::native;

inline Device gpu(int i = 0) { return Device(DeviceType::CUDA, i); }

/// Random CPU tensor: normal floats, integers in [-20, 20), bools with p = 1/2.
inline Tensor random_cpu(IntArrayRef shape, DType dtype) {
  switch (dtype) {
    case DType::Float32:
    case DType::Float64:
      return nat::randn(shape, dtype, kCPU);
    case DType::Int64:
      return nat::randint(-20, 20, shape, kInt64, kCPU);
    case DType::Bool:
      return nat::to(nat::randint(0, 2, shape, kInt64, kCPU), kCPU, kBool);
  }
  return {};
}

/// Positive floats in [0.1, 3) (for log, sqrt, pow, ...).
inline Tensor positive_cpu(IntArrayRef shape, DType dtype) {
  Tensor u = nat::rand(shape, dtype, kCPU);
  return nat::binary(BinaryOp::Add, nat::binary(BinaryOp::Mul, u, Scalar(2.9)), Scalar(0.1));
}

inline Tensor to_gpu(const Tensor& t, int i = 0) { return nat::to(t, gpu(i), t.dtype()); }
inline Tensor to_cpu(const Tensor& t) { return nat::to(t, kCPU, t.dtype()); }

/// Same values as `t` (a CPU tensor) in a non-contiguous CUDA tensor: the data is stored
/// transposed (last two dims swapped) or, for 1-d, with a stride of 2.
inline Tensor noncontiguous_gpu(const Tensor& t) {
  if (t.dim() >= 2) {
    Tensor stored = nat::contiguous(nat::transpose(t, -1, -2));
    return nat::transpose(to_gpu(stored), -1, -2);
  }
  DimVector big(t.sizes());
  if (big.empty()) return to_gpu(t);
  big[0] *= 2;
  Tensor g = nat::zeros(big, t.dtype(), gpu());
  Tensor view = nat::slice(g, 0, 0, std::nullopt, 2);
  nat::copy_(view, t);
  return view;
}

/// One image's window geometry for the im2col/pooling kernel tests: `c` planes of h x w,
/// kernel, padding, stride, dilation; out_h/out_w from the floor formula unless given (ceil_mode
/// sizes).
struct WindowGeo {
  int64_t c, h, w, kh, kw, ph, pw, sh, sw, dh, dw, oh = -1, ow = -1;
  Im2ColArgs args(DType dt) const {
    Im2ColArgs g{};
    g.dtype = dt;
    g.channels = c;
    g.height = h;
    g.width = w;
    g.kernel_h = kh;
    g.kernel_w = kw;
    g.pad_h = ph;
    g.pad_w = pw;
    g.stride_h = sh;
    g.stride_w = sw;
    g.dilation_h = dh;
    g.dilation_w = dw;
    g.out_h = oh >= 0 ? oh : (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1;
    g.out_w = ow >= 0 ? ow : (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
    return g;
  }
};

inline std::string shape_str(IntArrayRef s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

/// Checks that `got` (any device) equals `want` (any device) in shape and dtype, and in value
/// within rtol/atol (NaN matches NaN).
inline void check_close(const Tensor& got, const Tensor& want, double rtol = 1e-5, double atol = 1e-6,
                        const std::string& what = "") {
  INFO(what);
  REQUIRE(shape_str(got.sizes()) == shape_str(want.sizes()));
  REQUIRE(dtype_name(got.dtype()) == dtype_name(want.dtype()));
  const auto g = nat::to(got, kCPU, kFloat64).to_vector<double>();
  const auto w = nat::to(want, kCPU, kFloat64).to_vector<double>();
  REQUIRE(g.size() == w.size());
  size_t bad = 0, first = g.size();
  for (size_t i = 0; i < g.size(); ++i) {
    const bool both_nan = std::isnan(g[i]) && std::isnan(w[i]);
    const bool same_inf = std::isinf(g[i]) && g[i] == w[i];
    if (both_nan || same_inf) continue;
    if (!(std::abs(g[i] - w[i]) <= atol + rtol * std::abs(w[i]))) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad) {
    FAIL(fmt::format("{} of {} elements differ; first at flat index {}: cuda {} vs cpu {}", bad, g.size(), first,
                     g[first], w[first]));
  }
}

/// Exact equality (integers, bools, and bit-identical floats).
inline void check_equal(const Tensor& got, const Tensor& want, const std::string& what = "") {
  check_close(got, want, 0.0, 0.0, what);
}

/// Sizes that exercise block boundaries: tiny, one less and one more than a block, odd.
inline std::vector<std::vector<int64_t>> awkward_shapes() {
  return {{1}, {7}, {255}, {257}, {1025}, {3, 5}, {17, 33}, {2, 3, 129}, {4, 1, 6, 7}, {100003}};
}

}  // namespace wick::cuda_test
