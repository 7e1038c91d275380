// scatter / gather of Value trees (Note [Scattering values]).
#include "wick/parallel/scatter_gather.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "wick/core/error.h"

namespace wick::parallel {

using nn::Value;

namespace {

bool is_empty_container(const Value& v) {
  if (v.is_sequence()) return v.items().empty();
  if (v.is_dict()) return v.dict().keys.empty();
  return false;
}

// The first defined tensor leaf of `v` (depth first), or null when it holds none. An undefined
// tensor is handed to every device as None is (Note [Scattering values]).
const Tensor* first_tensor(const Value& v) {
  if (v.is_tensor()) return v.tensor().defined() ? &v.tensor() : nullptr;
  if (v.is_sequence() || v.is_dict())
    for (const Value& item : v.is_dict() ? v.dict().values : v.items())
      if (const Tensor* t = first_tensor(item)) return t;
  return nullptr;
}

// Per-device values for `v`; the result may be shorter than `devices` (a short dim), and is the
// same length for every tensor leaf of `v` (Note [Scattering values]).
std::vector<Value> scatter_map(const Value& v, const std::vector<Device>& devices, int64_t dim) {
  if (v.is_tensor() && v.tensor().defined()) {
    std::vector<Tensor> chunks = Scatter::apply(devices, v.tensor(), {}, dim);
    return std::vector<Value>(chunks.begin(), chunks.end());
  }
  if ((v.is_sequence() || v.is_dict()) && !is_empty_container(v)) {
    const std::vector<Value>& items = v.is_dict() ? v.dict().values : v.items();
    std::vector<std::vector<Value>> parts;
    size_t count = devices.size();
    const Tensor* counted = nullptr;  // the tensor that set `count`
    for (const Value& item : items) {
      parts.push_back(scatter_map(item, devices, dim));
      const Tensor* t = first_tensor(item);
      if (t == nullptr) continue;  // handed to every device as it is
      if (counted != nullptr)
        WICK_CHECK(parts.back().size() == count,
                   "scatter: a tensor of shape [{}] splits into {} chunks along dim {} over {} devices, but one of "
                   "shape [{}] into {}; the replicas would silently drop rows of the longer one. Give every tensor "
                   "argument the same size along dim {} (or pass tensors that must not be split inside a module)",
                   fmt::join(counted->sizes(), ", "), count, dim, devices.size(), fmt::join(t->sizes(), ", "),
                   parts.back().size(), dim);
      count = parts.back().size();
      counted = t;
    }
    std::vector<Value> out;
    out.reserve(count);
    for (size_t d = 0; d < count; ++d) {
      std::vector<Value> per;
      per.reserve(parts.size());
      for (auto& p : parts) per.push_back(std::move(p[d]));
      if (v.is_list())
        out.push_back(Value::list(std::move(per)));
      else if (v.is_tuple())
        out.push_back(Value::tuple(std::move(per)));
      else
        out.push_back(Value::dict(v.dict().keys, std::move(per)));
    }
    return out;
  }
  return std::vector<Value>(devices.size(), v);  // passed to every device as it is
}

bool same_leaf(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::None:
      return true;
    case Value::Kind::Bool:
      return a.to_bool() == b.to_bool();
    case Value::Kind::Int:
      return a.to_int() == b.to_int();
    case Value::Kind::Double:
      return a.to_double() == b.to_double();
    case Value::Kind::String:
      return a.str() == b.str();
    default:
      return false;
  }
}

Value gather_map(const std::vector<Value>& outs, Device destination, int64_t dim) {
  const Value& first = outs[0];
  auto check_kind = [&](Value::Kind k) {
    for (size_t i = 1; i < outs.size(); ++i)
      WICK_CHECK_TYPE(outs[i].kind() == k, "gather: replica {} returned {} where replica 0 returned {}", i,
                      outs[i].describe(), first.describe());
  };
  switch (first.kind()) {
    case Value::Kind::Tensor: {
      check_kind(Value::Kind::Tensor);
      // An undefined tensor in every replica gathers to one, as None does (an optional output:
      // MultiheadAttention's weights without need_weights); in some replicas only, it is an error.
      size_t undefined = 0;
      for (const Value& o : outs) undefined += o.tensor().defined() ? 0 : 1;
      if (undefined == outs.size()) return first;
      for (size_t i = 0; i < outs.size() && undefined > 0; ++i)
        WICK_CHECK(outs[i].tensor().defined(),
                   "gather: replica {} returned an undefined tensor where {} replica(s) returned a defined one; an "
                   "optional output must be undefined in every replica or in none",
                   i, outs.size() - undefined);
      std::vector<Tensor> ts;
      ts.reserve(outs.size());
      for (const Value& o : outs) ts.push_back(o.tensor());
      return Value(Gather::apply(ts, destination, dim));
    }
    case Value::Kind::None:
      return Value();
    case Value::Kind::List:
    case Value::Kind::Tuple: {
      check_kind(first.kind());
      const size_t n = first.items().size();
      for (size_t i = 1; i < outs.size(); ++i)
        WICK_CHECK(outs[i].items().size() == n,
                   "gather: replica {} returned a {} of {} items where replica 0 returned {} items", i,
                   Value::kind_name(first.kind()), outs[i].items().size(), n);
      std::vector<Value> items;
      items.reserve(n);
      for (size_t k = 0; k < n; ++k) {
        std::vector<Value> column;
        column.reserve(outs.size());
        for (const Value& o : outs) column.push_back(o.items()[k]);
        items.push_back(gather_map(column, destination, dim));
      }
      return first.is_list() ? Value::list(std::move(items)) : Value::tuple(std::move(items));
    }
    case Value::Kind::Dict: {
      check_kind(Value::Kind::Dict);
      const auto& keys = first.dict().keys;
      for (size_t i = 1; i < outs.size(); ++i)
        WICK_CHECK(outs[i].dict().keys.size() == keys.size(),
                   "gather: All dicts must have the same number of keys "
                   "(replica 0 returned {}, replica {} returned {})",
                   keys.size(), i, outs[i].dict().keys.size());
      std::vector<Value> values;
      for (size_t k = 0; k < keys.size(); ++k) {
        std::vector<Value> column;
        for (size_t i = 0; i < outs.size(); ++i) {
          const auto& d = outs[i].dict();
          auto it = std::find(d.keys.begin(), d.keys.end(), keys[k]);
          WICK_CHECK_INDEX(it != d.keys.end(), "gather: replica {} returned a dict without the key '{}' of replica 0",
                           i, keys[k]);
          column.push_back(d.values[static_cast<size_t>(it - d.keys.begin())]);
        }
        values.push_back(gather_map(column, destination, dim));
      }
      return Value::dict(keys, std::move(values));
    }
    default:
      for (size_t i = 1; i < outs.size(); ++i)
        WICK_CHECK(same_leaf(outs[i], first),
                   "gather: replica {} returned {} where replica 0 returned {}; only tensors can be gathered, other "
                   "values must be equal in every replica",
                   i, outs[i].describe(), first.describe());
      return first;
  }
}

}  // namespace

std::vector<Value> scatter(const Value& value, const std::vector<Device>& devices, int64_t dim) {
  WICK_CHECK(!devices.empty(), "scatter: Expected at least one device to scatter to");
  return scatter_map(value, devices, dim);
}

std::vector<Tensor> scatter(const Tensor& tensor, const std::vector<Device>& devices, int64_t dim) {
  return Scatter::apply(devices, tensor, {}, dim);
}

std::vector<std::vector<Value>> scatter_args(const std::vector<Value>& args, const std::vector<Device>& devices,
                                             int64_t dim) {
  if (args.empty()) return {};
  std::vector<Value> per_device = scatter(Value::tuple(args), devices, dim);
  std::vector<std::vector<Value>> out;
  out.reserve(per_device.size());
  for (Value& v : per_device) out.push_back(std::move(v.items()));
  return out;
}

Value gather(const std::vector<Value>& outputs, Device destination, int64_t dim) {
  WICK_CHECK(!outputs.empty(), "gather: Expected at least one output to gather");
  return gather_map(outputs, destination, dim);
}

Tensor gather(const std::vector<Tensor>& outputs, Device destination, int64_t dim) {
  return Gather::apply(outputs, destination, dim);
}

}  // namespace wick::parallel
