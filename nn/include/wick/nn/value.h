#pragma once
// Value: what a module's generic entry point (Module::forward_value) takes and returns.
//
// Note [Value]
// Typed modules expose `Tensor forward(const Tensor&)` (or any other C++ signature). Code that
// must call *any* module without knowing its signature (Sequential over type-erased children,
// DataParallel's scatter -> parallel_apply -> gather) goes through forward_value, whose
// arguments and result are Values: a small tree whose leaves are tensors or plain data.
//   None | Tensor | bool | int64 | double | string | List[Value] | Tuple[Value] | Dict[str -> Value]
// List and Tuple differ only in kind (PyTorch's scatter/gather keep list vs tuple); Dict keeps
// insertion order. Cloneable<Derived> adapts `forward(...)` to forward_value automatically
// (see cloneable.h), so modules rarely build Values by hand.
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::nn {

class Value;

/// The items of a List or a Tuple value.
struct ValueList {
  std::vector<Value> items;
};
struct ValueTuple {
  std::vector<Value> items;
};
/// An insertion-ordered dict; keys are unique.
struct ValueDict {
  std::vector<std::string> keys;
  std::vector<Value> values;
};

class Value {
 public:
  enum class Kind : int8_t { None, Tensor, Bool, Int, Double, String, List, Tuple, Dict };

  /// None.
  Value() = default;
  Value(std::nullptr_t) {}                       // NOLINT
  Value(Tensor t) : v_(std::move(t)) {}          // NOLINT
  Value(bool b) : v_(b) {}                       // NOLINT
  Value(int v) : v_(static_cast<int64_t>(v)) {}  // NOLINT
  Value(int64_t v) : v_(v) {}                    // NOLINT
  Value(double v) : v_(v) {}                     // NOLINT
  Value(std::string s) : v_(std::move(s)) {}     // NOLINT
  Value(const char* s) : v_(std::string(s)) {}   // NOLINT
  Value(ValueList l) : v_(std::move(l)) {}       // NOLINT
  Value(ValueTuple t) : v_(std::move(t)) {}      // NOLINT
  Value(ValueDict d) : v_(std::move(d)) {}       // NOLINT
  /// A List of tensors.
  Value(const std::vector<Tensor>& ts);  // NOLINT

  static Value list(std::vector<Value> items) { return Value(ValueList{std::move(items)}); }
  static Value tuple(std::vector<Value> items) { return Value(ValueTuple{std::move(items)}); }
  /// A Dict; throws wick::ValueError when keys and values differ in length or a key repeats.
  static Value dict(std::vector<std::string> keys, std::vector<Value> values);

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_none() const { return kind() == Kind::None; }
  bool is_tensor() const { return kind() == Kind::Tensor; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_double() const { return kind() == Kind::Double; }
  bool is_string() const { return kind() == Kind::String; }
  bool is_list() const { return kind() == Kind::List; }
  bool is_tuple() const { return kind() == Kind::Tuple; }
  bool is_dict() const { return kind() == Kind::Dict; }
  /// List or Tuple.
  bool is_sequence() const { return is_list() || is_tuple(); }

  // Accessors: each throws wick::TypeError naming the expected and the actual kind.
  const Tensor& tensor() const;
  bool to_bool() const;
  /// An Int (a Bool converts too).
  int64_t to_int() const;
  /// A Double (an Int converts too).
  double to_double() const;
  const std::string& str() const;
  /// The items of a List or a Tuple.
  const std::vector<Value>& items() const;
  std::vector<Value>& items();
  const ValueDict& dict() const;
  ValueDict& dict();
  /// The tensors of a List or Tuple whose items are all tensors.
  std::vector<Tensor> tensors() const;

  /// Calls fn on every tensor leaf, depth first, in order.
  void for_each_tensor(const std::function<void(const Tensor&)>& fn) const;
  /// A Value of the same structure with every tensor leaf replaced by fn(leaf); other leaves
  /// are copied.
  Value map_tensors(const std::function<Tensor(const Tensor&)>& fn) const;

  /// A short description for error messages: "Tensor[2, 3] float32 cpu:0", "List(2)", "Int 3".
  std::string describe() const;

  static const char* kind_name(Kind k);

 private:
  std::variant<std::monostate, Tensor, bool, int64_t, double, std::string, ValueList, ValueTuple, ValueDict> v_;
};

}  // namespace wick::nn
