#pragma once
// TensorOptions: dtype, device and requires_grad for factories, as LibTorch's
// (`wick::zeros({2, 3}, wick::kFloat64)`, `wick::ones({4}, TensorOptions().device("cpu:1"))`).
#include "wick/core/device.h"
#include "wick/core/dtype.h"

namespace wick {

struct TensorOptions {
  DType dtype_ = DType::Float32;
  Device device_ = kCPU;
  bool requires_grad_ = false;

  TensorOptions() = default;
  TensorOptions(DType d) : dtype_(d) {}         // NOLINT
  TensorOptions(Device d) : device_(d) {}       // NOLINT
  TensorOptions(const char* d) : device_(d) {}  // NOLINT
  TensorOptions dtype(DType d) const {
    auto o = *this;
    o.dtype_ = d;
    return o;
  }
  TensorOptions device(Device d) const {
    auto o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions requires_grad(bool r = true) const {
    auto o = *this;
    o.requires_grad_ = r;
    return o;
  }
};

}  // namespace wick
