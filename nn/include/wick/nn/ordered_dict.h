#pragma once
// OrderedDict: an insertion-ordered string -> V map (LibTorch's torch::OrderedDict, trimmed).
// Iteration yields std::pair<std::string, V> in insertion order; lookups are O(1).
// Used for state dicts (name -> tensor) and for the results of named_parameters() etc.
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wick/core/error.h"

namespace wick::nn {

template <typename V>
class OrderedDict {
 public:
  using Item = std::pair<std::string, V>;

  OrderedDict() = default;
  OrderedDict(std::initializer_list<Item> items) {
    for (const auto& it : items) insert(it.first, it.second);
  }

  /// Adds a new key; throws wick::ValueError if it already exists.
  V& insert(std::string key, V value) {
    WICK_CHECK(!index_.count(key), "OrderedDict: key '{}' already exists", key);
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().second;
  }
  /// Adds or replaces (keeping the original position).
  V& insert_or_assign(const std::string& key, V value) {
    auto it = index_.find(key);
    if (it != index_.end()) return items_[it->second].second = std::move(value);
    return insert(key, std::move(value));
  }
  /// Removes a key (O(n)); throws if absent.
  void erase(const std::string& key) {
    auto it = index_.find(key);
    WICK_CHECK_INDEX(it != index_.end(), "OrderedDict: no key '{}'", key);
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(it->second));
    reindex();
  }

  bool contains(const std::string& key) const { return index_.count(key) != 0; }
  /// Pointer to the value, or nullptr.
  const V* find(const std::string& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  V* find(const std::string& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  /// The value for key; throws wick::IndexError naming the key when absent.
  const V& at(const std::string& key) const {
    const V* v = find(key);
    WICK_CHECK_INDEX(v != nullptr, "OrderedDict: no key '{}'", key);
    return *v;
  }
  V& at(const std::string& key) {
    V* v = find(key);
    WICK_CHECK_INDEX(v != nullptr, "OrderedDict: no key '{}'", key);
    return *v;
  }
  const V& operator[](const std::string& key) const { return at(key); }
  V& operator[](const std::string& key) { return at(key); }

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void clear() {
    items_.clear();
    index_.clear();
  }
  const std::vector<Item>& items() const { return items_; }
  std::vector<std::string> keys() const {
    std::vector<std::string> k;
    k.reserve(items_.size());
    for (const auto& it : items_) k.push_back(it.first);
    return k;
  }
  std::vector<V> values() const {
    std::vector<V> v;
    v.reserve(items_.size());
    for (const auto& it : items_) v.push_back(it.second);
    return v;
  }
  const Item& operator[](size_t i) const { return items_.at(i); }

  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  void reindex() {
    index_.clear();
    for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, i);
  }
  std::vector<Item> items_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace wick::nn
