#pragma once
// Parameter-free layers: ReLU, GELU, Tanh, Sigmoid, Softmax, Flatten.
#include <string>

#include "wick/nn/cloneable.h"

namespace wick::nn {

class ReLU : public Cloneable<ReLU> {
 public:
  ReLU() = default;
  Tensor forward(const Tensor& input);
};

/// approximate: "none" (exact, erf) or "tanh".
class GELU : public Cloneable<GELU> {
 public:
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;

 private:
  std::string approximate_;
};

class Tanh : public Cloneable<Tanh> {
 public:
  Tanh() = default;
  Tensor forward(const Tensor& input);
};

class Sigmoid : public Cloneable<Sigmoid> {
 public:
  Sigmoid() = default;
  Tensor forward(const Tensor& input);
};

/// softmax along `dim`.
class Softmax : public Cloneable<Softmax> {
 public:
  explicit Softmax(int64_t dim);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;

 private:
  int64_t dim_;
};

/// input.flatten(start_dim, end_dim); defaults keep the batch dim.
class Flatten : public Cloneable<Flatten> {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;

 private:
  int64_t start_dim_, end_dim_;
};

}  // namespace wick::nn
