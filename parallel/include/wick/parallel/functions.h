#pragma once
// The differentiable communication functions: Broadcast, ReduceAddCoalesced, Scatter, Gather.
//
// Each is an autograd Node with a static `apply(...)` that runs the forward (through comm) and,
// when grad mode is on and an input requires grad, records itself. Their backward passes are
// each other (Broadcast <-> ReduceAddCoalesced, Scatter <-> Gather) and run through these same
// apply functions, so double backward works through all four.
//
// Note [Missing gradients in comm nodes]
// A node receives an undefined gradient for an output nobody used. These nodes materialize such
// gradients as zeros (PyTorch's materialize_grads), so once any output of a Broadcast is used,
// every differentiable input gets a (possibly zero) gradient. replicate puts all parameters in
// one Broadcast, so after a DataParallel backward every parameter that requires grad has a
// .grad, unused ones included (as PyTorch).
#include <cstddef>
#include <string>
#include <vector>

#include "wick/autograd/node.h"
#include "wick/parallel/comm.h"

namespace wick::parallel {

/// Broadcast of many tensors to many devices; backward: ReduceAddCoalesced onto the source.
class Broadcast final : public autograd::Node {
 public:
  /// Returns one output per input and device, device-major: result[d * inputs.size() + i] is
  /// inputs[i] on devices[d]. Every input must be on devices[0]. Outputs on devices[0] share the
  /// inputs' storage and version counter; the others are fresh copies with counters of their
  /// own (comm::broadcast_coalesced). An output is differentiable exactly when its input
  /// requires grad and grad mode is on; under no-grad no output is (and the inputs keep their
  /// requires_grad). A non-differentiable output on devices[0] is the input itself.
  static std::vector<Tensor> apply(const std::vector<Device>& devices, const std::vector<Tensor>& inputs,
                                   size_t buffer_size = comm::kDefaultBufferSize);

  Broadcast(std::vector<Device> devices, size_t num_inputs, Device source, std::vector<bool> needs_grad);
  autograd::variable_list apply(autograd::variable_list&& grads) override;
  std::string name() const override { return "Broadcast"; }

 private:
  std::vector<Device> devices_;
  size_t num_inputs_;
  Device source_;
  std::vector<bool> needs_grad_;
};

/// Sum of per-device gradient lists onto one device; backward: Broadcast back to the devices.
class ReduceAddCoalesced final : public autograd::Node {
 public:
  /// `grads` is device-major (grads[d * num_inputs + i]: tensor i of group d, every group on one
  /// device); returns num_inputs tensors on `destination`, output i = sum over d of
  /// grads[d * num_inputs + i] (comm::reduce_add_coalesced).
  static std::vector<Tensor> apply(Device destination, size_t num_inputs, const std::vector<Tensor>& grads,
                                   size_t buffer_size = comm::kDefaultBufferSize);

  ReduceAddCoalesced(std::vector<Device> devices, size_t num_inputs, Device destination);
  autograd::variable_list apply(autograd::variable_list&& grads) override;
  std::string name() const override { return "ReduceAddCoalesced"; }

 private:
  std::vector<Device> devices_;  ///< the device of each group
  size_t num_inputs_;
  Device destination_;
};

/// Splits a tensor along a dim onto devices; backward: Gather onto the input's device.
class Scatter final : public autograd::Node {
 public:
  /// comm::scatter, recorded: a chunk on the input's device is a view of it. May return fewer
  /// chunks than devices (comm::scatter).
  static std::vector<Tensor> apply(const std::vector<Device>& devices, const Tensor& input,
                                   const std::vector<int64_t>& chunk_sizes = {}, int64_t dim = 0);
  /// Scatter with `unsqueezed_scalars`: the chunks (of size 1 along dim 0) come back as 0-dim
  /// tensors; the backward of a Gather of scalars.
  static std::vector<Tensor> apply_scalars(const std::vector<Device>& devices, const Tensor& input);

  Scatter(Device input_device, int64_t dim, bool scalars);
  autograd::variable_list apply(autograd::variable_list&& grads) override;
  std::string name() const override { return "Scatter"; }

 private:
  Device input_device_;
  int64_t dim_;
  bool scalars_;
};

/// Concatenates tensors from many devices on one device; backward: Scatter back.
class Gather final : public autograd::Node {
 public:
  /// comm::gather, recorded. When every input is 0-dim and dim is 0, the inputs are treated as
  /// vectors of one element and the result is a vector (PyTorch warns and does the same).
  static Tensor apply(const std::vector<Tensor>& inputs, Device destination, int64_t dim = 0);

  Gather(std::vector<Device> devices, std::vector<int64_t> sizes, int64_t dim, bool scalars);
  autograd::variable_list apply(autograd::variable_list&& grads) override;
  std::string name() const override { return "Gather"; }

 private:
  std::vector<Device> devices_;
  std::vector<int64_t> sizes_;
  int64_t dim_;
  bool scalars_;
};

}  // namespace wick::parallel
