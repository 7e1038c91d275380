#pragma once
// wick::nn::init: in-place initializers, as torch.nn.init. Each runs under NoGradGuard (so it
// works on parameters that require grad), draws from the global generator (wick::manual_seed)
// and returns its argument.
#include <cstdint>

#include "wick/core/tensor.h"

namespace wick::nn::init {

enum class Nonlinearity { Linear, Conv1d, Conv2d, Conv3d, Sigmoid, Tanh, ReLU, LeakyReLU, SELU };
enum class FanMode { FanIn, FanOut };

/// The recommended gain for a nonlinearity (torch.nn.init.calculate_gain): 1 for linear/conv/
/// sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + param^2)) for leaky_relu (param: the
/// negative slope, used as given, negative too, as PyTorch and LibTorch do), 3/4 for selu.
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);

/// {fan_in, fan_out} = {size(1), size(0)} times the receptive field (product of dims 2..);
/// throws for tensors with fewer than 2 dims.
struct Fans {
  int64_t fan_in, fan_out;
};
Fans calculate_fan_in_and_fan_out(const Tensor& t);

/// U(a, b).
Tensor uniform_(Tensor t, double a = 0.0, double b = 1.0);
/// N(mean, std^2).
Tensor normal_(Tensor t, double mean = 0.0, double std = 1.0);
Tensor constant_(Tensor t, double value);
Tensor zeros_(Tensor t);
Tensor ones_(Tensor t);
/// U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)); a ValueError naming the op when both
/// fans are 0 (PyTorch: ZeroDivisionError).
Tensor xavier_uniform_(Tensor t, double gain = 1.0);
/// N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)); a ValueError naming the op when
/// both fans are 0 (PyTorch: ZeroDivisionError).
Tensor xavier_normal_(Tensor t, double gain = 1.0);
/// U(-b, b) with b = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity, a).
Tensor kaiming_uniform_(Tensor t, double a = 0.0, FanMode mode = FanMode::FanIn,
                        Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);
/// N(0, std^2) with std = gain / sqrt(fan).
Tensor kaiming_normal_(Tensor t, double a = 0.0, FanMode mode = FanMode::FanIn,
                       Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);

}  // namespace wick::nn::init
