// Sequential, ModuleList, ModuleDict.
#include <fmt/format.h>

#include "wick/nn/modules/container.h"

namespace wick::nn {

namespace {
size_t wrap_index(int64_t i, size_t size, const char* who) {
  const int64_t n = static_cast<int64_t>(size);
  WICK_CHECK_INDEX(i >= -n && i < n, "{}: index {} is out of range for {} children", who, i, n);
  return static_cast<size_t>(i < 0 ? i + n : i);
}
}  // namespace

// ---- Sequential ----

SequentialImpl::SequentialImpl(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& m : modules) push_back(m);
}

SequentialImpl::SequentialImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named) {
  for (const auto& [n, m] : named) push_back(n, m);
}

void SequentialImpl::push_back(std::shared_ptr<Module> module) { push_back(std::to_string(size()), std::move(module)); }

void SequentialImpl::push_back(std::string name, std::shared_ptr<Module> module) {
  WICK_CHECK(module != nullptr, "Sequential: child '{}' is null; Sequential holds modules only", name);
  register_module(std::move(name), std::move(module));
}

std::shared_ptr<Module> SequentialImpl::operator[](int64_t i) const {
  return child_table()[wrap_index(i, size(), "Sequential")].value;
}

Tensor SequentialImpl::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& c : child_table()) x = c.value->forward_tensor(x);
  return x;
}

Value SequentialImpl::forward_value(const std::vector<Value>& args) {
  const auto& table = child_table();
  if (table.empty()) {
    WICK_CHECK(args.size() == 1, "Sequential: an empty Sequential returns its single argument, but got {} arguments",
               args.size());
    return args[0];
  }
  Value x = table[0].value->forward_value(args);
  for (size_t i = 1; i < table.size(); ++i) x = table[i].value->forward_value({x});
  return x;
}

// ---- ModuleList ----

ModuleListImpl::ModuleListImpl(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& m : modules) push_back(m);
}

void ModuleListImpl::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(size()), std::move(module));
}

void ModuleListImpl::extend(const ModuleListImpl& other) {
  for (const auto& m : other.items()) push_back(m);
}

std::shared_ptr<Module> ModuleListImpl::operator[](int64_t i) const {
  return child_table()[wrap_index(i, size(), "ModuleList")].value;
}

std::vector<std::shared_ptr<Module>> ModuleListImpl::items() const {
  std::vector<std::shared_ptr<Module>> out;
  out.reserve(size());
  for (const auto& c : child_table()) out.push_back(c.value);
  return out;
}

// ---- ModuleDict ----

ModuleDictImpl::ModuleDictImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named) {
  for (const auto& [n, m] : named) insert(n, m);
}

void ModuleDictImpl::insert(std::string name, std::shared_ptr<Module> module) {
  register_module(std::move(name), std::move(module));
}

bool ModuleDictImpl::contains(const std::string& name) const {
  for (const auto& c : child_table())
    if (c.name == name) return true;
  return false;
}

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& name) const {
  for (const auto& c : child_table())
    if (c.name == name) return c.value;
  WICK_FAIL_T(IndexError, "ModuleDict: no key '{}' (keys: {})", name, fmt::join(keys(), ", "));
}

std::vector<std::string> ModuleDictImpl::keys() const {
  std::vector<std::string> out;
  for (const auto& c : child_table()) out.push_back(c.name);
  return out;
}

}  // namespace wick::nn
