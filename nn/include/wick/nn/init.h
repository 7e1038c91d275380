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

/// The identity matrix (torch.nn.init.eye_): 1 where row == column, 0 elsewhere, for a 2-d
/// tensor of any dtype (a non-square one too). ValueError for another number of dims.
Tensor eye_(Tensor t);

/// The Dirac delta of a conv weight [out, in, k...] with 3 to 5 dims (torch.nn.init.dirac_):
/// zeros, then, for each group g and d < min(out / groups, in), a 1 at
/// [g * (out / groups) + d, d, k0 / 2, k1 / 2, ...], so that a convolution with this weight (and
/// `groups`) passes its input channels through unchanged. Any dtype. ValueError for another
/// number of dims, groups < 1, or out channels not divisible by groups.
Tensor dirac_(Tensor t, int64_t groups = 1);

/// A (semi-)orthogonal matrix times gain (torch.nn.init.orthogonal_): dims 1.. are flattened, so
/// the tensor is a [rows = size(0), cols] matrix; its values are Q of the QR factorization of a
/// standard normal [rows, cols] draw (of its transpose when rows < cols, then transposed back),
/// each column of Q multiplied by the sign of R's diagonal entry so that the result is uniformly
/// (Haar) distributed. Rows are orthonormal when rows <= cols, columns when rows >= cols. The
/// draw comes from the global generator; the factorization runs on the host in float64 and the
/// result is copied to the tensor's dtype and device. A tensor with no elements is left as it
/// is. ValueError for fewer than 2 dims or a non-finite gain; TypeError for a non-float tensor.
Tensor orthogonal_(Tensor t, double gain = 1.0);

/// N(mean, std^2) conditioned on [a, b] (torch.nn.init.trunc_normal_): each value is the normal
/// quantile of a uniform draw between the CDF values of a and b, computed on the host in float64
/// (from whichever tail keeps the CDF accurate), then copied to the tensor's dtype and device;
/// every value lies in [a, b] (as rounded to the tensor's dtype). Intervals more than ~36 std
/// beyond the mean, where the CDF underflows, use the exponential approximation of that tail.
/// ValueError unless mean, std, a and b are finite, std > 0 and a < b (use normal_ for an
/// unbounded draw); TypeError for a non-float tensor.
Tensor trunc_normal_(Tensor t, double mean = 0.0, double std = 1.0, double a = -2.0, double b = 2.0);

}  // namespace wick::nn::init
