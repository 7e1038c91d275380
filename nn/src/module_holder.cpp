// ModuleHolder's out-of-line parts: the copy scope of Note [Holders follow their owner's table]
// and the empty-holder error.
#include "wick/nn/module_holder.h"

#include "wick/nn/cloneable.h"

namespace wick::nn::detail {

namespace {
// The module being copied on this thread and its copy (null until the copy constructor ran).
thread_local const Module* t_copy_from = nullptr;
thread_local Module* t_copy_to = nullptr;
}  // namespace

ModuleCopyScope::ModuleCopyScope(const Module* from, Module* to) : prev_from_(t_copy_from), prev_to_(t_copy_to) {
  t_copy_from = from;
  t_copy_to = to;
}

ModuleCopyScope::~ModuleCopyScope() {
  t_copy_from = prev_from_;
  t_copy_to = prev_to_;
}

void note_module_copied(const Module* from, Module* to) {
  if (t_copy_from == from && t_copy_to == nullptr) t_copy_to = to;
}

Module* copy_target_of(const Module* owner) { return owner != nullptr && owner == t_copy_from ? t_copy_to : nullptr; }

std::string holder_module_name(const std::type_info& impl) { return module_type_name(impl); }

void throw_empty_holder(const std::type_info& impl, const char* what) {
  const std::string name = module_type_name(impl);
  WICK_FAIL_T(StateError,
              "{} holder: {} on an empty holder (made from nullptr, or bound to a None child entry). Give it a "
              "module first, e.g. `{} m(...)` or `m = register_module(\"m\", {}(...))`",
              name, what, name, name);
}

}  // namespace wick::nn::detail
