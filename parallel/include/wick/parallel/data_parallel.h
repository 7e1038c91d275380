#pragma once
// DataParallel: a module that splits its inputs across devices, runs a replica of the wrapped
// module on each, and gathers the results (PyTorch's nn.DataParallel).
//
// Note [What DataParallel promises]
// forward = scatter the arguments along `dim` -> replicate the module onto as many devices as
// there are chunks (detached when grad mode is off) -> parallel_apply -> gather onto
// output_device. It promises that outputs and the gradients accumulated on the ORIGINAL
// module's parameters equal those of the plain module on the whole batch, for any module whose
// forward treats the samples of a batch independently. It does not promise:
//  - batch statistics across replicas: BatchNorm in training mode normalizes each replica's
//    chunk with that chunk's statistics (no SyncBatchNorm);
//  - buffer updates from replicas other than the first: replica 0 shares storage with the
//    original, so its in-place updates (running statistics) persist; the others' are discarded;
//  - leaf parameters inside forward: a replica's parameters are Broadcast outputs (not leaves);
//    gradients flow back to the original's leaves. Plain members assigned in forward are lost;
//  - on one device it is just the module: no replicate, no gather, the output stays where the
//    module put it (PyTorch's Python behaviour; output_device is ignored then).
#include <memory>
#include <optional>
#include <vector>

#include "wick/nn/cloneable.h"
#include "wick/nn/value.h"

namespace wick::parallel {

/// Every CUDA device when the CUDA backend is linked and a GPU is present; empty otherwise. A CUDA
/// driver that fails (rather than being absent) raises wick::BackendError.
std::vector<Device> default_device_ids();

class DataParallel : public nn::Cloneable<DataParallel> {
 public:
  /// device_ids default to default_device_ids(); with none (no GPU and no devices named),
  /// forward is a plain call of the module. output_device defaults to device_ids[0]. With a
  /// single device the module is moved there (as PyTorch). With several, the cores are shared
  /// out among its CPU devices (share_cpu_cores; Note [CPU thread budgets]).
  explicit DataParallel(std::shared_ptr<nn::Module> module, std::vector<Device> device_ids = {},
                        std::optional<Device> output_device = std::nullopt, int64_t dim = 0);

  /// The generic call: any arguments (Note [Scattering values] in scatter_gather.h).
  nn::Value forward_value(const std::vector<nn::Value>& args) override;
  /// One tensor in, one tensor out.
  Tensor forward(const Tensor& input);

  /// The wrapped module; throws IndexError when its entry was set to None.
  nn::Module& module() const { return child(module_); }
  std::shared_ptr<nn::Module> module_ptr() const { return child_ptr(module_); }
  const std::vector<Device>& device_ids() const { return device_ids_; }
  Device output_device() const { return output_device_; }
  int64_t dim() const { return dim_; }
  std::string extra_repr() const override;

 private:
  nn::ChildSlot<nn::Module> module_;
  std::vector<Device> device_ids_;
  Device output_device_;
  int64_t dim_;
};

/// The functional form: scatter `inputs` (the module's arguments) over device_ids, replicate,
/// parallel_apply, gather onto output_device (default device_ids[0]). device_ids default to
/// default_device_ids(); an error when there are none. Under no-grad the replicas are detached.
nn::Value data_parallel(const std::shared_ptr<nn::Module>& module, const std::vector<nn::Value>& inputs,
                        std::vector<Device> device_ids = {}, std::optional<Device> output_device = std::nullopt,
                        int64_t dim = 0);

/// One tensor argument, one tensor result.
Tensor data_parallel(const std::shared_ptr<nn::Module>& module, const Tensor& input,
                     std::vector<Device> device_ids = {}, std::optional<Device> output_device = std::nullopt,
                     int64_t dim = 0);

}  // namespace wick::parallel
