#pragma once
// ParameterList and ParameterDict (LibTorch's torch::nn::ParameterList / ParameterDict): modules
// whose only state is their parameter table, named "0", "1", ... (the list) or by key (the dict).
// Holding nothing else, they copy, replicate, clone and save like any module (Note [Modules are
// tables] in module.h): a replica's table holds the replica's tensors, and reading through the
// container reads them.
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "wick/nn/cloneable.h"
#include "wick/nn/module_holder.h"

namespace wick::nn {

/// Parameters by position; has no forward. Each appended tensor keeps its requires_grad (as
/// LibTorch's, where Python's ParameterList makes every tensor require grad) and must be a leaf
/// (wick::ValueError otherwise, as register_parameter).
class ParameterListImpl : public Cloneable<ParameterListImpl> {
 public:
  ParameterListImpl() = default;
  /// `ParameterListImpl(wick::randn({2}), wick::zeros({3}))`.
  template <class... Ts>
  requires(sizeof...(Ts) > 0 && (std::is_convertible_v<Ts, Tensor> && ...)) explicit ParameterListImpl(Ts&&... ps) {
    (append(Tensor(std::forward<Ts>(ps))), ...);
  }
  explicit ParameterListImpl(const std::vector<Tensor>& params);

  /// Adds a parameter named by its position.
  void append(Tensor param);
  /// Adds the value of a (name, tensor) pair, e.g. an item of another module's
  /// named_parameters(); the name is not kept.
  void append(const std::pair<std::string, Tensor>& item);
  void append(const ParameterEntry& entry);
  /// Appends every tensor (or item, or entry) of `container`: a std::vector<Tensor>, an
  /// OrderedDict<Tensor> (named_parameters()), another ParameterList or this one (`*list +=
  /// *list` doubles it: the items are copied before the first is appended), ...
  template <class Container>
  void extend(const Container& container) {
    using Item = std::decay_t<decltype(*std::begin(container))>;
    const std::vector<Item> items(std::begin(container), std::end(container));
    for (const auto& p : items) append(p);
  }
  template <class Container>
  ParameterListImpl& operator+=(const Container& container) {
    extend(container);
    return *this;
  }
  /// Puts `param` at position `index` (0 .. size(), negative counting from the end as in
  /// Python's list.insert), moving the later ones up one name (a wick extra: LibTorch's
  /// ParameterList has no insert). IndexError for an index outside.
  void insert(int64_t index, Tensor param);

  /// The i-th parameter (negative counts from the end); IndexError outside.
  const Tensor& operator[](int64_t i) const;
  const Tensor& at(int64_t i) const { return (*this)[i]; }
  size_t size() const { return parameter_table().size(); }
  bool is_empty() const { return size() == 0; }
  bool empty() const { return size() == 0; }
  /// The entries in order, each with `.name` ("0", "1", ...) and `.value` (LibTorch yields
  /// OrderedDict items with key() and value()).
  std::vector<ParameterEntry>::const_iterator begin() const { return parameter_table().begin(); }
  std::vector<ParameterEntry>::const_iterator end() const { return parameter_table().end(); }
  std::string extra_repr() const override;
};
WICK_MODULE(ParameterList);

/// Parameters by name, in insertion order; has no forward. Inserted tensors keep their
/// requires_grad and must be leaves, as ParameterList's.
class ParameterDictImpl : public Cloneable<ParameterDictImpl> {
 public:
  ParameterDictImpl() = default;
  explicit ParameterDictImpl(const std::vector<std::pair<std::string, Tensor>>& params);
  /// `ParameterDictImpl(module->named_parameters(false))`.
  explicit ParameterDictImpl(const OrderedDict<Tensor>& params);

  /// Adds a parameter and returns it; ValueError if the key exists (as LibTorch) or is not a
  /// valid parameter name (empty, or with a '.').
  Tensor insert(std::string key, Tensor param);
  /// Each (key, tensor) of `items` (pairs, an OrderedDict<Tensor>, another ParameterDict)
  /// replaces the parameter of that key, keeping its position, or is inserted at the end
  /// (Python's update; LibTorch's replaces existing keys only). A replacement must be a leaf
  /// (ValueError) and keeps its own requires_grad.
  template <class Container>
  void update(const Container& items) {
    for (const auto& [key, param] : items) set(key, param);
  }
  void update(std::initializer_list<std::pair<std::string, Tensor>> items);
  bool contains(const std::string& key) const;
  /// The parameter of `key`; IndexError listing the keys when absent.
  const Tensor& operator[](const std::string& key) const;
  const Tensor& get(const std::string& key) const { return (*this)[key]; }
  std::vector<std::string> keys() const;
  std::vector<Tensor> values() const;
  size_t size() const { return parameter_table().size(); }
  bool is_empty() const { return size() == 0; }
  bool empty() const { return size() == 0; }
  /// The entries in insertion order, each with `.name` and `.value`.
  std::vector<ParameterEntry>::const_iterator begin() const { return parameter_table().begin(); }
  std::vector<ParameterEntry>::const_iterator end() const { return parameter_table().end(); }
  std::string extra_repr() const override;

 private:
  void set(const std::string& key, const Tensor& param);
};

/// The holder of a ParameterDictImpl; also takes named tensors:
/// `ParameterDict({{"scale", wick::ones({3})}, {"shift", wick::zeros({3})}})`.
class ParameterDict : public ModuleHolder<ParameterDictImpl> {
 public:
  using ModuleHolder<ParameterDictImpl>::ModuleHolder;
  ParameterDict() = default;
  ParameterDict(std::initializer_list<std::pair<std::string, Tensor>> named)
      : ModuleHolder(std::make_shared<ParameterDictImpl>(std::vector<std::pair<std::string, Tensor>>(named))) {}
};

}  // namespace wick::nn
