#pragma once
// The layers of tests/parallel/replicate_every_layer_test.cpp: each row a layer, how to call it and
// along which dimension its batch runs. The table is built by replicate_every_layer_table_test.cpp,
// which adds its builder at static initialisation (add_layer_table); the test reads every_layer()
// when it runs.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "wick/nn/nn.h"

namespace wick::test::replicate_layers {

using Args = std::vector<nn::Value>;

// A layer, how to call it, and along which dimension its batch runs.
struct Layer {
  std::string name;
  std::function<std::shared_ptr<nn::Module>()> make;  // any dtype on cpu:0; the test casts to float64
  std::function<Args()> args;                         // float64 (int64 indices) on cpu:0, batch of 5
  int64_t dim = 0;
  bool train = true;
};

/// The builders of the layer table (filled before main()).
inline std::vector<std::function<std::vector<Layer>()>>& layer_tables() {
  static std::vector<std::function<std::vector<Layer>()>> tables;
  return tables;
}
/// Adds a builder; returns true (for a namespace-scope `const bool` initialiser).
inline bool add_layer_table(std::function<std::vector<Layer>()> table) {
  layer_tables().push_back(std::move(table));
  return true;
}
/// Every layer of every table, in the order the tables were added.
inline std::vector<Layer> every_layer() {
  std::vector<Layer> out;
  for (const auto& table : layer_tables())
    for (Layer& l : table()) out.push_back(std::move(l));
  return out;
}

}  // namespace wick::test::replicate_layers
