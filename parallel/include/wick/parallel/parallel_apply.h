#pragma once
// parallel_apply: run each replica on its device's worker thread.
//
// Note [parallel_apply threads]
// Replica 0 runs on the calling thread; every other replica is queued to the persistent worker
// thread of its device (Note [Device threads], wick/core/device_threads.h), the same threads
// that run the backward engine's nodes, so nothing is started per call. Replicas on one device
// run one after the other on that device's worker (a replica on the caller's own worker runs on
// the caller). Each task makes its replica's device current (DeviceGuard), makes the caller's
// current stream of that device current (CurrentStreamScope: on a GPU, work queued by the
// replica stays ordered with the caller's, as PyTorch's workers do), takes the caller's grad
// mode (thread-local) and denormal mode, then calls forward_value; the worker's own stream is
// restored afterwards. parallel_apply
// returns or throws only after every replica has finished, so nothing outlives the call; a
// caller that is itself a device worker keeps running its own queue while it waits (nested
// parallel_apply cannot deadlock). Failures are collected per replica; the first by replica
// index is rethrown, keeping its class, as "in replica i on device d: <message>". Modules must not share
// mutable state across replicas: replicate gives each replica its own shells and tensors
// (replica 0's detached buffers are the original's, and only replica 0 touches them).
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

/// The same for modules held as their own type (e.g. the result of replicate<LinearImpl>).
template <class T, class In>
requires(!std::is_same_v<T, nn::Module> &&
         std::is_base_of_v<nn::Module, T>) auto parallel_apply(const std::vector<std::shared_ptr<T>>& modules,
                                                               const std::vector<In>& inputs,
                                                               const std::vector<Device>& devices = {}) {
  return parallel_apply(std::vector<std::shared_ptr<nn::Module>>(modules.begin(), modules.end()), inputs, devices);
}

}  // namespace wick::parallel
