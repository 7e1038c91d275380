// Tour page 11 (docs/tour/11-join.md): uneven inputs, and what a rank does once its data has
// run out.
//
//   mpirun -np 2 tour_11_join [output dir]
//
// Rank r has 2 + 2r batches of its own (rank 0: 2, rank 1: 4). Both train one float64 MLP
// with DistributedDataParallel and a ZeroRedundancyOptimizer (Adam, each rank holding the state
// of its share of the parameters) under one Join, with a third joinable written here, Narrator,
// whose notification carries the batch number and whose hook prints what a joined rank shadows.
// Each rank prints, per batch, how many ranks still train and the norm of its synchronised
// gradient; rank 0, out of data, prints the same norm for each batch it shadows (its .grad gets
// the synchronised gradient too, and its optimizer shard steps with it). At the end every rank
// prints a checksum of its parameters: the same on both. Rank 0 writes join_timeline.dot into the
// output directory (default: the current one): the collectives both ranks ran from the moment
// rank 0 joined, side by side (examples/join_timeline.h).
#include <wick/wick.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include "join_timeline.h"
#include "param_checksum.h"
#include "wick/distributed/distributed.h"

using namespace wick;
namespace dist = wick::distributed;

namespace {

/// The norm of every parameter's .grad together.
double grad_norm(nn::Module& m) {
  double sum = 0;
  for (const Tensor& p : m.parameters())
    if (p.grad().defined()) sum += p.grad().pow(2).sum().item<double>();
  return std::sqrt(sum);
}

/// A joinable of one's own: it notifies the Join at the start of each batch, with the batch's
/// number as its payload, and it runs no collective of its own, so its hook on a joined rank
/// only tells what the ranks still training are doing.
class Narrator : public dist::Joinable {
 public:
  Narrator(dist::ProcessGroup& group, nn::Module& model, std::shared_ptr<examples::StepLog> log)
      : group_(group), model_(model), log_(std::move(log)) {}

  /// On a rank still training: tells the joined ranks which batch follows; returns how many
  /// ranks still train.
  int64_t start_batch(int64_t batch) { return notify_join_context(std::span<const int64_t>(&batch, 1)).active; }

  dist::ProcessGroup& join_process_group() const override { return group_; }
  std::string join_name() const override { return "Narrator"; }
  size_t join_payload_size() const override { return 1; }
  void join_main_hook(const dist::JoinNotification& n) override {
    if (pending_ >= 0) report();         // the previous batch's shadow is over: .grad holds its gradient
    pending_ = n.payload[0] / n.active;  // every active rank is at the same batch
    log_->add({examples::StepEvent::Node, "shadow " + std::to_string(pending_)});
    std::printf(
        "[rank %d] joined: %lld rank(s) still train, at their batch %lld: shadowing DDP's forward and "
        "backward, then ZeRO's step\n",
        group_.rank(), static_cast<long long>(n.active), static_cast<long long>(pending_));
  }
  void join_post_hook(int last_joiner) override {
    if (pending_ >= 0) report();
    log_->add({examples::StepEvent::Node, "end"});
    std::printf("[rank %d] every rank has joined; the model comes from rank %d, the last to join\n", group_.rank(),
                last_joiner);
  }

 private:
  void report() {
    std::printf("[rank %d] batch %lld gradient norm %.12f (shadowed)\n", group_.rank(),
                static_cast<long long>(pending_), grad_norm(model_));
    pending_ = -1;
  }
  dist::ProcessGroup& group_;
  nn::Module& model_;
  std::shared_ptr<examples::StepLog> log_;
  int64_t pending_ = -1;  // the batch being shadowed
};

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::filesystem::path dir = argc > 1 ? argv[1] : ".";
    auto world_group = dist::init_process_group({.timeout = std::chrono::seconds(60)});
    // Every collective of DDP, ZeRO and the Join goes through this group, which logs it.
    auto log = std::make_shared<examples::StepLog>();
    auto group = std::make_shared<examples::RecordingGroup>(world_group, log);
    const int rank = group->rank();
    const int64_t batches = 2 + 2 * rank;
    manual_seed(200 + rank);  // each rank's own rows
    const Tensor x = randn({batches, 8, 4}, kFloat64), y = randn({batches, 8, 2}, kFloat64);

    manual_seed(1);  // the same model on every rank
    auto net = nn::Sequential(nn::Linear(4, 16), nn::Tanh(), nn::Linear(16, 2));
    net->to(kFloat64);
    dist::DistributedDataParallel ddp(net.ptr(), {.process_group = group});
    dist::ZeroRedundancyOptimizer zero(
        net->parameters(), dist::optimizer_factory<optim::Adam>(optim::AdamOptions(0.01)), {.process_group = group});
    Narrator narrator(*group, *net, log);
    {
      // Narrator first: at each batch it notifies before DDP's forward and ZeRO's step do.
      dist::Join join({&narrator, &ddp, &zero});
      for (int64_t b = 0; b < batches; ++b) {
        if (b == 2) log->set_on(true);  // the picture starts where rank 0 runs out
        log->add({examples::StepEvent::Node, "batch " + std::to_string(b)});
        const int64_t active = narrator.start_batch(b);
        zero.zero_grad();
        nn::F::mse_loss(ddp.forward(x[b]), y[b]).backward();
        std::printf("[rank %d] batch %lld gradient norm %.12f (%lld rank(s) training)\n", rank,
                    static_cast<long long>(b), grad_norm(*net), static_cast<long long>(active));
        zero.step();
      }
      std::printf("[rank %d] out of data after %lld batches: join()\n", rank, static_cast<long long>(batches));
      log->set_on(true);
      log->add({examples::StepEvent::Node, "join"});
      join.join();
    }
    log->set_on(false);
    const auto columns = examples::gather_rows(*world_group, examples::join_rows(log->take(), group->size()));
    if (rank == 0) {
      std::vector<std::string> headers;
      for (int r = 0; r < group->size(); ++r)
        headers.push_back("rank " + std::to_string(r) + " (" + std::to_string(2 + 2 * r) + " batches)");
      std::ofstream(dir / "join_timeline.dot") << examples::join_timeline_dot(columns, headers);
    }
    std::printf("[rank %d] checksum %016llx\n", rank, static_cast<unsigned long long>(examples::param_checksum(*net)));
    dist::destroy_process_group();
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "tour_11_join: %s\n", e.what());
    return 1;
  }
}
