// Trains a small CNN on Fashion-MNIST (examples/fashion_mnist_net.h) and reports the test
// accuracy after each epoch. `make demo` builds and runs it; `demo --help` lists the options.
// docs/training.md walks through it: data, model, loop, checkpoints, figures.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "demo_cli.h"
#include "fashion_mnist_net.h"
#include "training_curves.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/config.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/flush_denormal.h"
#include "wick/core/generator.h"
#include "wick/nn/checkpoint.h"
#include "wick/nn/data/data.h"
#include "wick/nn/optim/optim.h"
#include "wick/parallel/data_parallel.h"
#if WICK_WITH_DISTRIBUTED
#include "wick/distributed/distributed.h"
#endif

using namespace wick;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int64_t epochs = 3;
  int64_t batch_size = 64;
  double lr = 2e-3;
  std::string optimizer = "adam";
  std::vector<Device> devices;  // empty: every GPU, else cpu:0,cpu:1
  std::string data = data::kFashionMnistDir;
  std::string checkpoint = "fashion_mnist.ckpt.safetensors";
  bool resume = false;
  uint64_t seed = 1;
  int threads = 0;          // 0: every core
  int64_t train_limit = 0;  // 0: all 60000 training images
  bool keep_denormals = false;
  bool ddp = false;      // DistributedDataParallel, one process per rank (mpirun)
  double timeout = 600;  // seconds a collective may take before the job is aborted
  std::string curves = "fashion_mnist.curves";
  int64_t log_every = 50;
};

// Builds the command line; returns the exit code when the program should stop.
std::optional<int> parse(Options& o, int argc, char** argv) {
  CLI::App app("Trains a small CNN (conv-pool-relu x2, linear-relu-linear) on Fashion-MNIST with wick.", "demo");
  demo::set_up(app);
  std::string devices;
  app.add_option("--epochs", o.epochs, "epochs to train")->check(CLI::PositiveNumber);
  app.add_option("--batch-size", o.batch_size, "images per step")->check(CLI::PositiveNumber);
  app.add_option("--lr", o.lr, "learning rate (use ~0.05 for sgd); cosine-annealed to 0")->check(CLI::PositiveNumber);
  app.add_option("--optimizer", o.optimizer, "adam, or sgd (momentum 0.9, nesterov)")
      ->check(CLI::IsMember({"adam", "sgd"}));
  app.add_option("--devices", devices,
                 "comma-separated devices, e.g. cpu:0 or cpu:0,cpu:1 (default: every GPU, else cpu:0,cpu:1); with "
                 "more than one, each batch is split across them with wick::parallel::DataParallel")
      ->check(demo::device_list_validator());
  app.add_option("--data", o.data,
                 "directory with {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz (from `sudo apt-get install "
                 "dataset-fashion-mnist`)");
  app.add_option("--checkpoint", o.checkpoint, "checkpoint written atomically after every epoch");
  app.add_flag("--resume", o.resume, "continue from --checkpoint (model, optimizer, epoch and curves)");
  app.add_option("--curves", o.curves,
                 "the loss and accuracy curves go to PREFIX.csv and PREFIX.gp, and PREFIX.png when gnuplot is "
                 "installed");
  app.add_option("--seed", o.seed, "seed for initialisation and shuffling");
  app.add_option("--threads", o.threads,
                 "intra-op threads per device, for GEMMs and wick's kernels (0: cores / CPU devices, at least 1)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--train-limit", o.train_limit, "train on the first N images only, for quick runs (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--log-every", o.log_every, "steps per train-loss point of the curves")->check(CLI::PositiveNumber);
  app.add_flag("--keep-denormals", o.keep_denormals,
               "compute with denormal floats instead of flushing them to zero (slower once Adam's moments of "
               "unused weights decay that far; see docs/training.md)");
  app.add_flag("--ddp", o.ddp,
               "train with wick::distributed::DistributedDataParallel, one process per rank: mpirun -np 2 demo "
               "--ddp (`make demo-ddp`); each batch is split across the ranks, rank 0 prints and saves the "
               "checkpoints, every rank loads on --resume");
  app.add_option("--timeout", o.timeout,
                 "with --ddp: seconds a collective may wait for a stalled or dead rank before the job is aborted")
      ->check(CLI::PositiveNumber);
  if (auto code = demo::parse(app, argc, argv)) return code;
  if (!devices.empty()) o.devices = demo::parse_devices(devices);
  return std::nullopt;
}

// "[#########.........]  412/938  loss 0.4123  2310 img/s", redrawn in place.
void progress(int64_t epoch, int64_t epochs, int64_t done, int64_t total, double loss, double ips) {
  constexpr int kWidth = 30;
  const int fill = static_cast<int>(kWidth * done / std::max<int64_t>(total, 1));
  std::printf("\repoch %lld/%lld [%.*s%.*s] %4lld/%lld  loss %.4f  %6.0f img/s ", static_cast<long long>(epoch),
              static_cast<long long>(epochs), fill, "##############################", kWidth - fill,
              "..............................", static_cast<long long>(done), static_cast<long long>(total), loss, ips);
  std::fflush(stdout);
}

// Adds a few numbers over every rank of a DDP job, in place (nothing to do in one process).
using SumOverRanks = std::function<void(std::vector<double>&)>;

// Test accuracy and mean loss, in batches of 1000, without gradients. In a DDP job each rank
// evaluates its share of the test set and the counts are summed over the ranks.
std::pair<double, double> evaluate(nn::Module& model, const data::Split& test, Device device, int rank, int world,
                                   const SumOverRanks& sum_over_ranks) {
  NoGradGuard no_grad;
  model.eval();
  const int64_t n_all = test.labels.size(0), lo = n_all * rank / world, hi = n_all * (rank + 1) / world;
  data::BatchLoader loader(test.images.narrow(0, lo, hi - lo), test.labels.narrow(0, lo, hi - lo),
                           {.batch_size = 1000});
  int64_t correct = 0;
  double loss = 0;
  for (const auto& b : loader.epoch(0)) {
    Tensor x = b.inputs.to(device), y = b.targets.to(device);
    Tensor logits = model.forward_tensor(x);
    loss += nn::F::cross_entropy(logits, y, {}, nn::Reduction::Sum).item<double>();
    correct += logits.argmax(1).eq(y).sum().item<int64_t>();
  }
  model.train();
  std::vector<double> totals = {static_cast<double>(correct), loss};
  sum_over_ranks(totals);
  const double n = static_cast<double>(n_all);
  return {totals[0] / n, totals[1] / n};
}

int run(Options o) {
  // A DDP job: one process per rank with its share of every batch. The backend follows the
  // device (Note [One device per process]): on a GPU machine nccl, each process on its own GPU
  // (cuda:(local rank % GPUs)); otherwise mpi, each process on cpu:0. --devices cpu:0 keeps a GPU
  // machine on the CPU.
  int rank = 0, world = 1, local_ranks = 1;
  SumOverRanks sum_over_ranks = [](std::vector<double>&) {};
#if WICK_WITH_DISTRIBUTED
  std::shared_ptr<distributed::ProcessGroup> group;
  if (o.ddp) {
    distributed::InitOptions init;
    init.timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout * 1000));
    const bool want_gpu = o.devices.empty() ? distributed::nccl_unavailable_reason().empty() : o.devices[0].is_cuda();
    init.backend = distributed::default_backend(want_gpu ? Device(DeviceType::CUDA, 0) : kCPU);
    group = distributed::init_process_group(init);
    rank = group->rank();
    world = group->size();
    if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) local_ranks = std::max(1, std::atoi(local));
    o.devices = {group->device()};
    sum_over_ranks = [group](std::vector<double>& v) {
      Tensor t = from_blob(v.data(), {static_cast<int64_t>(v.size())}, kFloat64).to(group->device());
      group->all_reduce(t)->wait();
      v = t.to(kCPU).to_vector<double>();
    };
  }
#else
  if (o.ddp) {
    std::fprintf(stderr,
                 "demo: --ddp needs wick built with MPI (apt-get install openmpi-bin libopenmpi-dev, then rebuild)\n");
    return 1;
  }
#endif
  const bool lead = rank == 0;  // prints and saves checkpoints
  if (o.devices.empty()) {
    o.devices = parallel::default_device_ids();
    if (o.devices.empty()) o.devices = {Device("cpu:0"), Device("cpu:1")};
  }
  // Each CPU device's replica and backward run on its own thread (Note [Device threads]), so the
  // cores are shared out between the devices rather than all given to one device (Note [CPU
  // thread budgets]).
  int64_t cpu_devices = 0;
  for (const auto& d : o.devices) cpu_devices += d.is_cpu();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = o.threads > 0
                          ? o.threads
                          : std::max(1, cores / (static_cast<int>(std::max<int64_t>(cpu_devices, 1)) * local_ranks));
  for (const auto& d : o.devices)
    if (d.is_cpu()) set_intra_op_threads(d, threads);
  // Tasks queued to the device threads carry this mode with them (Note [Denormals]).
  const bool flushing = !o.keep_denormals && set_flush_denormal(true);
  const Device device = o.devices.front();

  data::Split train, test;
  try {
    train = data::load_mnist_split(o.data, "train");
    test = data::load_mnist_split(o.data, "t10k");
  } catch (const IOError& e) {  // missing or unreadable: the message says how to install the files
    std::fprintf(stderr, "demo: cannot load Fashion-MNIST: %s\n", e.what());
    return 1;
  } catch (const FormatError& e) {  // damaged files
    std::fprintf(stderr, "demo: cannot load Fashion-MNIST: %s\n", e.what());
    return 1;
  }
  if (o.train_limit > 0 && o.train_limit < train.images.size(0)) {
    train.images = train.images.narrow(0, 0, o.train_limit);
    train.labels = train.labels.narrow(0, 0, o.train_limit);
  }

  manual_seed(o.seed);
  auto net = fashion::make_net();
  net->to(device);
  // What forward runs through: the network itself, or DataParallel over the devices asked for.
  // The optimizer and the checkpoints always use the original network (replicas' parameters are
  // not leaves; docs/training.md).
  std::shared_ptr<nn::Module> model = net;
  if (o.devices.size() > 1) model = std::make_shared<parallel::DataParallel>(net, o.devices);
  // (With --ddp the wrapper comes after a resume, below: it copies rank 0's parameters.)
  std::unique_ptr<optim::Optimizer> opt;
  if (o.optimizer == "adam")
    opt = std::make_unique<optim::Adam>(net->parameters(), optim::AdamOptions(o.lr));
  else
    opt = std::make_unique<optim::SGD>(net->parameters(), optim::SGDOptions(o.lr).momentum(0.9).nesterov(true));
  optim::CosineAnnealingLR schedule(*opt, o.epochs);

  demo::TrainingCurves curves("Fashion-MNIST demo: cross-entropy and test accuracy", "step");
  data::BatchLoader loader(train.images, train.labels, {.batch_size = o.batch_size, .shuffle = true, .seed = o.seed});
  const auto steps_per_epoch = static_cast<int64_t>(loader.size());
  int64_t start_epoch = 0;
  if (o.resume) {
    if (!std::filesystem::exists(o.checkpoint)) {
      std::fprintf(stderr, "demo: --resume: no checkpoint at %s\n", o.checkpoint.c_str());
      return 1;
    }
    try {
      const nn::CheckpointInfo info = nn::load_checkpoint(o.checkpoint, *net, *opt);
      start_epoch = info.epoch;
      if (auto c = info.metadata.find("demo.curves"); c != info.metadata.end()) curves.from_csv(c->second);
      curves.truncate_after(start_epoch * steps_per_epoch);
    } catch (const Error& e) {
      std::fprintf(stderr, "demo: cannot resume: %s\n", e.what());
      return 1;
    }
    schedule.resume(start_epoch, {o.lr});  // keeps the lr load_checkpoint restored (bit for bit)
    if (lead)
      std::printf("resumed from %s after epoch %lld\n", o.checkpoint.c_str(), static_cast<long long>(start_epoch));
  }
#if WICK_WITH_DISTRIBUTED
  if (group) model = std::make_shared<distributed::DistributedDataParallel>(net);
#endif

  size_t nparams = 0;
  for (const auto& p : net->parameters()) nparams += static_cast<size_t>(p.numel());
  if (lead)
    std::printf("Fashion-MNIST: %lld training and %lld test images from %s\n",
                static_cast<long long>(train.images.size(0)), static_cast<long long>(test.images.size(0)),
                o.data.c_str());
  std::string devices;
  for (const auto& d : o.devices) devices += (devices.empty() ? "" : ",") + d.str();
#if WICK_WITH_DISTRIBUTED
  if (group)
    devices = group->backend_name() == "nccl"
                  ? fmt::format("one GPU per process ({} on rank 0) of {} processes, nccl", device.str(), world)
                  : fmt::format("cpu:0 of each of {} processes, mpi", world);
#endif
  if (lead)
    std::printf("model: %zu parameters, %s lr %g (cosine over %lld epochs), batch %lld, %d thread(s), %s %s%s\n",
                nparams, o.optimizer.c_str(), o.lr, static_cast<long long>(o.epochs),
                static_cast<long long>(o.batch_size), threads,
                o.ddp                  ? "DistributedDataParallel over"
                : o.devices.size() > 1 ? "DataParallel over"
                                       : "device",
                devices.c_str(), flushing ? ", denormals flushed to zero" : "");
  if (lead && start_epoch >= o.epochs)
    std::printf("nothing to do: the checkpoint already finished %lld epochs\n", static_cast<long long>(start_epoch));

  const bool tty = ::isatty(STDOUT_FILENO);
  const auto run_start = Clock::now();
  double accuracy = 0;
  for (int64_t epoch = start_epoch; epoch < o.epochs; ++epoch) {
    model->train();
    const auto t0 = Clock::now();
    auto last_draw = t0;
    double loss_sum = 0, window_sum = 0;
    int64_t seen = 0, window_n = 0;
    for (const auto& b : loader.epoch(epoch)) {
      Tensor x = b.inputs, y = b.targets;
      const int64_t rows = x.size(0);
      if (world > 1) {  // this rank's share; every rank sees the same batch, so all skip alike
        if (rows < world) continue;
        const int64_t lo = rows * rank / world, hi = rows * (rank + 1) / world;
        x = x.narrow(0, lo, hi - lo);
        y = y.narrow(0, lo, hi - lo);
      }
      x = x.to(device);
      y = y.to(device);
      opt->zero_grad();
      // sum / rows * world: DDP averages over the ranks, which makes it the whole batch's mean
      // even when the shares differ by a row.
      Tensor loss = world > 1 ? nn::F::cross_entropy(model->forward_tensor(x), y, {}, nn::Reduction::Sum)
                                    .mul(static_cast<double>(world) / static_cast<double>(rows))
                              : nn::F::cross_entropy(model->forward_tensor(x), y);
      loss.backward();
      opt->step();
      const double l = loss.item<double>();
      loss_sum += l * static_cast<double>(rows) / world;  // this rank's sum
      seen += rows;
      window_sum += l;  // in a DDP job: the lead rank's share
      ++window_n;
      const int64_t step = epoch * steps_per_epoch + static_cast<int64_t>(b.index) + 1;
      if (step % o.log_every == 0 || b.index + 1 == loader.size()) {
        curves.add("train loss", step, window_sum / static_cast<double>(window_n));
        window_sum = 0;
        window_n = 0;
      }
      const auto now = Clock::now();
      const bool last = b.index + 1 == loader.size();
      if (lead && (last || now - last_draw > std::chrono::milliseconds(tty ? 200 : 10000))) {
        const double secs = std::chrono::duration<double>(now - t0).count();
        progress(epoch + 1, o.epochs, b.index + 1, loader.size(), loss_sum * world / static_cast<double>(seen),
                 static_cast<double>(seen) / secs);
        if (!tty) std::printf("\n");
        last_draw = now;
      }
    }
    const double train_secs = std::chrono::duration<double>(Clock::now() - t0).count();
    schedule.step();
    auto [acc, test_loss] = evaluate(o.ddp ? *net : *model, test, device, rank, world, sum_over_ranks);
    accuracy = acc;
    std::vector<double> train_loss = {loss_sum};
    sum_over_ranks(train_loss);
    loss_sum = train_loss[0];
    if (!lead) continue;
    if (tty) std::printf("\n");
    std::printf("epoch %lld/%lld: train loss %.4f, test loss %.4f, test accuracy %.2f%%, %.1f s (%.0f img/s)\n",
                static_cast<long long>(epoch + 1), static_cast<long long>(o.epochs),
                loss_sum / static_cast<double>(seen), test_loss, 100 * acc, train_secs,
                static_cast<double>(seen) / train_secs);
    curves.add("test loss", (epoch + 1) * steps_per_epoch, test_loss);
    curves.add("test accuracy", (epoch + 1) * steps_per_epoch, acc);
    nn::save_checkpoint(o.checkpoint, *net, *opt, epoch + 1,
                        {{"demo.curves", curves.to_csv()},
                         {"demo.optimizer", o.optimizer},
                         {"demo.lr", std::to_string(o.lr)},
                         {"demo.batch_size", std::to_string(o.batch_size)},
                         {"demo.seed", std::to_string(o.seed)}});
    curves.write(o.curves);
    std::printf("checkpoint saved to %s\n", o.checkpoint.c_str());
    std::fflush(stdout);
  }
  if (lead && start_epoch < o.epochs)
    std::printf("done: test accuracy %.2f%% after %lld epochs, %.1f s total\n", 100 * accuracy,
                static_cast<long long>(o.epochs), std::chrono::duration<double>(Clock::now() - run_start).count());
  if (lead && start_epoch < o.epochs) std::printf("%s\n", curves.plot(o.curves).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (auto code = parse(o, argc, argv)) return *code;
  try {
    return run(o);
  } catch (const Error& e) {
    std::fprintf(stderr, "\ndemo: %s\n", e.what());
    return 1;
  }
}
