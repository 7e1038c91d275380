#pragma once
// parallel_apply: run each replica on its own worker thread.
//
// Note [parallel_apply threads]
// One OS thread per replica (as PyTorch's Python parallel_apply), except that replica 0 runs on
// the calling thread; with one replica nothing is started. Each worker makes its replica's
// device current (DeviceGuard) and takes the caller's grad mode (thread-local), then calls
// forward_value. All workers are joined before parallel_apply returns or throws, so no thread
// outlives the call and nothing deadlocks on an exception. Failures are collected per replica;
// the first by replica index is rethrown, keeping its class, as "in replica i on device d: <message>".
// Modules must not share mutable state across replicas: replicate gives each replica its own
// shells and tensors (replica 0's detached buffers are the original's, and only replica 0
// touches them).
#include <memory>
#include <type_traits>
#include <vector>

#include "wick/nn/module.h"
#include "wick/nn/value.h"

namespace wick::parallel {

/// Calls modules[i]->forward_value(inputs[i]) for every i concurrently and returns the results
/// in replica order. `devices` (one per module) sets each worker's current device; when empty,
/// each worker uses the device of the first tensor in its inputs, else of its module's first
/// parameter or buffer, else cpu:0.
std::vector<nn::Value> parallel_apply(const std::vector<std::shared_ptr<nn::Module>>& modules,
                                      const std::vector<std::vector<nn::Value>>& inputs,
                                      const std::vector<Device>& devices = {});

/// The one-tensor form: output i = modules[i] applied to inputs[i] (a tensor is passed whole,
/// never split into arguments); every module must return a tensor.
std::vector<Tensor> parallel_apply(const std::vector<std::shared_ptr<nn::Module>>& modules,
                                   const std::vector<Tensor>& inputs, const std::vector<Device>& devices = {});

/// The same for modules held as their own type (e.g. the result of replicate<Linear>).
template <class T, class In>
  requires(!std::is_same_v<T, nn::Module> && std::is_base_of_v<nn::Module, T>)
auto parallel_apply(const std::vector<std::shared_ptr<T>>& modules, const std::vector<In>& inputs,
                    const std::vector<Device>& devices = {}) {
  return parallel_apply(std::vector<std::shared_ptr<nn::Module>>(modules.begin(), modules.end()), inputs, devices);
}

}  // namespace wick::parallel
