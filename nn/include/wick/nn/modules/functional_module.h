#pragma once
// Functional (LibTorch's torch::nn::Functional: a function as a module) and ChannelShuffle
// (torch.nn.ChannelShuffle). nn/src/modules_functional.cpp.
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// Wraps a Tensor -> Tensor function as a module, so it can sit in a Sequential:
/// `Sequential(Linear(3, 4), Functional(wick::relu))`, or with extra arguments bound after the
/// input, as LibTorch: `Functional(F::leaky_relu, 0.2)` calls F::leaky_relu(input, 0.2). No
/// parameters or buffers; prints "Functional()". The function is copied into replicas and clones
/// (it must not capture a module's tensors: Note [Replicating Modules], docs/modules.md).
class FunctionalImpl : public Cloneable<FunctionalImpl> {
 public:
  using Function = std::function<Tensor(Tensor)>;
  /// ValueError for an empty function.
  explicit FunctionalImpl(Function function);
  /// function(input, args...), the arguments copied in now (LibTorch's std::bind constructor).
  template <typename SomeFunction, typename... Args, typename = std::enable_if_t<(sizeof...(Args) > 0)>>
  explicit FunctionalImpl(SomeFunction original_function, Args&&... args)
      : FunctionalImpl(Function([f = std::move(original_function), ... bound = std::forward<Args>(args)](Tensor input) {
          return Tensor(std::invoke(f, std::move(input), bound...));
        })) {}
  Tensor forward(const Tensor& input);

 private:
  Function function_;
};
WICK_MODULE(Functional);

/// ChannelShuffle's options: `ChannelShuffleOptions(2)` or just `2`.
struct ChannelShuffleOptions {
  /* implicit */ ChannelShuffleOptions(int64_t groups) : groups_(groups) {}  // NOLINT
  /// The number of groups the channels are divided into; must divide the channel count.
  WICK_ARG(int64_t, groups);
};

/// F::channel_shuffle(input, groups) of an [N, C, *] input. Prints "ChannelShuffle(groups=2)".
class ChannelShuffleImpl : public Cloneable<ChannelShuffleImpl> {
 public:
  /// ValueError for groups <= 0.
  explicit ChannelShuffleImpl(const ChannelShuffleOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const ChannelShuffleOptions& options() const { return options_; }

 private:
  ChannelShuffleOptions options_;
};
WICK_MODULE(ChannelShuffle);

}  // namespace wick::nn
