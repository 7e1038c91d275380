#pragma once
// Containers: Sequential, ModuleList, ModuleDict (torch.nn's). Their children live in the
// child table like any module's, so they replicate like any module.
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "wick/nn/cloneable.h"

namespace wick::nn {

namespace detail {
/// A module holder or a shared_ptr to a module: what the containers take.
template <class M>
concept ModulePointerLike =
    std::is_convertible_v<M, std::shared_ptr<Module>> && !std::is_same_v<std::remove_cvref_t<M>, std::nullptr_t>;

/// Iterates a child table as `const std::shared_ptr<Module>&` (None entries are null).
class ChildIterator {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = std::shared_ptr<Module>;
  using difference_type = std::ptrdiff_t;
  using pointer = const std::shared_ptr<Module>*;
  using reference = const std::shared_ptr<Module>&;
  ChildIterator() = default;
  explicit ChildIterator(std::vector<ChildEntry>::const_iterator it) : it_(it) {}
  reference operator*() const { return it_->value; }
  pointer operator->() const { return &it_->value; }
  ChildIterator& operator++() {
    ++it_;
    return *this;
  }
  ChildIterator operator++(int) { return ChildIterator(it_++); }
  friend bool operator==(const ChildIterator& a, const ChildIterator& b) { return a.it_ == b.it_; }
  friend difference_type operator-(const ChildIterator& a, const ChildIterator& b) { return a.it_ - b.it_; }

 private:
  std::vector<ChildEntry>::const_iterator it_;
};
}  // namespace detail

/// Runs its children in order, each on the previous one's output. Children are named "0",
/// "1", ... unless given names. `Sequential(Linear(3, 4), ReLU(), Linear(4, 2))`, as LibTorch.
class SequentialImpl : public Cloneable<SequentialImpl> {
 public:
  SequentialImpl() = default;
  /// From holders or shared_ptrs, in order: `SequentialImpl(Linear(3, 4), ReLU())`.
  template <class... Ms>
  requires(sizeof...(Ms) > 0 && (detail::ModulePointerLike<Ms> && ...)) explicit SequentialImpl(Ms&&... modules) {
    (push_back(std::shared_ptr<Module>(std::forward<Ms>(modules))), ...);
  }
  explicit SequentialImpl(const std::vector<std::shared_ptr<Module>>& modules);
  /// Named children, in order.
  explicit SequentialImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named);

  /// Appends a child named by its position (a holder or a shared_ptr; not null).
  void push_back(std::shared_ptr<Module> module);
  void push_back(std::string name, std::shared_ptr<Module> module);
  /// The i-th child (negative counts from the end).
  std::shared_ptr<Module> operator[](int64_t i) const;
  /// The i-th child as a T (`seq->at<LinearImpl>(0)`); throws wick::TypeError for another type.
  template <class T>
  std::shared_ptr<T> at(int64_t i) const {
    auto p = std::dynamic_pointer_cast<T>((*this)[i]);
    WICK_CHECK_TYPE(p != nullptr, "Sequential::at: child {} is a {}, not the requested type", i, (*this)[i]->name());
    return p;
  }
  size_t size() const { return child_table().size(); }
  bool empty() const { return size() == 0; }
  /// The children in order, as `const std::shared_ptr<Module>&` (LibTorch yields AnyModule).
  detail::ChildIterator begin() const { return detail::ChildIterator(child_table().begin()); }
  detail::ChildIterator end() const { return detail::ChildIterator(child_table().end()); }

  /// The chain for tensor-to-tensor children.
  Tensor forward(const Tensor& input);
  /// The chain for any children: the first gets `args`, each next one the previous result.
  Value forward_value(const std::vector<Value>& args) override;
};

/// The holder of a SequentialImpl; also takes named children:
/// `Sequential({{"fc", Linear(3, 4)}, {"act", ReLU()}})`.
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  Sequential() = default;
  Sequential(std::initializer_list<std::pair<std::string, std::shared_ptr<Module>>> named)
      : ModuleHolder(
            std::make_shared<SequentialImpl>(std::vector<std::pair<std::string, std::shared_ptr<Module>>>(named))) {}
};

/// Holds children by position; has no forward.
class ModuleListImpl : public Cloneable<ModuleListImpl> {
 public:
  ModuleListImpl() = default;
  template <class... Ms>
  requires(sizeof...(Ms) > 0 && (detail::ModulePointerLike<Ms> && ...)) explicit ModuleListImpl(Ms&&... modules) {
    (push_back(std::shared_ptr<Module>(std::forward<Ms>(modules))), ...);
  }
  explicit ModuleListImpl(const std::vector<std::shared_ptr<Module>>& modules);
  void push_back(std::shared_ptr<Module> module);
  /// Appends every module of `other`.
  void extend(const ModuleListImpl& other);
  std::shared_ptr<Module> operator[](int64_t i) const;
  template <class T>
  std::shared_ptr<T> at(int64_t i) const {
    auto p = std::dynamic_pointer_cast<T>((*this)[i]);
    WICK_CHECK_TYPE(p != nullptr, "ModuleList::at: child {} is a {}, not the requested type", i, (*this)[i]->name());
    return p;
  }
  size_t size() const { return child_table().size(); }
  bool empty() const { return size() == 0; }
  detail::ChildIterator begin() const { return detail::ChildIterator(child_table().begin()); }
  detail::ChildIterator end() const { return detail::ChildIterator(child_table().end()); }
  /// The children in order (None entries as null).
  std::vector<std::shared_ptr<Module>> items() const;
};
WICK_MODULE(ModuleList);

/// Holds children by name, in insertion order; has no forward.
class ModuleDictImpl : public Cloneable<ModuleDictImpl> {
 public:
  ModuleDictImpl() = default;
  explicit ModuleDictImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named);
  /// Adds a child; throws if the name exists.
  void insert(std::string name, std::shared_ptr<Module> module);
  bool contains(const std::string& name) const;
  /// The child named `name`; throws wick::IndexError listing the keys when absent.
  std::shared_ptr<Module> operator[](const std::string& name) const;
  template <class T>
  std::shared_ptr<T> at(const std::string& name) const {
    auto p = std::dynamic_pointer_cast<T>((*this)[name]);
    WICK_CHECK_TYPE(p != nullptr, "ModuleDict::at: child '{}' is a {}, not the requested type", name,
                    (*this)[name]->name());
    return p;
  }
  std::vector<std::string> keys() const;
  size_t size() const { return child_table().size(); }
  bool empty() const { return size() == 0; }
};

/// The holder of a ModuleDictImpl: `ModuleDict({{"enc", Linear(2, 2)}})`.
class ModuleDict : public ModuleHolder<ModuleDictImpl> {
 public:
  using ModuleHolder<ModuleDictImpl>::ModuleHolder;
  ModuleDict() = default;
  ModuleDict(std::initializer_list<std::pair<std::string, std::shared_ptr<Module>>> named)
      : ModuleHolder(
            std::make_shared<ModuleDictImpl>(std::vector<std::pair<std::string, std::shared_ptr<Module>>>(named))) {}
};

}  // namespace wick::nn
