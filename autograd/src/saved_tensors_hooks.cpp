// Saved-tensor hooks: the thread's innermost pair, and save_on_cpu (Note [Saved tensor hooks]).
#include "wick/autograd/saved_tensors_hooks.h"

#include "wick/core/error.h"

namespace wick::autograd {

namespace {
thread_local std::shared_ptr<const SavedTensorHooks> t_hooks;
// disable_saved_tensors_hooks' message while it is in effect on this thread.
thread_local std::optional<std::string> t_disabled;

[[noreturn]] void refuse(const std::string& message) {
  WICK_FAIL_T(::wick::StateError,
              "saved_tensors_hooks: {} (saved-tensor hooks are disabled here by disable_saved_tensors_hooks)", message);
}
}  // namespace

std::shared_ptr<const SavedTensorHooks> current_saved_tensors_hooks() { return t_hooks; }

SavedTensorsHooksScope::SavedTensorsHooksScope(std::shared_ptr<const SavedTensorHooks> hooks)
    : previous_(std::exchange(t_hooks, std::move(hooks))) {}

SavedTensorsHooksScope::~SavedTensorsHooksScope() { t_hooks = std::move(previous_); }

namespace graph {

std::shared_ptr<const SavedTensorHooks> saved_tensors_hooks::checked(SavedTensorHooks hooks) {
  if (t_disabled) refuse(*t_disabled);
  WICK_CHECK(static_cast<bool>(hooks.pack) && static_cast<bool>(hooks.unpack),
             "saved_tensors_hooks: the {} hook is empty; pass two callables", hooks.pack ? "unpack" : "pack");
  return std::make_shared<const SavedTensorHooks>(std::move(hooks));
}

saved_tensors_hooks::saved_tensors_hooks(SavedTensorHooks hooks) : scope_(checked(std::move(hooks))) {}

namespace {

// What save_on_cpu keeps: the tensor on a CPU device, and, for a tensor kept as it is, the
// version it had (a later in-place change must not go unnoticed, as without hooks).
struct OnCpu {
  Device device;
  Tensor host;
  bool copied = false;
  uint32_t version = 0;
};

}  // namespace

save_on_cpu::save_on_cpu()
    : saved_tensors_hooks(
          [](const Tensor& t) {
            if (t.device().is_cpu()) return OnCpu{t.device(), t, false, t.version()};
            return OnCpu{t.device(), t.to(kCPU), true, 0};
          },
          [](const OnCpu& p) {
            if (p.copied) return p.host.to(p.device);
            WICK_CHECK_STATE(p.host.version() == p.version,
                             "save_on_cpu: one of the tensors needed for gradient computation has been modified by "
                             "an in-place operation: a tensor of shape [{}] on {} is at version {}; expected version "
                             "{} instead. Use an out-of-place op, or clone() the tensor before modifying it.",
                             fmt::join(p.host.sizes(), ", "), p.device, p.host.version(), p.version);
            return p.host;
          }) {}

disable_saved_tensors_hooks::disable_saved_tensors_hooks(std::string error_message) {
  if (t_hooks) refuse(error_message);  // PyTorch's fail_if_non_empty: nothing is disabled
  previous_ = std::exchange(t_disabled, std::move(error_message));
}

disable_saved_tensors_hooks::~disable_saved_tensors_hooks() { t_disabled = std::move(previous_); }

}  // namespace graph
}  // namespace wick::autograd
