#pragma once
// Saved-tensor hooks (PyTorch 1.13's torch.autograd.graph.saved_tensors_hooks and save_on_cpu):
// a pair of functions that decide how a tensor an op saves for backward is stored.
//
//   {
//     wick::autograd::graph::saved_tensors_hooks hooks(
//         [](const Tensor& t) { return t.to(kFloat32); },           // pack: at save time
//         [](const Tensor& packed) { return packed.to(kFloat64); });  // unpack: in backward
//     loss = model->forward(x).sum();   // every tensor saved here goes through pack
//   }
//   loss.backward();                    // ... and through unpack here
//
// Note [Saved tensor hooks]
// While a hooks object lives, every tensor that an op on this thread saves for backward
// (SavedTensor, wick/autograd/saved_tensor.h: FunctionNode's saves, a custom function's
// save_for_backward, a checkpoint's inputs) is handed to `pack` and only what pack returns is
// kept; backward hands that to `unpack` and uses the tensor it returns. Hooks nest: the innermost
// pair applies. As PyTorch's:
// - pack runs at save time with grad mode off, on a tensor with no autograd history that shares
//   the saved tensor's memory; a pack that modifies it in place is a StateError;
// - what unpack returns gets the saved tensor's autograd identity back (its grad_fn, or the
//   leaf's gradient accumulator), so double backward still reaches the original graph;
// - a tensor saved with hooks is not checked for in-place changes at unpack: wick cannot see
//   through the hooks whether pack copied it (save_on_cpu below checks its own case);
// - the hooks are thread-local, and a backward carries the hooks in effect where it was called to
//   the worker threads that run its nodes (PyTorch's engine carries its thread-local state so);
//   unpack may thus run on several threads at once and must be safe to.
// Beyond PyTorch, parallel_apply (DataParallel's forward) carries them to the device threads too,
// so that every replica's saves go through them, not only replica 0's (which runs on the caller):
// PyTorch's Python worker threads start without them.
// Beyond PyTorch, unpack's tensor must have the saved tensor's shape, dtype and device (a
// ValueError naming the node otherwise): a backward formula handed another shape would read
// out of bounds. Mirrored in docs/autograd.md ("Saved tensor hooks").
#include <any>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "wick/core/tensor.h"

namespace wick::autograd {

/// A type-erased pack/unpack pair (what saved_tensors_hooks installs).
struct SavedTensorHooks {
  std::function<std::any(const Tensor&)> pack;
  std::function<Tensor(const std::any&)> unpack;
};

/// The innermost saved-tensor hooks in effect on this thread, or null.
std::shared_ptr<const SavedTensorHooks> current_saved_tensors_hooks();

/// RAII: makes `hooks` (null for none) this thread's saved-tensor hooks for its lifetime, and
/// puts the previous ones back after: how the engine and parallel_apply carry a caller's hooks to
/// the threads that work for it.
class SavedTensorsHooksScope {
 public:
  explicit SavedTensorsHooksScope(std::shared_ptr<const SavedTensorHooks> hooks);
  ~SavedTensorsHooksScope();
  SavedTensorsHooksScope(const SavedTensorsHooksScope&) = delete;
  SavedTensorsHooksScope& operator=(const SavedTensorsHooksScope&) = delete;

 private:
  std::shared_ptr<const SavedTensorHooks> previous_;
};

namespace graph {

/// RAII: installs a pack/unpack pair on this thread for its lifetime (torch.autograd.graph.
/// saved_tensors_hooks). `pack(const Tensor&)` may return any copyable value P;
/// `unpack(const P&)` must return the tensor backward uses in its place (Note [Saved tensor
/// hooks]). Objects must be destroyed in the reverse order of their construction (as scopes are).
class saved_tensors_hooks {
 public:
  template <class Pack, class Unpack>
  saved_tensors_hooks(Pack pack, Unpack unpack) : saved_tensors_hooks(erase(std::move(pack), std::move(unpack))) {}
  /// Installs an already type-erased pair; ValueError when either function is empty.
  explicit saved_tensors_hooks(SavedTensorHooks hooks);

 private:
  template <class Pack, class Unpack>
  static SavedTensorHooks erase(Pack pack, Unpack unpack) {
    using Packed = std::decay_t<std::invoke_result_t<Pack&, const Tensor&>>;
    static_assert(std::is_copy_constructible_v<Packed>, "saved_tensors_hooks: pack must return a copyable value");
    static_assert(std::is_invocable_r_v<Tensor, Unpack&, const Packed&>,
                  "saved_tensors_hooks: unpack must take what pack returns and return a Tensor");
    SavedTensorHooks h;
    h.pack = [pack = std::move(pack)](const Tensor& t) mutable -> std::any { return std::any(pack(t)); };
    h.unpack = [unpack = std::move(unpack)](const std::any& p) mutable -> Tensor {
      return unpack(std::any_cast<const Packed&>(p));
    };
    return h;
  }
  static std::shared_ptr<const SavedTensorHooks> checked(SavedTensorHooks hooks);
  SavedTensorsHooksScope scope_;
};

/// RAII: saved tensors on a non-CPU device are copied to cpu:0 at save time and back to their
/// device when backward needs them (torch.autograd.graph.save_on_cpu), freeing device memory
/// between forward and backward. Tensors on CPU devices are kept as they are, and unpacking one
/// that was modified in place since is a StateError, as without hooks. No pin_memory: wick's host
/// tensors have no pinned variant, and the copy back waits for the device.
class save_on_cpu : public saved_tensors_hooks {
 public:
  save_on_cpu();
};

/// RAII: for its lifetime, installing saved-tensor hooks on this thread (saved_tensors_hooks,
/// save_on_cpu, a non-reentrant checkpoint) is a StateError carrying `error_message`
/// (torch.autograd.graph.disable_saved_tensors_hooks), for code that does not work with them.
/// Made while hooks are in effect on this thread, it raises that StateError at once and disables
/// nothing. Nests: the innermost message applies, and the previous state comes back after. Like
/// the hooks, the state is this thread's: a backward's worker threads and parallel_apply's device
/// threads do not inherit it (PyTorch carries it with its thread-local state).
class disable_saved_tensors_hooks {
 public:
  explicit disable_saved_tensors_hooks(std::string error_message);
  ~disable_saved_tensors_hooks();
  disable_saved_tensors_hooks(const disable_saved_tensors_hooks&) = delete;
  disable_saved_tensors_hooks& operator=(const disable_saved_tensors_hooks&) = delete;

 private:
  std::optional<std::string> previous_;
};

}  // namespace graph
}  // namespace wick::autograd
