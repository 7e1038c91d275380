// Tour page 3 (docs/tour/03-module.md): a module's three tables, drawn. The model has every
// kind of entry: a shared child, a tied parameter, a None buffer, buffers.
//
//   tour_03_module [output dir]     writes modules.dot there (default: .)
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "every_entry_net.h"

using namespace wick;

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(dir);
  examples::EveryEntryNet net;
  std::printf("%s\n", net.to_string().c_str());
  for (const auto& [name, p] : net.named_parameters()) std::printf("parameter %s\n", name.c_str());
  std::ofstream(dir + "/modules.dot") << nn::to_dot(net);
  std::printf("wrote %s/modules.dot\n", dir.c_str());
  return 0;
}
