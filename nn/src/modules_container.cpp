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

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto& m : modules) push_back(m);
}

Sequential::Sequential(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& m : modules) push_back(m);
}

Sequential::Sequential(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named) {
  for (const auto& [n, m] : named) push_back(n, m);
}

void Sequential::push_back(std::shared_ptr<Module> module) { push_back(std::to_string(size()), std::move(module)); }

void Sequential::push_back(std::string name, std::shared_ptr<Module> module) {
  WICK_CHECK(module != nullptr, "Sequential: child '{}' is null; Sequential holds modules only", name);
  register_module(std::move(name), std::move(module));
}

std::shared_ptr<Module> Sequential::operator[](int64_t i) const {
  return child_table()[wrap_index(i, size(), "Sequential")].value;
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& c : child_table()) x = c.value->forward_tensor(x);
  return x;
}

Value Sequential::forward_value(const std::vector<Value>& args) {
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

ModuleList::ModuleList(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto& m : modules) push_back(m);
}

ModuleList::ModuleList(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& m : modules) push_back(m);
}

void ModuleList::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(size()), std::move(module));
}

void ModuleList::extend(const ModuleList& other) {
  for (const auto& m : other.items()) push_back(m);
}

std::shared_ptr<Module> ModuleList::operator[](int64_t i) const {
  return child_table()[wrap_index(i, size(), "ModuleList")].value;
}

std::vector<std::shared_ptr<Module>> ModuleList::items() const {
  std::vector<std::shared_ptr<Module>> out;
  out.reserve(size());
  for (const auto& c : child_table()) out.push_back(c.value);
  return out;
}

// ---- ModuleDict ----

ModuleDict::ModuleDict(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named) {
  for (const auto& [n, m] : named) insert(n, m);
}

void ModuleDict::insert(std::string name, std::shared_ptr<Module> module) {
  register_module(std::move(name), std::move(module));
}

bool ModuleDict::contains(const std::string& name) const {
  for (const auto& c : child_table())
    if (c.name == name) return true;
  return false;
}

std::shared_ptr<Module> ModuleDict::operator[](const std::string& name) const {
  for (const auto& c : child_table())
    if (c.name == name) return c.value;
  WICK_FAIL_T(IndexError, "ModuleDict: no key '{}' (keys: {})", name, fmt::join(keys(), ", "));
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (const auto& c : child_table()) out.push_back(c.name);
  return out;
}

}  // namespace wick::nn
