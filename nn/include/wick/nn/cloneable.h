#pragma once
// Cloneable<Derived>: the CRTP base every module derives from.
//
// It supplies, from the subclass's own code and nothing else:
//  - shallow_copy(): a copy made by Derived's copy constructor. Module's copy constructor copies
//    the three tables (same tensors, same children) and the subclass's slots and plain options
//    are copied member-wise, so user modules write no clone code. A member that is not
//    copyable (std::unique_ptr, std::mutex, ...) fails to compile with a static_assert.
//  - name(): the class name without namespaces (and without a trailing "Impl", LibTorch's
//    convention for the class behind a WICK_MODULE holder), for printing and errors.
//  - operator(): calls forward, so `m(x)` is `m.forward(x)`, as in LibTorch.
//  - forward_value(): the generic call (Note [Value] in value.h), adapted from a single,
//    non-overloaded `forward`. Supported parameter types: Tensor, Value, bool, int, int64_t,
//    float, double, std::string, std::vector<Tensor>, std::vector<Value>, std::optional<Tensor>,
//    std::optional<std::tuple<Tensor, Tensor>> (None or a pair);
//    return types: those, std::tuple/std::pair of them, and void. Any other forward (overloaded,
//    templated, other types) compiles too, and then forward_value raises an error unless the
//    subclass overrides it.
//
// Derive *directly*: `class Net : public Cloneable<Net>`. A class deriving from another module
// (`class MyLinear : public Linear`) would be copied as a Linear; shallow_copy detects this
// and raises an error telling you to derive from Cloneable<MyLinear> instead.
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "wick/nn/module.h"

namespace wick::nn {

namespace detail {

/// "wick::nn::Linear" -> "Linear" (template arguments kept).
std::string short_type_name(const std::type_info& info);
/// short_type_name without a trailing "Impl" ("LinearImpl" -> "Linear"): a module's name.
std::string module_type_name(const std::type_info& info);

template <class T>
inline constexpr bool dependent_false = false;

// ---- Value -> argument ----
template <class T>
struct ValueArg {
  static constexpr bool ok = false;
};
#define WICK_NN_VALUE_ARG(T, expr)                \
  template <>                                     \
  struct ValueArg<T> {                            \
    static constexpr bool ok = true;              \
    static T get(const Value& v) { return expr; } \
  }
WICK_NN_VALUE_ARG(Tensor, v.is_none() ? Tensor() : v.tensor());
WICK_NN_VALUE_ARG(Value, v);
WICK_NN_VALUE_ARG(bool, v.to_bool());
WICK_NN_VALUE_ARG(int, static_cast<int>(v.to_int()));
WICK_NN_VALUE_ARG(int64_t, v.to_int());
WICK_NN_VALUE_ARG(float, static_cast<float>(v.to_double()));
WICK_NN_VALUE_ARG(double, v.to_double());
WICK_NN_VALUE_ARG(std::string, v.str());
WICK_NN_VALUE_ARG(std::vector<Tensor>, v.tensors());
WICK_NN_VALUE_ARG(std::vector<Value>, v.items());
WICK_NN_VALUE_ARG(std::optional<Tensor>, v.is_none() ? std::optional<Tensor>() : std::optional<Tensor>(v.tensor()));
#undef WICK_NN_VALUE_ARG
// LSTM's optional (h_0, c_0): None, or a tuple or list of two tensors.
template <>
struct ValueArg<std::optional<std::tuple<Tensor, Tensor>>> {
  static constexpr bool ok = true;
  static std::optional<std::tuple<Tensor, Tensor>> get(const Value& v) {
    if (v.is_none()) return std::nullopt;
    const std::vector<Tensor> t = v.tensors();
    WICK_CHECK(t.size() == 2, "expected None or a pair of tensors (h_0, c_0), got {} tensors", t.size());
    return std::tuple<Tensor, Tensor>{t[0], t[1]};
  }
};

// ---- result -> Value ----
template <class T>
struct ToValue {
  static constexpr bool ok = std::is_constructible_v<Value, T> && !std::is_pointer_v<T>;
  static Value make(T&& x) { return Value(std::forward<T>(x)); }
};
template <>
struct ToValue<std::vector<Value>> {
  static constexpr bool ok = true;
  static Value make(std::vector<Value>&& x) { return Value::list(std::move(x)); }
};
template <class T>
struct ToValue<std::optional<T>> {
  static constexpr bool ok = ToValue<T>::ok;
  static Value make(std::optional<T>&& x) { return x ? ToValue<T>::make(std::move(*x)) : Value(); }
};
template <class... Ts>
struct ToValue<std::tuple<Ts...>> {
  static constexpr bool ok = (ToValue<Ts>::ok && ...);
  static Value make(std::tuple<Ts...>&& x) {
    return std::apply(
        [](auto&&... e) { return Value::tuple({ToValue<std::decay_t<decltype(e)>>::make(std::move(e))...}); },
        std::move(x));
  }
};
template <class A, class B>
struct ToValue<std::pair<A, B>> {
  static constexpr bool ok = ToValue<A>::ok && ToValue<B>::ok;
  static Value make(std::pair<A, B>&& x) {
    return Value::tuple({ToValue<A>::make(std::move(x.first)), ToValue<B>::make(std::move(x.second))});
  }
};

// ---- the signature of &D::forward ----
template <class F>
struct ForwardTraits {
  static constexpr bool ok = false;
};
#define WICK_NN_FORWARD_TRAITS(QUAL)                                                                   \
  template <class C, class R, class... A>                                                              \
  struct ForwardTraits<R (C::*)(A...) QUAL> {                                                          \
    static constexpr bool ok =                                                                         \
        (ValueArg<std::decay_t<A>>::ok && ...) && (std::is_void_v<R> || ToValue<std::decay_t<R>>::ok); \
    static constexpr size_t arity = sizeof...(A);                                                      \
    using Args = std::tuple<std::decay_t<A>...>;                                                       \
    using Result = R;                                                                                  \
  }
WICK_NN_FORWARD_TRAITS();
WICK_NN_FORWARD_TRAITS(const);
WICK_NN_FORWARD_TRAITS(noexcept);
WICK_NN_FORWARD_TRAITS(const noexcept);
#undef WICK_NN_FORWARD_TRAITS

template <class D>
concept HasAdaptableForward = requires {
  &D::forward;
}
&&ForwardTraits<decltype(&D::forward)>::ok;

[[noreturn]] void throw_forward_arity(const std::string& module, size_t expected, const std::vector<Value>& args);
[[noreturn]] void throw_forward_arg(const std::string& module, size_t index, const std::exception& e);
[[noreturn]] void throw_no_forward(const std::string& module);

template <class T>
T convert_arg(const std::string& module, const std::vector<Value>& args, size_t i) {
  try {
    return ValueArg<T>::get(args[i]);
  } catch (const std::exception& e) {
    throw_forward_arg(module, i, e);
  }
}

template <class D>
Value call_forward(D& self, const std::vector<Value>& args) {
  if constexpr (HasAdaptableForward<D>) {
    using Tr = ForwardTraits<decltype(&D::forward)>;
    if (args.size() != Tr::arity) throw_forward_arity(self.name(), Tr::arity, args);
    return [&]<size_t... I>(std::index_sequence<I...>)->Value {
      if constexpr (std::is_void_v<typename Tr::Result>) {
        self.forward(convert_arg<std::tuple_element_t<I, typename Tr::Args>>(self.name(), args, I)...);
        return Value();
      } else {
        using R = std::decay_t<typename Tr::Result>;
        return ToValue<R>::make(
            R(self.forward(convert_arg<std::tuple_element_t<I, typename Tr::Args>>(self.name(), args, I)...)));
      }
    }
    (std::make_index_sequence<Tr::arity>{});
  } else {
    throw_no_forward(self.name());
  }
}

}  // namespace detail

template <class Derived>
class Cloneable : public Module {
 public:
  /// A copy sharing every table entry (Note [Modules are tables]); see the file comment.
  std::shared_ptr<Module> shallow_copy() const override {
    if constexpr (std::is_copy_constructible_v<Derived>) {
      WICK_CHECK_TYPE(typeid(*this) == typeid(Derived),
                      "shallow_copy: {} derives from {}, so copying it through Cloneable<{}> would drop its own "
                      "part. Derive {} directly from wick::nn::Cloneable<{}>",
                      Module::name(), detail::short_type_name(typeid(Derived)),
                      detail::short_type_name(typeid(Derived)), Module::name(), Module::name());
      detail::ModuleCopyScope scope(this);  // Note [Holders follow their owner's table]
      return std::make_shared<Derived>(static_cast<const Derived&>(*this));
    } else {
      static_assert(detail::dependent_false<Derived>,
                    "wick::nn::Cloneable<T>: T is not copy-constructible, so shallow_copy (used by replicate) "
                    "cannot copy it. Keep tensors and child modules in the module's tables "
                    "(register_parameter / register_buffer / register_module, reading them through slots) "
                    "and make every other member copyable (no std::unique_ptr, std::mutex, references, ...)");
      return nullptr;
    }
  }
  /// Copy-assigns `other` (a Derived) into this module; false when Derived has no copy
  /// assignment (a const or reference member), and nothing changes then.
  bool assign_from(const Module& other) override {
    if constexpr (std::is_copy_assignable_v<Derived>) {
      WICK_CHECK_TYPE(typeid(other) == typeid(*this), "{}.assign_from: the source is a {}, not a {}", Module::name(),
                      other.name(), Module::name());
      detail::ModuleCopyScope scope(&other, this);  // Note [Holders follow their owner's table]
      static_cast<Derived&>(*this) = static_cast<const Derived&>(other);
      return true;
    } else {
      return false;
    }
  }
  /// Module::clone, typed: a deep copy of this tree as a Derived.
  std::shared_ptr<Derived> clone(std::optional<Device> device = std::nullopt) const {
    return std::static_pointer_cast<Derived>(Module::clone(device));
  }
  std::string name() const override { return detail::module_type_name(typeid(Derived)); }
  /// Calls forward, as LibTorch's modules: `net(x)` is `net.forward(x)`.
  template <class... Args>
  decltype(auto) operator()(Args&&... args) {
    return static_cast<Derived&>(*this).forward(std::forward<Args>(args)...);
  }
  Value forward_value(const std::vector<Value>& args) override {
    return detail::call_forward(static_cast<Derived&>(*this), args);
  }

 protected:
  Cloneable() = default;
  Cloneable(const Cloneable&) = default;
  Cloneable& operator=(const Cloneable&) = default;
};

}  // namespace wick::nn

// The holders (WICK_MODULE) come with every module header.
#include "wick/nn/module_holder.h"  // IWYU pragma: export
