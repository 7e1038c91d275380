// DataParallel and data_parallel (Note [What DataParallel promises]).
#include "wick/parallel/data_parallel.h"

#include <unordered_set>

#include "wick/autograd/grad_mode.h"
#include "wick/core/backend.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/error.h"
#include "wick/parallel/parallel_apply.h"
#include "wick/parallel/replicate.h"
#include "wick/parallel/scatter_gather.h"

namespace wick::parallel {

using nn::Module;
using nn::Value;

namespace {

// The device of the first parameter or buffer of the tree that is not on `device`.
std::optional<Device> misplaced(const Module& root, Device device) {
  std::unordered_set<const Module*> seen;
  std::vector<const Module*> stack{&root};
  while (!stack.empty()) {
    const Module* m = stack.back();
    stack.pop_back();
    if (!seen.insert(m).second) continue;
    for (const auto& e : m->parameter_table())
      if (e.value.defined() && e.value.device() != device) return e.value.device();
    for (const auto& e : m->buffer_table())
      if (e.value.defined() && e.value.device() != device) return e.value.device();
    for (const auto& c : m->child_table())
      if (c.value) stack.push_back(c.value.get());
  }
  return std::nullopt;
}

void check_placement(const Module& module, Device first) {
  if (auto d = misplaced(module, first)) {
    WICK_FAIL(
        "module must have its parameters and buffers on device {} (device_ids[0]) but found one of them on "
        "device: {}",
        first, *d);
  }
}

// scatter -> replicate -> parallel_apply -> gather, for device_ids.size() >= 1.
Value run(const std::shared_ptr<Module>& module, const std::vector<Value>& args, const std::vector<Device>& device_ids,
          Device output_device, int64_t dim) {
  check_placement(*module, device_ids[0]);
  std::vector<std::vector<Value>> inputs = scatter_args(args, device_ids, dim);
  if (inputs.empty()) inputs.emplace_back();  // a forward without arguments runs once, on device_ids[0]
  if (device_ids.size() == 1) return module->forward_value(inputs[0]);
  std::vector<Device> used(device_ids.begin(), device_ids.begin() + static_cast<std::ptrdiff_t>(inputs.size()));
  auto replicas = replicate(module, used, /*detach=*/!GradMode::is_enabled());
  std::vector<Value> outputs = parallel_apply(replicas, inputs, used);
  return gather(outputs, output_device, dim);
}

}  // namespace

std::vector<Device> default_device_ids() {
  std::vector<Device> out;
  try {
    Backend& cuda = backend(DeviceType::CUDA);
    for (int i = 0; i < cuda.device_count(); ++i) out.emplace_back(DeviceType::CUDA, i);
  } catch (const DeviceUnavailable&) {
    // built without CUDA; a failing driver (BackendError) is not "no GPU" and propagates
  }
  return out;
}

DataParallel::DataParallel(std::shared_ptr<Module> module, std::vector<Device> device_ids,
                           std::optional<Device> output_device, int64_t dim)
    : device_ids_(device_ids.empty() ? default_device_ids() : std::move(device_ids)), dim_(dim) {
  WICK_CHECK(module != nullptr, "DataParallel: the module is null");
  output_device_ = output_device.value_or(device_ids_.empty() ? kCPU : device_ids_[0]);
  if (device_ids_.size() == 1) module->to(device_ids_[0]);
  if (device_ids_.size() > 1) share_cpu_cores(device_ids_);  // Note [CPU thread budgets]
  module_ = register_module("module", std::move(module));
}

Value DataParallel::forward_value(const std::vector<Value>& args) {
  nn::Module& wrapped = module();  // IndexError when the entry was set to None
  if (device_ids_.empty()) return wrapped.forward_value(args);
  return run(module_ptr(), args, device_ids_, output_device_, dim_);
}

Tensor DataParallel::forward(const Tensor& input) {
  Value out = forward_value({Value(input)});
  WICK_CHECK_TYPE(out.is_tensor(),
                  "DataParallel: the module returned {}, but forward(Tensor) expects a Tensor; use "
                  "forward_value for other results",
                  out.describe());
  return out.tensor();
}

std::string DataParallel::extra_repr() const {
  std::string ids;
  for (size_t i = 0; i < device_ids_.size(); ++i) ids += (i ? ", " : "") + device_ids_[i].str();
  return fmt::format("device_ids=[{}], output_device={}, dim={}", ids, output_device_, dim_);
}

Value data_parallel(const std::shared_ptr<Module>& module, const std::vector<Value>& inputs,
                    std::vector<Device> device_ids, std::optional<Device> output_device, int64_t dim) {
  WICK_CHECK(module != nullptr, "data_parallel: the module is null");
  if (device_ids.empty()) device_ids = default_device_ids();
  WICK_CHECK_T(DeviceUnavailable, !device_ids.empty(),
               "data_parallel: no devices to run on: pass device_ids (e.g. {{cpu:0, cpu:1}}), or "
               "build with CUDA on a machine with a GPU");
  return run(module, inputs, device_ids, output_device.value_or(device_ids[0]), dim);
}

Tensor data_parallel(const std::shared_ptr<Module>& module, const Tensor& input, std::vector<Device> device_ids,
                     std::optional<Device> output_device, int64_t dim) {
  Value out = data_parallel(module, std::vector<Value>{Value(input)}, std::move(device_ids), output_device, dim);
  WICK_CHECK_TYPE(out.is_tensor(), "data_parallel: the module returned {}, but a Tensor was expected", out.describe());
  return out.tensor();
}

}  // namespace wick::parallel
