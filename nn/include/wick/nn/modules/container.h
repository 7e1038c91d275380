#pragma once
// Containers: Sequential, ModuleList, ModuleDict (torch.nn's). Their children live in the
// child table like any module's, so they replicate like any module.
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "wick/nn/cloneable.h"

namespace wick::nn {

/// Runs its children in order, each on the previous one's output. Children are named "0",
/// "1", ... unless given names.
class Sequential : public Cloneable<Sequential> {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  explicit Sequential(const std::vector<std::shared_ptr<Module>>& modules);
  /// Named children, in order.
  explicit Sequential(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named);

  /// Appends a child named by its position.
  void push_back(std::shared_ptr<Module> module);
  void push_back(std::string name, std::shared_ptr<Module> module);
  /// The i-th child (negative counts from the end).
  std::shared_ptr<Module> operator[](int64_t i) const;
  template <class T>
  std::shared_ptr<T> at(int64_t i) const {
    auto p = std::dynamic_pointer_cast<T>((*this)[i]);
    WICK_CHECK_TYPE(p != nullptr, "Sequential::at: child {} is a {}, not the requested type", i, (*this)[i]->name());
    return p;
  }
  size_t size() const { return child_table().size(); }
  bool empty() const { return size() == 0; }

  /// The chain for tensor-to-tensor children.
  Tensor forward(const Tensor& input);
  /// The chain for any children: the first gets `args`, each next one the previous result.
  Value forward_value(const std::vector<Value>& args) override;
};

/// Holds children by position; has no forward.
class ModuleList : public Cloneable<ModuleList> {
 public:
  ModuleList() = default;
  ModuleList(std::initializer_list<std::shared_ptr<Module>> modules);
  explicit ModuleList(const std::vector<std::shared_ptr<Module>>& modules);
  void push_back(std::shared_ptr<Module> module);
  /// Appends every module of `other`.
  void extend(const ModuleList& other);
  std::shared_ptr<Module> operator[](int64_t i) const;
  template <class T>
  std::shared_ptr<T> at(int64_t i) const {
    auto p = std::dynamic_pointer_cast<T>((*this)[i]);
    WICK_CHECK_TYPE(p != nullptr, "ModuleList::at: child {} is a {}, not the requested type", i, (*this)[i]->name());
    return p;
  }
  size_t size() const { return child_table().size(); }
  bool empty() const { return size() == 0; }
  /// The children in order (None entries as null).
  std::vector<std::shared_ptr<Module>> items() const;
};

/// Holds children by name, in insertion order; has no forward.
class ModuleDict : public Cloneable<ModuleDict> {
 public:
  ModuleDict() = default;
  explicit ModuleDict(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named);
  /// Adds a child; throws if the name exists.
  void insert(std::string name, std::shared_ptr<Module> module);
  bool contains(const std::string& name) const;
  /// The child named `name`; throws wick::IndexError listing the keys when absent.
  std::shared_ptr<Module> operator[](const std::string& name) const;
  template <class T>
  std::shared_ptr<T> at(const std::string& name) const {
    auto p = std::dynamic_pointer_cast<T>((*this)[name]);
    WICK_CHECK_TYPE(p != nullptr, "ModuleDict::at: child '{}' is a {}, not the requested type", name, (*this)[name]->name());
    return p;
  }
  std::vector<std::string> keys() const;
  size_t size() const { return child_table().size(); }
  bool empty() const { return size() == 0; }
};

}  // namespace wick::nn
