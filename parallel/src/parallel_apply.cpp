// parallel_apply (Note [parallel_apply threads]).
#include "wick/parallel/parallel_apply.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <string>

#include "wick/autograd/grad_mode.h"
#include "wick/autograd/saved_tensors_hooks.h"
#include "wick/core/backend.h"
#include "wick/core/device_threads.h"
#include "wick/core/error.h"
#include "wick/core/trace.h"

namespace wick::parallel {

namespace {

Device infer_device(const nn::Module& module, const std::vector<nn::Value>& args) {
  std::optional<Device> found;
  for (const nn::Value& v : args) {
    v.for_each_tensor([&](const Tensor& t) {
      if (!found && t.defined()) found = t.device();
    });
    if (found) return *found;
  }
  for (const auto& e : module.parameter_table())
    if (e.value.defined()) return e.value.device();
  for (const auto& e : module.buffer_table())
    if (e.value.defined()) return e.value.device();
  return kCPU;
}

}  // namespace

std::vector<nn::Value> parallel_apply(const std::vector<std::shared_ptr<nn::Module>>& modules,
                                      const std::vector<std::vector<nn::Value>>& inputs,
                                      const std::vector<Device>& devices) {
  WICK_CHECK(modules.size() == inputs.size(),
             "parallel_apply: The number of modules {} is not equal to the number of "
             "inputs {}",
             modules.size(), inputs.size());
  WICK_CHECK(devices.empty() || devices.size() == modules.size(),
             "parallel_apply: The number of devices {} is not equal to the number of modules {}", devices.size(),
             modules.size());
  const size_t n = modules.size();
  for (size_t i = 0; i < n; ++i) WICK_CHECK(modules[i] != nullptr, "parallel_apply: module {} is null", i);
  std::vector<Device> devs = devices;
  if (devs.empty())
    for (size_t i = 0; i < n; ++i) devs.push_back(infer_device(*modules[i], inputs[i]));

  std::vector<nn::Value> results(n);
  std::vector<std::exception_ptr> errors(n);
  const bool grad_enabled = GradMode::is_enabled();
  // Every replica saves through the caller's saved-tensor hooks (Note [Saved tensor hooks]).
  const std::shared_ptr<const autograd::SavedTensorHooks> saved_hooks = autograd::current_saved_tensors_hooks();
  // Each replica runs on the caller's current stream of its device (Note [parallel_apply threads]).
  std::vector<uintptr_t> streams(n);
  for (size_t i = 0; i < n; ++i) streams[i] = backend(devs[i].type).current_stream(devs[i]);
  auto work = [&](size_t i) {
    try {
      AutoGradMode mode(grad_enabled);
      autograd::SavedTensorsHooksScope hooks(saved_hooks);
      DeviceGuard guard(devs[i]);
      CurrentStreamScope stream(devs[i], streams[i]);
      auto trace_event = profiler::RecordScope::named(  // Note [Tracer]
          "parallel", [&] { return fmt::format("replica {} forward on {}", i, devs[i]); });
      profiler::FlowScope flow("replica forward -> backward");
      results[i] = modules[i]->forward_value(inputs[i]);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };

  // Replicas 1..n-1 go to their devices' persistent threads, replica 0 runs here. Once a task is
  // queued it refers to this frame, so nothing below may throw before pending.wait(): a device
  // whose thread cannot be started, or a push that fails, runs its replica here instead.
  WaitGroup pending;
  std::vector<size_t> here;
  here.reserve(std::max<size_t>(n, 1));  // push_back below never allocates
  here.push_back(0);
  for (size_t i = 1; i < n; ++i) {
    TaskQueue* q = device_threads::queue(devs[i]);
    if (q == nullptr || q == device_threads::current_worker_queue()) {
      here.push_back(i);  // no thread for the device, or our own device's queue: run this replica here
      continue;
    }
    pending.add();
    try {
      q->push({UINT64_MAX, [&, i] {
                 work(i);
                 pending.done();
               }});
    } catch (...) {
      pending.done();
      here.push_back(i);
    }
  }
  if (n > 0)
    for (size_t i : here) work(i);
  pending.wait();

  for (size_t i = 0; i < n; ++i) {
    if (!errors[i]) continue;
    std::string message;
    try {
      std::rethrow_exception(errors[i]);
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("in replica {} on device {}: ", i, devs[i]));
    } catch (const std::bad_alloc& e) {
      WICK_FAIL_T(OutOfMemoryError, "in replica {} on device {}: out of memory ({})", i, devs[i], e.what());
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
      message = "an exception that is not a std::exception";
    }
    WICK_FAIL("in replica {} on device {}: {}", i, devs[i], message);
  }
  return results;
}

std::vector<Tensor> parallel_apply(const std::vector<std::shared_ptr<nn::Module>>& modules,
                                   const std::vector<Tensor>& inputs, const std::vector<Device>& devices) {
  std::vector<std::vector<nn::Value>> args;
  args.reserve(inputs.size());
  for (const Tensor& t : inputs) args.push_back({nn::Value(t)});
  std::vector<nn::Value> out = parallel_apply(modules, args, devices);
  std::vector<Tensor> tensors;
  tensors.reserve(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    WICK_CHECK_TYPE(out[i].is_tensor(), "parallel_apply: replica {} returned {}, but a Tensor was expected", i,
                    out[i].describe());
    tensors.push_back(out[i].tensor());
  }
  return tensors;
}

}  // namespace wick::parallel
