#pragma once
// Typed slots and table entries: the vocabulary of a Module's state (Note [Modules are tables]
// in module.h).
//
// A slot is an index into one of the three tables of the module that registered it. Slots are
// plain values: copying a module copies its slots, and they stay valid in the copy, whose
// tables the parallel layer rewires entry by entry. Never store a Tensor or a Module pointer
// next to a slot; read through the slot on every use.
#include <cstdint>
#include <memory>
#include <string>

#include "wick/core/tensor.h"

namespace wick::nn {

class Module;

/// Index of a parameter in its module's parameter table.
struct ParamSlot {
  int32_t index = -1;
  bool valid() const { return index >= 0; }
};

/// Index of a buffer in its module's buffer table.
struct BufferSlot {
  int32_t index = -1;
  bool valid() const { return index >= 0; }
};

/// Index of a child in its module's child table; T is the child's static type, so
/// `child(slot)` returns a T& without a cast at the call site.
template <class T = Module>
struct ChildSlot {
  int32_t index = -1;
  bool valid() const { return index >= 0; }
};

/// Tag base of every ModuleHolder (module_holder.h), for overloads that accept any holder.
struct ModuleHolderBase {};

namespace detail {
/// Where a bound module holder reads its module: child `index` of `owner` (Note [Holders follow
/// their owner's table] in module_holder.h).
struct HolderBinding {
  const Module* owner = nullptr;
  int32_t index = -1;
};
}  // namespace detail

/// One row of the parameter table. An undefined `value` is a None entry.
struct ParameterEntry {
  std::string name;
  Tensor value;
};

/// One row of the buffer table. Non-persistent buffers are left out of state_dict().
struct BufferEntry {
  std::string name;
  Tensor value;
  bool persistent = true;
};

/// One row of the child table. A null `value` is a None entry.
struct ChildEntry {
  std::string name;
  std::shared_ptr<Module> value;
};

}  // namespace wick::nn
