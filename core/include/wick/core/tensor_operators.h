#pragma once
// The arithmetic operators on Tensor and TensorList, included by tensor.h after the class (a file
// of their own to keep tensor.h under 400 lines). Defined in autograd/, as Tensor's op methods
// (Note [Two levels of ops] in tensor.h).
#include <vector>

#include "wick/core/tensor.h"

namespace wick {

// Arithmetic operators (defined in autograd/).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, Scalar b);
Tensor& operator*=(Tensor& a, Scalar b);

using TensorList = std::vector<Tensor>;

}  // namespace wick
