#pragma once
// Module: the base of every layer and model.
//
// Note [Modules are tables]
// A Module's tensors and submodules live *only* in three ordered tables: parameters, buffers
// and children (insertion order, names without dots, None entries allowed). Registration
// returns a typed slot (an index, slots.h); forward reads through it:
//
//   class Net : public wick::nn::Cloneable<Net> {
//    public:
//     Net() : fc1_(register_module("fc1", std::make_shared<LinearImpl>(784, 64))),
//             scale_(register_parameter("scale", wick::ones({1}))) {}
//     Tensor forward(const Tensor& x) { return child(fc1_).forward(x) * param(scale_); }
//    private:
//     ChildSlot<LinearImpl> fc1_;
//     ParamSlot scale_;
//   };
//
// Given a module holder (`Linear(784, 64)`, module_holder.h), register_module returns the holder
// bound to the table entry instead of a slot; it reads the entry on every use, as a slot does.
//
// Copying a module (Cloneable::shallow_copy) copies the tables (same tensors, same children)
// and the slots; rewiring the copy's table entries (set_parameter_entry, ...) then changes what
// the copy computes with and nothing else. That is what makes replicate a shallow copy plus a
// rewiring, as PyTorch's replicate.py, instead of LibTorch's deep clone (LibTorch keeps a
// second handle to each tensor in a member, which a rewired table would not update). See
// docs/modules.md.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "wick/core/error.h"
#include "wick/core/tensor.h"
#include "wick/nn/ordered_dict.h"
#include "wick/nn/slots.h"
#include "wick/nn/value.h"

namespace wick::nn {

using StateDict = OrderedDict<Tensor>;
class Module;

namespace detail {
/// What a module holder knows about its module's type, for a module class that does not derive
/// from Cloneable (`struct NetImpl : Module`): how to copy it, copy-assign it and call its
/// forward generically (Note [Holders give a module its type] in module_holder.h). `type` is
/// the class these apply to; a module of another dynamic type ignores them.
struct ModuleTypeOps {
  const std::type_info* type;
  std::shared_ptr<Module> (*shallow_copy)(const Module&);  // null: not copy-constructible
  bool (*assign_from)(Module&, const Module&);
  Value (*forward_value)(Module&, const std::vector<Value>&);
};

/// Marks, on this thread, that `from` is being copied (into `to`, or into the next module whose
/// copy constructor copies `from` when `to` is null); restores the previous mark on destruction.
/// Module holders bound to `from` that are copied meanwhile bind to the copy (Note [Holders
/// follow their owner's table] in module_holder.h).
class ModuleCopyScope {
 public:
  explicit ModuleCopyScope(const Module* from, Module* to = nullptr);
  ~ModuleCopyScope();
  ModuleCopyScope(const ModuleCopyScope&) = delete;
  ModuleCopyScope& operator=(const ModuleCopyScope&) = delete;

 private:
  const Module* prev_from_;
  Module* prev_to_;
};
/// The module `owner` is being copied into on this thread, or null.
Module* copy_target_of(const Module* owner);
/// Called by Module's copy constructor: records `to` as the copy of `from` when a scope waits.
void note_module_copied(const Module* from, Module* to);
}  // namespace detail

/// What load_state_dict(strict = false) skipped.
struct LoadStateDictResult {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  virtual ~Module() = default;

  // ---- identity and printing ----
  /// The type name used in printing and errors ("Linear"); Cloneable supplies it.
  virtual std::string name() const;
  /// The one-line description inside the parentheses ("in_features=4, out_features=2, bias=True").
  virtual std::string extra_repr() const { return {}; }
  /// The module tree, formatted as PyTorch's repr.
  std::string to_string() const;

  // ---- copying and replication ----
  /// A new module of the same dynamic type whose tables hold the same tensors and children
  /// (Cloneable implements it from the subclass's copy constructor; for a module made by its
  /// holder, the holder supplies it). Otherwise raises wick::TypeError.
  virtual std::shared_ptr<Module> shallow_copy() const;
  /// Makes this module what shallow_copy() of `other` would be (same tables, plain members,
  /// options and training flag), by the subclass's copy assignment; the replica mark is kept.
  /// `other` must have the same dynamic type. Returns false and changes nothing when the type
  /// has no copy assignment (Cloneable implements it). replicate uses it to reuse an earlier
  /// replica's modules invisibly (Note [Replicas are fresh copies]).
  virtual bool assign_from(const Module& other);
  /// assign_from without the tables: plain members, options and the training flag become
  /// `other`'s, this module's table entries stay as they are. For a caller that then sets every
  /// table entry itself (replicate reusing a replica's modules, whose tables have the original's
  /// structure already).
  bool assign_members_from(const Module& other);
  /// A deep copy of the whole tree (LibTorch's Cloneable::clone): every module copied once
  /// (shared children stay shared), every parameter and buffer copied once into fresh storage
  /// (tied tensors stay tied), on `device` when given. Plain members, options and training
  /// flags are copied; parameters are leaves with the original's requires_grad; gradients are
  /// not copied (as LibTorch). on_replicated() runs on every copy. The original is untouched.
  std::shared_ptr<Module> clone(std::optional<Device> device = std::nullopt) const;
  /// Called on every module of a replica (and of a clone) after its tables were rewired;
  /// override to refresh caches derived from parameters or buffers. Default: nothing.
  virtual void on_replicated() {}
  /// True for modules made by replicate; zero_grad on a replica raises an error.
  bool is_replica() const { return replica_; }
  void mark_replica(bool on = true) { replica_ = on; }

  // ---- the generic call ----
  /// Calls the module with any arguments (Note [Value] in value.h). Cloneable (or the module's
  /// holder) implements it for subclasses with one non-overloaded `forward`; override it for
  /// anything else. The default raises wick::Error.
  virtual Value forward_value(const std::vector<Value>& args);
  /// forward_value({x}) for modules that map one tensor to one tensor; throws when the module
  /// takes or returns anything else.
  Tensor forward_tensor(const Tensor& x);

  /// The type operations a holder gave this module (null when none; see ModuleTypeOps).
  const detail::ModuleTypeOps* type_ops() const { return type_ops_; }
  void set_type_ops(const detail::ModuleTypeOps* ops) { type_ops_ = ops; }

  // ---- registration (normally in the constructor) ----
  /// Adds a parameter (undefined tensor = None entry) and sets its requires_grad. Throws if the
  /// name is empty, contains '.', is already used in any table, or the tensor is not a leaf.
  ParamSlot register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  /// Adds a buffer (undefined = None); a non-persistent buffer is left out of state_dict().
  BufferSlot register_buffer(std::string name, Tensor tensor, bool persistent = true);
  /// Adds a child module (null = None). Registering the same child twice shares it.
  template <class T>
  ChildSlot<T> register_module(std::string name, std::shared_ptr<T> child) {
    static_assert(std::is_base_of_v<Module, T>, "register_module: T must derive from wick::nn::Module");
    return ChildSlot<T>{add_child(std::move(name), std::static_pointer_cast<Module>(std::move(child)))};
  }
  /// Adds a child given as a module holder (`Linear(3, 4)`; an empty holder = None) and returns
  /// a holder bound to the new table entry, as LibTorch's register_module returns the holder:
  /// `fc1(register_module("fc1", Linear(784, 64)))`. The bound holder reads the entry on every
  /// use, so it follows replication (Note [Holders follow their owner's table]).
  template <class H>
  requires std::is_base_of_v<ModuleHolderBase, H> H register_module(std::string name, H holder) {
    using Impl = typename H::ContainedType;
    const ChildSlot<Impl> slot = register_module(std::move(name), std::shared_ptr<Impl>(holder));
    return H(detail::HolderBinding{this, slot.index});
  }

  // ---- reading through slots ----
  /// The tensor in a parameter slot (undefined for None). Throws for a slot of another module.
  const Tensor& param(ParamSlot s) const {
    return parameters_[check_slot(s.index, parameters_.size(), "parameter")].value;
  }
  const Tensor& buffer(BufferSlot s) const { return buffers_[check_slot(s.index, buffers_.size(), "buffer")].value; }
  /// The typed child in a slot; throws wick::Error when the entry is None.
  template <class T>
  T& child(ChildSlot<T> s) const {
    Module* m = children_[check_slot(s.index, children_.size(), "child")].value.get();
    if (!m) throw_none_child(s.index);
    return static_cast<T&>(*m);
  }
  /// The typed child as a shared_ptr (null for None).
  template <class T>
  std::shared_ptr<T> child_ptr(ChildSlot<T> s) const {
    return std::static_pointer_cast<T>(children_[check_slot(s.index, children_.size(), "child")].value);
  }
  /// True when the entry is not None.
  bool has(ParamSlot s) const { return param(s).defined(); }
  bool has(BufferSlot s) const { return buffer(s).defined(); }
  template <class T>
  bool has(ChildSlot<T> s) const {
    return child_ptr(s) != nullptr;
  }

  // ---- the tables (what the parallel layer rewires) ----
  const std::vector<ParameterEntry>& parameter_table() const { return parameters_; }
  const std::vector<BufferEntry>& buffer_table() const { return buffers_; }
  const std::vector<ChildEntry>& child_table() const { return children_; }
  /// Replaces the tensor of entry i (None allowed). No leaf or requires_grad change: replicas
  /// hold non-leaf broadcast outputs. Bumps structure_version().
  void set_parameter_entry(size_t i, Tensor t);
  void set_buffer_entry(size_t i, Tensor t);
  /// Replaces child i (None allowed). A non-null replacement of a non-null child must have the
  /// same dynamic type (typed slots rely on it); throws otherwise.
  void set_child_entry(size_t i, std::shared_ptr<Module> m);
  /// Changes whenever this module's tables change (registration, set_*_entry; not to(), which
  /// keeps the tensors); values are never reused across the process.
  uint64_t structure_version() const { return structure_version_; }
  /// A fingerprint of the whole tree's structure: changes when any module reachable from this
  /// one changes its tables. O(number of modules).
  uint64_t structure_fingerprint() const;

  // ---- recursive views (pre-order, deduplicated by identity as PyTorch; None skipped) ----
  OrderedDict<Tensor> named_parameters(bool recurse = true) const;
  OrderedDict<Tensor> named_buffers(bool recurse = true) const;
  /// Direct children, deduplicated, None skipped.
  OrderedDict<std::shared_ptr<Module>> named_children() const;
  /// This module (named `prefix`, "" by default) and every descendant, each once.
  OrderedDict<std::shared_ptr<Module>> named_modules(const std::string& prefix = "", bool include_self = true) const;
  std::vector<Tensor> parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  /// Dotted lookups ("features.0.weight"); throw wick::Error naming the missing part.
  Tensor get_parameter(const std::string& dotted) const;
  Tensor get_buffer(const std::string& dotted) const;
  std::shared_ptr<Module> get_submodule(const std::string& dotted) const;

  // ---- whole-tree operations ----
  /// Sets training mode on this module and every descendant.
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  /// Moves every parameter, buffer and gradient to `device`, keeping their identity (Note
  /// [to() keeps identity]): the same Tensor objects get the new data, so optimizers and other
  /// holders stay valid; requires_grad kept; tied tensors stay tied. All copies are made before
  /// anything changes, so a failure leaves the module as it was. Optimizer state is not
  /// converted (as PyTorch); the optimizer raises StateError at its next step if it no longer
  /// fits. Throws StateError on a replica (its parameters are not leaves). Returns *this.
  Module& to(Device device);
  /// Casts every floating-point parameter, buffer and gradient to `dtype` the same way (integer
  /// buffers are left alone, as PyTorch).
  Module& to(DType dtype);
  Module& to(Device device, DType dtype);
  /// Clears gradients: sets them to None (default) or zeroes them. Throws on a replica.
  void zero_grad(bool set_to_none = true);
  /// Calls fn on every child (recursively, children first) and then on this module, as
  /// PyTorch's Module.apply.
  void apply(const std::function<void(Module&)>& fn);

  // ---- state ----
  /// Parameters and persistent buffers by dotted name (detached; sharing storage). Not
  /// deduplicated: a tied tensor appears under each of its names, as PyTorch.
  StateDict state_dict() const;
  /// Copies `dict` into the module's tensors. Everything is checked first: missing and
  /// unexpected keys (errors when strict), shape and dtype mismatches, undefined tensors, targets
  /// that cannot be written (an expanded buffer); all problems are reported in one wick::Error
  /// and the module is then left unchanged. A copy that still fails is undone: the values already
  /// copied are put back from a host copy kept during the load, and the error names the key.
  LoadStateDictResult load_state_dict(const StateDict& dict, bool strict = true);

 protected:
  Module();
  /// Copies the tables (same tensors, same children), slots stay valid; not a replica.
  Module(const Module& other);
  /// Copies the tables and the training flag (for subclasses' copy assignment, assign_from);
  /// the replica mark stays. Inside assign_members_from, only the flag. Protected: assigning
  /// through a Module& would slice.
  Module& operator=(const Module& other);

 private:
  friend std::ostream& operator<<(std::ostream& os, const Module& m);
  int32_t add_child(std::string name, std::shared_ptr<Module> child);
  void check_new_name(const std::string& name, const char* what) const;
  size_t check_slot(int32_t index, size_t size, const char* what) const {
    if (index < 0 || static_cast<size_t>(index) >= size) [[unlikely]]
      throw_bad_slot(index, size, what);
    return static_cast<size_t>(index);
  }
  [[noreturn]] void throw_bad_slot(int32_t index, size_t size, const char* what) const;
  [[noreturn]] void throw_none_child(int32_t index) const;
  void bump_structure();
  std::shared_ptr<Module> self_ptr() const;
  void convert(const std::function<Tensor(const Tensor&)>& fn);

  std::vector<ParameterEntry> parameters_;
  std::vector<BufferEntry> buffers_;
  std::vector<ChildEntry> children_;
  bool training_ = true;
  bool replica_ = false;
  uint64_t structure_version_ = 0;
  const detail::ModuleTypeOps* type_ops_ = nullptr;
};

/// Prints m.to_string().
std::ostream& operator<<(std::ostream& os, const Module& m);

}  // namespace wick::nn
