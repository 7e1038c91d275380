// Tour page 7 (docs/tour/07-ddp.md): DistributedDataParallel, one process per device.
//
//   mpirun -np 2 tour_07_ddp [output dir]
//
// Every rank builds a small MLP from its own seed (so the ranks start different), wraps it in
// DistributedDataParallel (which copies rank 0's weights to all) and trains it for 3 steps on
// its share of one synthetic batch of 16 samples, drawn through wick::data's TensorDataset,
// DistributedRandomSampler and make_data_loader. Each rank prints its buckets, and after each
// step its rows, its loss and a checksum of its parameters: the checksums agree on every rank.
// Rank 0 writes ddp_step.dot into the output directory (default: the current one): what the
// first step's backward did on rank 0, and where each bucket's all_reduce was launched.
// Render it with Graphviz: dot -Tsvg ddp_step.dot -o ddp_step.svg
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "ddp_step_log.h"
#include "param_checksum.h"

using namespace wick;

int main(int argc, char** argv) {
  try {
    const std::filesystem::path dir = argc > 1 ? argv[1] : ".";
    auto group = distributed::init_process_group({.timeout = std::chrono::seconds(60)});
    const int rank = group->rank(), world = group->size();

    // The batch: the same 16 samples on every rank, x [16, 3] and y = a fixed function of x.
    // TensorDataset holds one tensor, so each row is [sample index | x | y] and the loop splits the
    // columns.
    manual_seed(0);
    const Tensor x = randn({16, 3});
    const Tensor y = cat({sin(x.narrow(1, 0, 1)), x.narrow(1, 1, 1) * x.narrow(1, 2, 1)}, 1);
    auto loader = data::make_data_loader(
        data::datasets::TensorDataset(cat({arange(16, TensorOptions(kFloat32)).unsqueeze(1), x, y}, 1))
            .map(data::transforms::Stack<data::TensorExample>()),
        data::samplers::DistributedRandomSampler(16, world, rank), data::DataLoaderOptions().batch_size(8));

    // The model, from this rank's own seed: before DDP, the ranks' weights differ.
    manual_seed(1 + rank);
    auto net = nn::Sequential({{"fc1", nn::Linear(3, 8)},
                               {"act1", nn::ReLU()},
                               {"fc2", nn::Linear(8, 8)},
                               {"act2", nn::ReLU()},
                               {"fc3", nn::Linear(8, 2)}});
    std::printf("[rank %d] before DDP:         checksum %016llx\n", rank,
                (unsigned long long)examples::param_checksum(*net));

    // Our hooks go on first, so each logs its parameter before DDP's hook for it runs.
    auto log = std::make_shared<examples::StepLog>();
    const auto named = net->named_parameters();
    std::vector<int64_t> bucket_of(named.size());
    for (size_t i = 0; i < named.size(); ++i)
      named[i].second.register_post_accumulate_grad_hook([log, &bucket_of, i, name = named[i].first](const Tensor&) {
        log->add({examples::StepEvent::GradReady, name, bucket_of[i]});
      });

    // Tiny buckets (64 bytes, then 256) so that this small model gets three: one per layer.
    distributed::DistributedDataParallelOptions options;
    options.first_bucket_bytes = 64;
    options.bucket_cap_mb = 256.0 / (1024 * 1024);
    options.process_group = std::make_shared<examples::RecordingGroup>(group, log);
    log->set_on(true);
    distributed::DistributedDataParallel ddp(net, options);
    log->set_on(false);
    const std::vector<examples::StepEvent> construction = log->take();
    std::printf("[rank %d] after construction: checksum %016llx\n", rank,
                (unsigned long long)examples::param_checksum(*net));

    const auto& buckets = ddp.bucket_indices();
    for (size_t b = 0; b < buckets.size(); ++b) {
      std::string names;
      int64_t bytes = 0;
      for (size_t i : buckets[b]) {
        bucket_of[i] = static_cast<int64_t>(b);
        names += " " + named[i].first;
        bytes += static_cast<int64_t>(named[i].second.nbytes());
      }
      std::printf("[rank %d] bucket %zu (%lld bytes):%s\n", rank, b, (long long)bytes, names.c_str());
    }

    optim::SGD sgd(net->parameters(), optim::SGDOptions(0.1));
    for (size_t step = 0; step < 3; ++step) {
      loader->sampler().set_epoch(step);  // a new split of the 16 samples for every step
      for (auto& batch : *loader) {       // one batch per rank: its 8 rows
        sgd.zero_grad();
        const Tensor out = ddp.forward(batch.data.narrow(1, 1, 3));
        const Tensor loss = nn::F::mse_loss(out, batch.data.narrow(1, 4, 2));
        if (step == 0) {
          examples::log_backward_nodes(loss, log);
          log->set_on(true);
        }
        loss.backward();  // each rank's gradients are averaged over the ranks in here
        log->set_on(false);
        sgd.step();
        std::string rows;
        for (float i : batch.data.narrow(1, 0, 1).contiguous().to_vector<float>()) rows += " " + std::to_string(int(i));
        std::printf("[rank %d] step %zu: rows%s, loss %.6f, checksum %016llx\n", rank, step, rows.c_str(),
                    loss.item<double>(), (unsigned long long)examples::param_checksum(*net));
      }
    }

    const std::vector<examples::StepEvent> first_step = log->take();
    if (rank == 0) {
      for (const auto& e : first_step) {
        std::string line = e.text;
        if (e.kind == examples::StepEvent::GradReady) line += ".grad ready (bucket " + std::to_string(e.bucket) + ")";
        if (e.kind == examples::StepEvent::Launch && e.bucket == -2)  // Note [Bucket rebuild]
          line =
              "  -> end of the first backward: " + line + " of the gradients' arrival order, the buckets rebuilt in it";
        else if (e.kind == examples::StepEvent::Launch)
          line = "  -> bucket " + std::to_string(e.bucket) + " launched: " + line;
        std::printf("[rank 0] step 0: %s\n", line.c_str());
      }
      std::filesystem::create_directories(dir);
      std::ofstream out(dir / "ddp_step.dot", std::ios::binary);
      out << examples::ddp_step_dot(construction, first_step, world);
      WICK_CHECK_IO(out.good(), "tour_07_ddp: cannot write {}", (dir / "ddp_step.dot").string());
      std::printf("wrote %s\n", (dir / "ddp_step.dot").string().c_str());
    }
    distributed::destroy_process_group();
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "tour_07_ddp: %s\n", e.what());
    return 1;
  }
}
