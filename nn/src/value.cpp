#include "wick/nn/value.h"

#include <fmt/format.h>

#include "wick/core/error.h"

namespace wick::nn {

Value::Value(const std::vector<Tensor>& ts) {
  ValueList l;
  l.items.reserve(ts.size());
  for (const auto& t : ts) l.items.emplace_back(t);
  v_ = std::move(l);
}

Value Value::dict(std::vector<std::string> keys, std::vector<Value> values) {
  WICK_CHECK(keys.size() == values.size(), "Value::dict: {} keys but {} values", keys.size(), values.size());
  for (size_t i = 0; i < keys.size(); ++i)
    for (size_t j = 0; j < i; ++j) WICK_CHECK(keys[i] != keys[j], "Value::dict: key '{}' appears twice", keys[i]);
  return Value(ValueDict{std::move(keys), std::move(values)});
}

const char* Value::kind_name(Kind k) {
  switch (k) {
    case Kind::None:
      return "None";
    case Kind::Tensor:
      return "Tensor";
    case Kind::Bool:
      return "Bool";
    case Kind::Int:
      return "Int";
    case Kind::Double:
      return "Double";
    case Kind::String:
      return "String";
    case Kind::List:
      return "List";
    case Kind::Tuple:
      return "Tuple";
    case Kind::Dict:
      return "Dict";
  }
  return "?";
}

std::string Value::describe() const {
  switch (kind()) {
    case Kind::None:
      return "None";
    case Kind::Tensor: {
      const Tensor& t = std::get<Tensor>(v_);
      if (!t.defined()) return "Tensor(undefined)";
      return fmt::format("Tensor[{}] {} {}", fmt::join(t.sizes(), ", "), t.dtype(), t.device());
    }
    case Kind::Bool:
      return fmt::format("Bool {}", std::get<bool>(v_));
    case Kind::Int:
      return fmt::format("Int {}", std::get<int64_t>(v_));
    case Kind::Double:
      return fmt::format("Double {}", std::get<double>(v_));
    case Kind::String:
      return fmt::format("String \"{}\"", std::get<std::string>(v_));
    case Kind::List:
      return fmt::format("List({})", std::get<ValueList>(v_).items.size());
    case Kind::Tuple:
      return fmt::format("Tuple({})", std::get<ValueTuple>(v_).items.size());
    case Kind::Dict:
      return fmt::format("Dict({})", std::get<ValueDict>(v_).keys.size());
  }
  return "?";
}

const Tensor& Value::tensor() const {
  WICK_CHECK_TYPE(is_tensor(), "Value: expected a Tensor but got {}", describe());
  return std::get<Tensor>(v_);
}
bool Value::to_bool() const {
  WICK_CHECK_TYPE(is_bool(), "Value: expected a Bool but got {}", describe());
  return std::get<bool>(v_);
}
int64_t Value::to_int() const {
  if (is_bool()) return std::get<bool>(v_) ? 1 : 0;
  WICK_CHECK_TYPE(is_int(), "Value: expected an Int but got {}", describe());
  return std::get<int64_t>(v_);
}
double Value::to_double() const {
  if (is_int()) return static_cast<double>(std::get<int64_t>(v_));
  WICK_CHECK_TYPE(is_double(), "Value: expected a Double but got {}", describe());
  return std::get<double>(v_);
}
const std::string& Value::str() const {
  WICK_CHECK_TYPE(is_string(), "Value: expected a String but got {}", describe());
  return std::get<std::string>(v_);
}
const std::vector<Value>& Value::items() const {
  if (is_list()) return std::get<ValueList>(v_).items;
  WICK_CHECK_TYPE(is_tuple(), "Value: expected a List or a Tuple but got {}", describe());
  return std::get<ValueTuple>(v_).items;
}
std::vector<Value>& Value::items() {
  if (is_list()) return std::get<ValueList>(v_).items;
  WICK_CHECK_TYPE(is_tuple(), "Value: expected a List or a Tuple but got {}", describe());
  return std::get<ValueTuple>(v_).items;
}
const ValueDict& Value::dict() const {
  WICK_CHECK_TYPE(is_dict(), "Value: expected a Dict but got {}", describe());
  return std::get<ValueDict>(v_);
}
ValueDict& Value::dict() {
  WICK_CHECK_TYPE(is_dict(), "Value: expected a Dict but got {}", describe());
  return std::get<ValueDict>(v_);
}

std::vector<Tensor> Value::tensors() const {
  const auto& its = items();
  std::vector<Tensor> out;
  out.reserve(its.size());
  for (size_t i = 0; i < its.size(); ++i) {
    WICK_CHECK_TYPE(its[i].is_tensor(), "Value::tensors: item {} is {}, expected a Tensor", i, its[i].describe());
    out.push_back(its[i].tensor());
  }
  return out;
}

void Value::for_each_tensor(const std::function<void(const Tensor&)>& fn) const {
  switch (kind()) {
    case Kind::Tensor:
      fn(std::get<Tensor>(v_));
      break;
    case Kind::List:
    case Kind::Tuple:
      for (const auto& v : items()) v.for_each_tensor(fn);
      break;
    case Kind::Dict:
      for (const auto& v : std::get<ValueDict>(v_).values) v.for_each_tensor(fn);
      break;
    default:
      break;
  }
}

Value Value::map_tensors(const std::function<Tensor(const Tensor&)>& fn) const {
  switch (kind()) {
    case Kind::Tensor:
      return Value(fn(std::get<Tensor>(v_)));
    case Kind::List:
    case Kind::Tuple: {
      std::vector<Value> out;
      out.reserve(items().size());
      for (const auto& v : items()) out.push_back(v.map_tensors(fn));
      return is_list() ? Value::list(std::move(out)) : Value::tuple(std::move(out));
    }
    case Kind::Dict: {
      const auto& d = std::get<ValueDict>(v_);
      ValueDict out{d.keys, {}};
      out.values.reserve(d.values.size());
      for (const auto& v : d.values) out.values.push_back(v.map_tensors(fn));
      return Value(std::move(out));
    }
    default:
      return *this;
  }
}

}  // namespace wick::nn
