#pragma once
// ModuleHolder<Impl> and WICK_MODULE(Name): LibTorch's module holders (TORCH_MODULE).
//
// `WICK_MODULE(Linear)` turns the module class `LinearImpl` into `Linear`, a handle with shared
// ownership: `Linear fc(3, 4)` constructs a LinearImpl, `fc(x)` calls its forward, `fc->weight()`
// reaches its members, `Linear fc2 = fc` shares it, `Linear fc{nullptr}` is empty.
//
// Note [Holders follow their owner's table]
// A holder returned by register_module is *bound*: it remembers the registering module and the
// child's index in its child table, and every access reads that table entry, so it behaves as a
// ChildSlot (Note [Modules are tables] in module.h). When the owner is copied by shallow_copy
// (replicate, clone) or copy-assigned by assign_from, the holder members copied with it are
// rebound to the copy: Cloneable marks the copy in progress on this thread (ModuleCopyScope), and
// a holder copied from a holder bound to the module being copied binds itself to the new module,
// same index. So `fc1(x)` in a replica runs the replica's rewired child, as `child(fc1_)` does.
// Any other copy of a bound holder (`Linear fc = net->fc1;`) is a plain holder of the child the
// table holds at that moment. Moving keeps the binding, so `fc1 = register_module(...)` in a
// constructor body binds the member as the initializer form does. LibTorch needs no binding
// because its clone() re-runs the constructor (reset()) and then copies tensors; wick's
// replicate is a shallow copy plus a rewiring, which members holding pointers would not follow.
#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "wick/nn/cloneable.h"
#include "wick/nn/module.h"

namespace wick::nn {

namespace detail {

/// The module name of a holder's Impl type ("LinearImpl" -> "Linear").
std::string holder_module_name(const std::type_info& impl);
[[noreturn]] void throw_empty_holder(const std::type_info& impl, const char* what);

template <class Impl>
std::shared_ptr<Module> holder_shallow_copy(const Module& m) {
  ModuleCopyScope scope(&m);  // Note [Holders follow their owner's table]
  return std::make_shared<Impl>(static_cast<const Impl&>(m));
}
template <class Impl>
constexpr auto holder_shallow_copy_fn() -> std::shared_ptr<Module> (*)(const Module&) {
  if constexpr (std::is_copy_constructible_v<Impl>) {
    return &holder_shallow_copy<Impl>;
  } else {
    return nullptr;
  }
}
template <class Impl>
bool holder_assign_from(Module& self, const Module& other) {
  if constexpr (std::is_copy_assignable_v<Impl>) {
    if (typeid(other) != typeid(self)) return false;
    ModuleCopyScope scope(&other, &self);
    static_cast<Impl&>(self) = static_cast<const Impl&>(other);
    return true;
  } else {
    return false;
  }
}
template <class Impl>
Value holder_forward_value(Module& self, const std::vector<Value>& args) {
  return call_forward(static_cast<Impl&>(self), args);
}

/// The type operations of Impl, one table per type.
template <class Impl>
const ModuleTypeOps* module_type_ops() {
  static const ModuleTypeOps ops{&typeid(Impl), holder_shallow_copy_fn<Impl>(), &holder_assign_from<Impl>,
                                 &holder_forward_value<Impl>};
  return &ops;
}

}  // namespace detail

template <class T>
concept ModuleHolderType = std::is_base_of_v<ModuleHolderBase, std::remove_cvref_t<T>>;

template <class Impl>
class ModuleHolder : public ModuleHolderBase {
 public:
  using ContainedType = Impl;

  /// Constructs Impl() (as LibTorch; a module without a default constructor needs arguments or
  /// `nullptr`).
  ModuleHolder() requires std::is_default_constructible_v<Impl> : impl_(std::make_shared<Impl>()) { adopt(impl_); }
  /// The empty holder; using it raises wick::StateError naming the module type.
  ModuleHolder(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
  /// Shares an existing module (null gives the empty holder).
  ModuleHolder(std::shared_ptr<Impl> module) : impl_(std::move(module)) { adopt(impl_); }  // NOLINT
  /// Constructs Impl from the arguments: `Linear(3, 4)`, `Linear(LinearOptions(3, 4).bias(false))`.
  template <class Head, class... Tail>
  requires(!(sizeof...(Tail) == 0 &&
             std::is_base_of_v<ModuleHolder, std::remove_cvref_t<Head>>)&&!std::is_same_v<std::remove_cvref_t<Head>,
                                                                                          detail::HolderBinding> &&
           std::is_constructible_v<Impl, Head, Tail...>) explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Impl>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {
    adopt(impl_);
  }
  /// A holder bound to a child table entry (what register_module returns).
  explicit ModuleHolder(detail::HolderBinding binding) : binding_(binding) {}

  /// Copies share the module; see Note [Holders follow their owner's table] for bound holders.
  ModuleHolder(const ModuleHolder& other) { copy_from(other); }
  ModuleHolder& operator=(const ModuleHolder& other) {
    if (this != &other) copy_from(other);
    return *this;
  }
  ModuleHolder(ModuleHolder&&) noexcept = default;
  ModuleHolder& operator=(ModuleHolder&&) noexcept = default;

  /// The module; throw wick::StateError when the holder is empty.
  Impl* operator->() const { return get(); }
  Impl& operator*() const { return *get(); }
  Impl* get() const {
    Impl* p = raw();
    if (!p) [[unlikely]]
      detail::throw_empty_holder(typeid(Impl), "access");
    return p;
  }
  std::shared_ptr<Impl> ptr() const {
    std::shared_ptr<Impl> p = shared();
    if (!p) [[unlikely]]
      detail::throw_empty_holder(typeid(Impl), "ptr()");
    return p;
  }
  /// True when the holder holds no module (made from nullptr, or bound to a None entry).
  bool is_empty() const noexcept { return raw() == nullptr; }
  explicit operator bool() const noexcept { return !is_empty(); }
  /// The module as a shared_ptr of a base (`std::shared_ptr<Module>`); null when empty, which
  /// register_module and the containers take as a None entry.
  template <class U>
  requires std::is_base_of_v<U, Impl>
  operator std::shared_ptr<U>() const {  // NOLINT(google-explicit-constructor)
    return shared();
  }

  /// Calls the module (its forward): `fc(x)`.
  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    return get()->forward(std::forward<Args>(args)...);
  }
  /// Indexes the module (`seq[0]` on a Sequential).
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) const {
    return (*get())[std::forward<Arg>(arg)];
  }

 private:
  // Note [Holders give a module its type]: a module class deriving from Module directly (as
  // LibTorch's `struct NetImpl : torch::nn::Module`) has no Cloneable to copy it; its holder
  // knows the type and lends it the copy, assignment and generic call, so it replicates too.
  static void adopt(const std::shared_ptr<Impl>& p) {
    if constexpr (!std::is_base_of_v<Cloneable<Impl>, Impl>) {
      if (p && !p->type_ops() && typeid(*p) == typeid(Impl)) p->set_type_ops(detail::module_type_ops<Impl>());
    }
  }
  Impl* raw() const noexcept {
    if (binding_.owner) return static_cast<Impl*>(binding_.owner->child_table()[binding_.index].value.get());
    return impl_.get();
  }
  std::shared_ptr<Impl> shared() const {
    if (binding_.owner) return std::static_pointer_cast<Impl>(binding_.owner->child_table()[binding_.index].value);
    return impl_;
  }
  void copy_from(const ModuleHolder& other) {
    if (other.binding_.owner) {
      if (Module* to = detail::copy_target_of(other.binding_.owner)) {
        impl_.reset();
        binding_ = {to, other.binding_.index};
        return;
      }
      impl_ = other.shared();
      binding_ = {};
      return;
    }
    impl_ = other.impl_;
    binding_ = {};
  }

  std::shared_ptr<Impl> impl_;
  detail::HolderBinding binding_;
};

/// Prints the module (empty: "(empty Linear)").
template <class Impl>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& h) {
  if (h.is_empty()) return os << "(empty " << detail::holder_module_name(typeid(Impl)) << ")";
  return os << *h;
}

}  // namespace wick::nn

/// Defines `Name`, the holder of `NameImpl` (LibTorch's TORCH_MODULE).
#define WICK_MODULE(Name) WICK_MODULE_IMPL(Name, Name##Impl)

/// Defines `Name`, the holder of `ImplType`.
#define WICK_MODULE_IMPL(Name, ImplType)                    \
  class Name : public ::wick::nn::ModuleHolder<ImplType> {  \
   public:                                                  \
    using ::wick::nn::ModuleHolder<ImplType>::ModuleHolder; \
  }
