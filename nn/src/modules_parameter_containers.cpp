// ParameterList and ParameterDict: every operation reads or writes the parameter table, so
// copies and replicas need no code of their own.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "wick/core/error.h"
#include "wick/nn/modules/parameter_containers.h"

namespace wick::nn {

namespace {
// PyTorch 1.13's line for one entry of the containers' repr: ParameterList names the dtype
// ("  (0): Parameter containing: [torch.float64 of size 2x3]"), ParameterDict the tensor type
// ("  (a): Parameter containing: [torch.DoubleTensor of size 2x3]").
std::string entry_line(const ParameterEntry& e, bool type_name) {
  const Tensor& t = e.value;
  if (!t.defined()) return fmt::format("  ({}): Object of type: NoneType", e.name);
  const bool cuda = t.device().type == DeviceType::CUDA;
  const DType d = t.dtype();
  const std::string type = type_name ? fmt::format("{}{}", cuda ? "cuda." : "",
                                                   d == kFloat64   ? "DoubleTensor"
                                                   : d == kFloat32 ? "FloatTensor"
                                                   : d == kInt64   ? "LongTensor"
                                                                   : "BoolTensor")
                                     : std::string(dtype_name(d));
  return fmt::format("  ({}): Parameter containing: [torch.{} of size {}{}]", e.name, type, fmt::join(t.sizes(), "x"),
                     cuda ? fmt::format(" (GPU {})", t.device().index) : "");
}

std::string entry_lines(const std::vector<ParameterEntry>& table, bool type_name) {
  std::vector<std::string> lines;
  for (const auto& e : table) lines.push_back(entry_line(e, type_name));
  return fmt::format("{}", fmt::join(lines, "\n"));
}
}  // namespace

// ---- ParameterList ----

ParameterListImpl::ParameterListImpl(const std::vector<Tensor>& params) { extend(params); }

void ParameterListImpl::append(Tensor param) {
  const bool requires_grad = param.defined() && param.requires_grad();
  register_parameter(std::to_string(size()), std::move(param), requires_grad);
}

void ParameterListImpl::append(const std::pair<std::string, Tensor>& item) { append(item.second); }

void ParameterListImpl::append(const ParameterEntry& entry) { append(entry.value); }

void ParameterListImpl::insert(int64_t index, Tensor param) {
  const auto n = static_cast<int64_t>(size());
  WICK_CHECK_INDEX(index >= -n && index <= n, "ParameterList::insert: index {} is outside 0 .. {} (or -{} .. -1)",
                   index, n, n);
  const auto at = static_cast<size_t>(index < 0 ? index + n : index);
  append(std::move(param));  // checked and registered as entry n, then moved down to `at`
  const Tensor moved = parameter_table().back().value;
  for (size_t j = parameter_table().size() - 1; j > at; --j) set_parameter_entry(j, parameter_table()[j - 1].value);
  set_parameter_entry(at, moved);
}

const Tensor& ParameterListImpl::operator[](int64_t i) const {
  const auto n = static_cast<int64_t>(size());
  WICK_CHECK_INDEX(i >= -n && i < n, "ParameterList: index {} is out of range for {} parameters", i, n);
  return parameter_table()[static_cast<size_t>(i < 0 ? i + n : i)].value;
}

std::string ParameterListImpl::extra_repr() const { return entry_lines(parameter_table(), false); }

// ---- ParameterDict ----

ParameterDictImpl::ParameterDictImpl(const std::vector<std::pair<std::string, Tensor>>& params) {
  for (const auto& [k, v] : params) insert(k, v);
}

ParameterDictImpl::ParameterDictImpl(const OrderedDict<Tensor>& params) {
  for (const auto& [k, v] : params) insert(k, v);
}

Tensor ParameterDictImpl::insert(std::string key, Tensor param) {
  const bool requires_grad = param.defined() && param.requires_grad();
  return this->param(register_parameter(std::move(key), std::move(param), requires_grad));
}

void ParameterDictImpl::set(const std::string& key, const Tensor& param) {
  const auto& table = parameter_table();
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i].name != key) continue;
    WICK_CHECK(!param.defined() || param.is_leaf(),
               "ParameterDict::update: the tensor for '{}' is not a leaf (it was computed by an op); pass t.detach()",
               key);
    set_parameter_entry(i, param);
    return;
  }
  insert(key, param);
}

void ParameterDictImpl::update(std::initializer_list<std::pair<std::string, Tensor>> items) {
  for (const auto& [k, v] : items) set(k, v);
}

bool ParameterDictImpl::contains(const std::string& key) const {
  for (const auto& e : parameter_table())
    if (e.name == key) return true;
  return false;
}

const Tensor& ParameterDictImpl::operator[](const std::string& key) const {
  for (const auto& e : parameter_table())
    if (e.name == key) return e.value;
  WICK_FAIL_T(IndexError, "ParameterDict: no key '{}' (keys: {})", key, fmt::join(keys(), ", "));
}

std::vector<std::string> ParameterDictImpl::keys() const {
  std::vector<std::string> out;
  for (const auto& e : parameter_table()) out.push_back(e.name);
  return out;
}

std::vector<Tensor> ParameterDictImpl::values() const {
  std::vector<Tensor> out;
  for (const auto& e : parameter_table()) out.push_back(e.value);
  return out;
}

std::string ParameterDictImpl::extra_repr() const { return entry_lines(parameter_table(), true); }

}  // namespace wick::nn
