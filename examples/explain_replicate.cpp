// explain_replicate: what replicate builds, printed and drawn (docs/tour/04-replicate.md).
//
//   explain_replicate [output dir]
//
// Prints the index-map tables, the broadcast bucket plan and a profile of each phase for the
// model of docs/parallel.md section 1 replicated onto cpu:0 and cpu:1, and writes into the
// output directory (default: the current one):
//   modules.dot             the module tree (nn::to_dot)
//   replicate.dot           the original, the Broadcast fanning out, one cluster per replica
//   data_parallel_step.dot  the backward graph of one DataParallel step of a small MLP
// Render them with Graphviz: dot -Tsvg replicate.dot -o replicate.svg
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "every_entry_net.h"
#include "wick/wick.h"

using namespace wick;

namespace {
void write(const std::filesystem::path& dir, const std::string& name, const std::string& text) {
  std::ofstream out(dir / name, std::ios::binary);
  out << text;
  WICK_CHECK_IO(out.good(), "explain_replicate: cannot write {}", (dir / name).string());
  std::printf("wrote %s\n", (dir / name).string().c_str());
}
}  // namespace

int main(int argc, char** argv) {
  try {
    const std::filesystem::path dir = argc > 1 ? argv[1] : ".";
    std::filesystem::create_directories(dir);
    const std::vector<Device> devices = {Device(DeviceType::CPU, 0), Device(DeviceType::CPU, 1)};

    auto net = std::make_shared<examples::EveryEntryNet>();
    const parallel::ReplicateExplanation ex = parallel::explain_replicate(net, devices);
    std::printf("%s\nProfile of each phase (CPU time of the calling thread; varies from run to run):\n\n%s\n",
                ex.tables.c_str(), ex.profile.c_str());
    write(dir, "modules.dot", nn::to_dot(*net));
    write(dir, "replicate.dot", ex.replicas_dot);

    manual_seed(0);
    auto mlp = examples::small_mlp();
    Tensor x = randn({4, 3}, TensorOptions().requires_grad(true));
    write(dir, "data_parallel_step.dot", parallel::data_parallel_step_dot(mlp, x, devices));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "explain_replicate: %s\n", e.what());
    return 1;
  }
}
