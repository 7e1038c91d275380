// A character-level GPT (examples/char_gpt_model.h) trained on the text of Debian's `fortunes`
// package: next-character prediction with AdamW, a validation loss per epoch against the unigram
// baseline, atomic checkpoints with --resume, and --sample N to write text from a checkpoint.
// `make demo-gpt` builds and runs it; `char_gpt --help` lists the options. docs/training.md
// ("The language-model demo") walks through it.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "char_gpt_model.h"
#include "char_gpt_sample.h"
#include "char_gpt_text.h"
#include "demo_cli.h"
#include "training_curves.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/flush_denormal.h"
#include "wick/core/generator.h"
#include "wick/nn/checkpoint.h"
#include "wick/nn/optim/optim.h"
#include "wick/nn/safetensors.h"
#include "wick/parallel/data_parallel.h"

using namespace wick;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string data = char_gpt::kFortunesDir;
  int64_t epochs = 10;
  int64_t steps_per_epoch = 100;
  int64_t batch_size = 64;
  char_gpt::Config model;  // vocab comes from the data
  double lr = 2e-3;
  double weight_decay = 0.1;
  std::string devices;  // empty: every GPU, else cpu:0,cpu:1
  std::string checkpoint = "char_gpt.ckpt.safetensors";
  std::string curves = "char_gpt.curves";
  bool resume = false;
  int64_t stop_after = 0;  // 0: run to --epochs
  uint64_t seed = 1;
  int threads = 0;
  int64_t log_every = 20;
  int64_t eval_windows = 128;
  int64_t sample = 0;
  int64_t sample_after = 300;
  double temperature = 0.8;
  int64_t top_k = 0;
  std::string prompt;
};

// Builds the command line; returns the exit code when the program should stop.
std::optional<int> parse(Options& o, int argc, char** argv) {
  CLI::App app(
      "Trains a small GPT (token + position embeddings, pre-norm transformer blocks with causal "
      "self-attention, a linear head) to predict the next character of the fortunes in Debian's "
      "`fortunes` package, with wick. With --sample N it writes N characters from a checkpoint instead.",
      "char_gpt");
  demo::set_up(app);
  app.add_option("--data", o.data,
                 "a text file, or a directory of them (fortunes separated by lines holding %); in a directory "
                 "*.dat, *.u8, links and files that are not text are skipped (install the default with "
                 "`sudo apt-get install fortunes`)");
  app.add_option("--epochs", o.epochs, "epochs to train; the validation loss is measured after each")
      ->check(CLI::PositiveNumber);
  app.add_option("--steps-per-epoch", o.steps_per_epoch, "training steps per epoch")->check(CLI::PositiveNumber);
  app.add_option("--batch-size", o.batch_size, "windows per step")->check(CLI::PositiveNumber);
  app.add_option("--block-size", o.model.block_size, "characters per window (the longest context)")
      ->check(CLI::PositiveNumber);
  app.add_option("--d-model", o.model.d_model, "embedding width")->check(CLI::PositiveNumber);
  app.add_option("--heads", o.model.heads, "attention heads per block (must divide --d-model)")
      ->check(CLI::PositiveNumber);
  app.add_option("--layers", o.model.layers, "transformer blocks")->check(CLI::PositiveNumber);
  app.add_option("--lr", o.lr, "AdamW's peak learning rate: linear warm-up, then cosine down to a tenth")
      ->check(CLI::PositiveNumber);
  app.add_option("--weight-decay", o.weight_decay, "AdamW's weight decay on the weight matrices")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--devices", o.devices,
                 "comma-separated devices, e.g. cpu:0 or cpu:0,cpu:1 (default: every GPU, else cpu:0,cpu:1); with "
                 "more than one, each batch is split across them with wick::parallel::DataParallel")
      ->check(demo::device_list_validator());
  app.add_option("--checkpoint", o.checkpoint, "checkpoint written atomically after every epoch");
  app.add_flag("--resume", o.resume, "continue from --checkpoint (model, optimizer, step and curves)");
  app.add_option("--stop-after", o.stop_after,
                 "stop after N epochs of this run, as if interrupted (the schedule still spans --epochs); "
                 "--resume continues (0: run to --epochs)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--curves", o.curves,
                 "the loss curves go to PREFIX.csv and PREFIX.gp, and PREFIX.png when gnuplot is installed");
  app.add_option("--seed", o.seed, "seed for initialisation, training windows and sampling");
  app.add_option("--threads", o.threads,
                 "intra-op threads per device, for GEMMs and wick's kernels (0: cores / CPU devices)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--log-every", o.log_every, "steps per printed train-loss window")->check(CLI::PositiveNumber);
  app.add_option("--eval-windows", o.eval_windows, "validation windows (evenly spaced over the validation text)")
      ->check(CLI::PositiveNumber);
  app.add_option("--sample", o.sample, "write N characters from --checkpoint and stop (no training)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--sample-after", o.sample_after, "characters written after training (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--temperature", o.temperature, "sampling temperature (lower: safer, higher: wilder)")
      ->check(CLI::PositiveNumber);
  app.add_option("--top-k", o.top_k, "sample among the k likeliest characters only (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--prompt", o.prompt, "text the sample starts from (default: a new fortune)");
  if (auto code = demo::parse(app, argc, argv)) return code;
  if (o.model.d_model % o.model.heads != 0) {
    std::fprintf(stderr, "--heads: %lld does not divide --d-model %lld\nRun with --help for more information.\n",
                 static_cast<long long>(o.model.heads), static_cast<long long>(o.model.d_model));
    return 2;
  }
  return std::nullopt;
}

// The checkpoint's metadata entry `key` as an integer; wick::FormatError naming the file when
// it is missing or not a positive integer.
int64_t metadata_int(const std::map<std::string, std::string>& m, const std::string& key, const std::string& path) {
  auto it = m.find(key);
  if (it == m.end()) throw FormatError(fmt::format("{}: not a char_gpt checkpoint (no '{}' entry)", path, key));
  const std::string& v = it->second;
  if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string::npos || std::stoll(v) < 1)
    throw FormatError(fmt::format("{}: '{}' is '{}', not a positive integer", path, key, v));
  return std::stoll(v);
}

// What a checkpoint says about the model: its shape and vocabulary.
struct SavedModel {
  char_gpt::Config config;
  char_gpt::Vocabulary vocab;
  std::map<std::string, std::string> metadata;
};

SavedModel read_saved_model(const std::string& path) {
  if (!std::filesystem::exists(path)) throw IOError(fmt::format("no checkpoint at {} (train first)", path));
  SavedModel s;
  const nn::SafetensorsData data = nn::load_safetensors(path);
  s.metadata = data.metadata;
  auto vocab = s.metadata.find("gpt.vocab");
  if (vocab == s.metadata.end()) throw FormatError(fmt::format("{}: not a char_gpt checkpoint (no vocabulary)", path));
  s.vocab = char_gpt::Vocabulary::parse(vocab->second);
  s.config.vocab = s.vocab.size();
  s.config.block_size = metadata_int(s.metadata, "gpt.block_size", path);
  s.config.d_model = metadata_int(s.metadata, "gpt.d_model", path);
  s.config.heads = metadata_int(s.metadata, "gpt.heads", path);
  s.config.layers = metadata_int(s.metadata, "gpt.layers", path);
  if (s.config.d_model % s.config.heads != 0 || s.config.d_model > 65536 || s.config.layers > 1024 ||
      s.config.block_size > (1 << 20))
    throw FormatError(fmt::format("{}: the model's shape in the metadata does not fit together", path));
  // The metadata is checked against the tensors before a model is built from it: a few hostile
  // bytes of metadata must not make the program build a model of terabytes.
  int64_t held = 0;  // the model's values: a training checkpoint also holds "optimizer." entries
  for (const auto& [name, t] : data.tensors)
    if (name.rfind("optimizer.", 0) != 0) held += t.numel();  // each within the file's size
  const int64_t needed = char_gpt::parameter_count(s.config);
  if (needed != held)
    throw FormatError(fmt::format("{}: the metadata describes a model of {} parameter values, but the file holds {}",
                                  path, needed, held));
  return s;
}

std::map<std::string, std::string> config_metadata(const char_gpt::Config& c, const char_gpt::Vocabulary& v) {
  return {{"gpt.vocab", v.serialize()},
          {"gpt.block_size", std::to_string(c.block_size)},
          {"gpt.d_model", std::to_string(c.d_model)},
          {"gpt.heads", std::to_string(c.heads)},
          {"gpt.layers", std::to_string(c.layers)}};
}

// Linear warm-up over the first 5% of the steps (at least one), then a cosine from lr down to lr / 10.
double lr_at(int64_t step, int64_t total, double lr) {
  const int64_t warmup = std::max<int64_t>(1, total / 20);
  if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double t = static_cast<double>(step - warmup) / static_cast<double>(std::max<int64_t>(1, total - warmup));
  return lr * (0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI * std::min(1.0, t))));
}

// "epoch 2/6 [#####.....]  40/100  loss 2.1234  5400 char/s", redrawn in place.
void progress(int64_t epoch, int64_t epochs, int64_t done, int64_t total, double loss, double cps) {
  constexpr int kWidth = 30;
  const int fill = static_cast<int>(kWidth * done / std::max<int64_t>(total, 1));
  std::printf("\repoch %lld/%lld [%.*s%.*s] %4lld/%lld  loss %.4f  %6.0f char/s ", static_cast<long long>(epoch),
              static_cast<long long>(epochs), fill, "##############################", kWidth - fill,
              "..............................", static_cast<long long>(done), static_cast<long long>(total), loss, cps);
  std::fflush(stdout);
}

// Mean cross-entropy (nats per character) over the validation windows, without gradients.
double evaluate(nn::Module& model, const std::vector<int64_t>& tokens, const std::vector<int64_t>& starts,
                int64_t block, int64_t batch, Device device) {
  NoGradGuard no_grad;
  model.eval();
  double sum = 0;
  for (size_t i = 0; i < starts.size(); i += static_cast<size_t>(batch)) {
    const std::vector<int64_t> part(
        starts.begin() + static_cast<std::ptrdiff_t>(i),
        starts.begin() + static_cast<std::ptrdiff_t>(std::min(starts.size(), i + static_cast<size_t>(batch))));
    char_gpt::Batch b = char_gpt::windows_at(tokens, part, block);
    Tensor logits = model.forward_tensor(b.inputs.to(device));
    sum += nn::F::cross_entropy(logits.flatten(0, 1), b.targets.to(device).flatten(), {}, nn::Reduction::Sum)
               .item<double>();
  }
  model.train();
  return sum / static_cast<double>(starts.size() * static_cast<size_t>(block));
}

int sample_only(const Options& o) {
  const SavedModel saved = read_saved_model(o.checkpoint);
  auto model = char_gpt::Gpt(saved.config);
  nn::load(*model, o.checkpoint);
  manual_seed(o.seed);
  const std::string text =
      char_gpt::sample(*model, saved.vocab, o.prompt, o.sample, {.temperature = o.temperature, .top_k = o.top_k});
  std::printf("%s%s\n", o.prompt.c_str(), text.c_str());
  return 0;
}

int train(Options o) {
  std::vector<Device> devices = o.devices.empty() ? parallel::default_device_ids() : demo::parse_devices(o.devices);
  if (devices.empty()) devices = {Device("cpu:0"), Device("cpu:1")};
  int64_t cpu_devices = 0;
  for (const auto& d : devices) cpu_devices += d.is_cpu();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads =
      o.threads > 0 ? o.threads : std::max(1, cores / static_cast<int>(std::max<int64_t>(cpu_devices, 1)));
  for (const auto& d : devices)
    if (d.is_cpu()) set_intra_op_threads(d, threads);
  const bool flushing = set_flush_denormal(true);  // Note [Denormals]
  const Device device = devices.front();

  // ---- the text ----
  const char_gpt::Corpus corpus = char_gpt::load_corpus(o.data);
  for (const auto& s : corpus.skipped) std::fprintf(stderr, "char_gpt: skipped %s\n", s.c_str());
  const char_gpt::Split split = char_gpt::split_train_validation(corpus.fortunes);
  char_gpt::Vocabulary vocab = char_gpt::Vocabulary::of(split.train);
  const std::vector<int64_t> train_tokens = vocab.encode(split.train);
  size_t dropped = 0;
  const std::vector<int64_t> val_tokens = vocab.encode(split.validation, &dropped);
  const int64_t block = o.model.block_size;
  if (static_cast<int64_t>(train_tokens.size()) <= block || static_cast<int64_t>(val_tokens.size()) <= block)
    throw ValueError(
        fmt::format("{}: {} training and {} validation characters (every tenth fortune) are too few for windows of {} "
                    "(--block-size); give more text or a smaller --block-size",
                    o.data, train_tokens.size(), val_tokens.size(), block));
  const double baseline = char_gpt::unigram_baseline(train_tokens, val_tokens, vocab.size());
  std::printf("text: %zu fortunes from %zu file(s) in %s (%zu skipped): %zu training and %zu validation characters\n",
              corpus.fortunes.size(), corpus.files.size(), o.data.c_str(), corpus.skipped.size(), train_tokens.size(),
              val_tokens.size());
  std::printf(
      "vocabulary: %lld characters%s; unigram baseline (training frequencies on the validation text): %.4f "
      "nats/char\n",
      static_cast<long long>(vocab.size()),
      dropped ? fmt::format(" ({} validation characters outside it dropped)", dropped).c_str() : "", baseline);

  // ---- the model, the optimizer, and where a checkpoint left them ----
  char_gpt::Config config = o.model;
  config.vocab = vocab.size();
  std::map<std::string, std::string> saved_metadata;
  if (o.resume) {
    SavedModel saved = read_saved_model(o.checkpoint);
    if (saved.vocab.chars != vocab.chars)
      throw StateError(
          fmt::format("--resume: {} was trained on text with another vocabulary than {}'s; train anew "
                      "without --resume or point --data at the same text",
                      o.checkpoint, o.data));
    config = saved.config;  // the checkpoint's shape wins over --d-model, --layers, ...
    saved_metadata = std::move(saved.metadata);
  }
  manual_seed(o.seed);
  auto net = char_gpt::Gpt(config);
  net->to(device);
  std::shared_ptr<nn::Module> model = net.ptr();
  if (devices.size() > 1) model = std::make_shared<parallel::DataParallel>(net.ptr(), devices);
  // Weight decay on the matrices only (GPT-2's rule): not on biases and LayerNorm gains, the
  // parameters with one dimension.
  std::vector<Tensor> decay, no_decay;
  for (const auto& p : net->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  auto adamw = [&](double weight_decay) {
    auto options = std::make_unique<optim::AdamWOptions>(o.lr);
    options->betas({0.9, 0.99}).weight_decay(weight_decay);
    return options;
  };
  std::vector<optim::ParamGroup> groups;
  groups.emplace_back(decay, adamw(o.weight_decay));
  groups.emplace_back(no_decay, adamw(0));
  optim::AdamW opt(std::move(groups), *adamw(o.weight_decay));

  demo::TrainingCurves curves("char_gpt: next-character cross-entropy (nats)", "step");
  const int64_t total_steps = o.epochs * o.steps_per_epoch;
  int64_t start_epoch = 0;
  if (o.resume) {
    start_epoch = nn::load_checkpoint(o.checkpoint, *net, opt).epoch;
    if (auto c = saved_metadata.find("demo.curves"); c != saved_metadata.end()) curves.from_csv(c->second);
    curves.truncate_after(start_epoch * o.steps_per_epoch);
    std::printf("resumed from %s after epoch %lld\n", o.checkpoint.c_str(), static_cast<long long>(start_epoch));
  }

  size_t nparams = 0;
  for (const auto& p : net->parameters()) nparams += static_cast<size_t>(p.numel());
  std::string device_list;
  for (const auto& d : devices) device_list += (device_list.empty() ? "" : ",") + d.str();
  std::printf(
      "model: %zu parameters (d_model %lld, %lld heads, %lld layers, block %lld), AdamW lr %g, batch %lld, %lld "
      "steps/epoch, %d thread(s), %s %s%s\n",
      nparams, static_cast<long long>(config.d_model), static_cast<long long>(config.heads),
      static_cast<long long>(config.layers), static_cast<long long>(config.block_size), o.lr,
      static_cast<long long>(o.batch_size), static_cast<long long>(o.steps_per_epoch), threads,
      devices.size() > 1 ? "DataParallel over" : "device", device_list.c_str(),
      flushing ? ", denormals flushed to zero" : "");
  if (start_epoch >= o.epochs)
    std::printf("nothing to do: the checkpoint already finished %lld epochs\n", static_cast<long long>(start_epoch));

  // ---- training ----
  const std::vector<int64_t> val_starts =
      char_gpt::validation_starts(val_tokens.size(), config.block_size, o.eval_windows);
  const bool tty = ::isatty(STDOUT_FILENO);
  const auto run_start = Clock::now();
  double val_loss = 0;
  const int64_t end_epoch = o.stop_after > 0 ? std::min(o.epochs, start_epoch + o.stop_after) : o.epochs;
  for (int64_t epoch = start_epoch; epoch < end_epoch; ++epoch) {
    model->train();
    const auto t0 = Clock::now();
    double window_sum = 0, epoch_sum = 0;
    int64_t window_n = 0;
    for (int64_t i = 0; i < o.steps_per_epoch; ++i) {
      const int64_t step = epoch * o.steps_per_epoch + i;
      for (auto& g : opt.param_groups()) g.options().set_lr(lr_at(step, total_steps, o.lr));
      char_gpt::Batch b = char_gpt::random_windows(train_tokens, o.batch_size, config.block_size, o.seed, step);
      opt.zero_grad();
      Tensor logits = model->forward_tensor(b.inputs.to(device));
      Tensor loss = nn::F::cross_entropy(logits.flatten(0, 1), b.targets.to(device).flatten());
      loss.backward();
      opt.step();
      const double l = loss.item<double>();
      window_sum += l;
      epoch_sum += l;
      ++window_n;
      const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
      const double cps = static_cast<double>((i + 1) * o.batch_size * config.block_size) / secs;
      if ((step + 1) % o.log_every == 0 || i + 1 == o.steps_per_epoch) {
        curves.add("train loss", step + 1, window_sum / static_cast<double>(window_n));
        std::printf("%sstep %lld: train loss %.4f (mean of %lld steps), lr %.2e, %.0f char/s\n", tty ? "\r" : "",
                    static_cast<long long>(step + 1), window_sum / static_cast<double>(window_n),
                    static_cast<long long>(window_n), lr_at(step, total_steps, o.lr), cps);
        std::fflush(stdout);
        window_sum = 0;
        window_n = 0;
      }
      if (tty) progress(epoch + 1, o.epochs, i + 1, o.steps_per_epoch, epoch_sum / static_cast<double>(i + 1), cps);
    }
    const double train_secs = std::chrono::duration<double>(Clock::now() - t0).count();
    val_loss = evaluate(*model, val_tokens, val_starts, config.block_size, o.batch_size, device);
    const int64_t steps_done = (epoch + 1) * o.steps_per_epoch;
    curves.add("validation loss", steps_done, val_loss);
    if (tty) std::printf("\n");
    std::printf("epoch %lld/%lld: train loss %.4f, validation loss %.4f nats/char (unigram baseline %.4f), %.1f s\n",
                static_cast<long long>(epoch + 1), static_cast<long long>(o.epochs),
                epoch_sum / static_cast<double>(o.steps_per_epoch), val_loss, baseline, train_secs);
    auto metadata = config_metadata(config, vocab);
    metadata["demo.seed"] = std::to_string(o.seed);
    metadata["demo.curves"] = curves.to_csv();
    nn::save_checkpoint(o.checkpoint, *net, opt, epoch + 1, metadata);
    curves.write(o.curves);
    std::printf("checkpoint saved to %s\n", o.checkpoint.c_str());
    std::fflush(stdout);
  }
  if (end_epoch < o.epochs)
    std::printf("stopped after epoch %lld of %lld (--stop-after); --resume continues\n",
                static_cast<long long>(end_epoch), static_cast<long long>(o.epochs));
  if (start_epoch < end_epoch) {
    std::printf("%s: validation loss %.4f nats/char (unigram baseline %.4f) after %lld steps, %.1f s total\n",
                end_epoch < o.epochs ? "so far" : "done", val_loss, baseline,
                static_cast<long long>(end_epoch * o.steps_per_epoch),
                std::chrono::duration<double>(Clock::now() - run_start).count());
    std::printf("%s\n", curves.plot(o.curves).c_str());
  }
  if (o.sample_after > 0) {
    manual_seed(o.seed);
    std::printf(
        "sample (temperature %g%s):\n%s\n", o.temperature, o.top_k ? fmt::format(", top-k {}", o.top_k).c_str() : "",
        char_gpt::sample(*net, vocab, "", o.sample_after, {.temperature = o.temperature, .top_k = o.top_k}).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (auto code = parse(o, argc, argv)) return *code;
  try {
    return o.sample > 0 ? sample_only(o) : train(o);
  } catch (const Error& e) {
    std::fprintf(stderr, "\nchar_gpt: %s\n", e.what());
    return 1;
  }
}
