// ProcessGroupBatchNormSync and convert_sync_batchnorm (sync_batch_norm.h): BatchNorm over every
// rank's batch, Note [SyncBatchNorm's collectives].
#include "wick/distributed/sync_batch_norm.h"

#include <fmt/format.h>

#include <exception>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/distributed/init.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/batchnorm.h"

namespace wick::distributed {

namespace {

std::string shape_text(const Tensor& t) {
  return t.defined() ? fmt::format("[{}]", fmt::join(t.sizes(), ", ")) : std::string("undefined");
}

// [1, C, 1, ...] for an input of `dim` dims.
std::vector<int64_t> channel_shape(int64_t channels, int64_t dim) {
  std::vector<int64_t> s(static_cast<size_t>(dim), 1);
  s[1] = channels;
  return s;
}

// This rank's own checks, beyond the layer's input check: what F::batch_norm checks.
void check_call(const Tensor& input, const nn::BatchNormSyncCall& call) {
  const std::string& layer = call.layer;
  WICK_CHECK_T(TypeError, input.is_floating_point(), "{} (synchronised): expected a floating-point input, got {}",
               layer, input.dtype());
  WICK_CHECK(input.size(1) == call.num_features,
             "{} (synchronised): expected {} channels in dim 1, got input {}; every rank's input must have the "
             "layer's channels",
             layer, call.num_features, shape_text(input));
  struct Named {
    const char* name;
    const Tensor* tensor;
  };
  for (const Named& n : {Named{"weight", &call.weight}, Named{"bias", &call.bias},
                         Named{"running_mean", &call.running_mean}, Named{"running_var", &call.running_var}}) {
    const Tensor& t = *n.tensor;
    if (!t.defined()) continue;
    WICK_CHECK_T(TypeError, t.dtype() == input.dtype() && t.device() == input.device(),
                 "{} (synchronised): {} is {} on {} but the input is {} on {}; move the layer with to()", layer, n.name,
                 t.dtype(), t.device(), input.dtype(), input.device());
    WICK_CHECK(t.dim() == 1 && t.size(0) == call.num_features, "{} (synchronised): {} has shape {}, expected [{}]",
               layer, n.name, shape_text(t), call.num_features);
  }
  // A DataParallel replica's parameters are broadcast outputs, not leaves: its replicas would
  // run one collective each, pairing with the wrong calls on the other ranks.
  WICK_CHECK_T(StateError, !call.weight.defined() || call.weight.is_leaf(),
               "{} (synchronised): called on a replica (its weight is not a leaf); synchronised BatchNorm "
               "runs one forward per process: use DistributedDataParallel, not DataParallel",
               layer);
}

// This rank's row: [mean (C), sum of squared deviations (C), count, 0], float64, differentiable
// in the input. An empty input gives zeros that still have the input's history, so that its
// backward makes the same all_reduce as the other ranks'.
Tensor local_row(const Tensor& input, int64_t channels, const Device& row_device) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < input.dim(); ++d)
    if (d != 1) dims.push_back(d);
  const int64_t count = channels > 0 ? input.numel() / channels : 0;
  const Tensor mean = wick::sum(input, dims) * Scalar(1.0 / static_cast<double>(count > 0 ? count : 1));
  const Tensor dev = input - mean.view(channel_shape(channels, input.dim()));
  const Tensor m2 = wick::sum(dev * dev, dims);
  const Tensor tail = wick::tensor({static_cast<double>(count), 0.0}, TensorOptions(kFloat64).device(row_device));
  return wick::cat({wick::to(mean, row_device, kFloat64), wick::to(m2, row_device, kFloat64), tail}, 0);
}

// The ranks whose "refused" column is set, as text; empty when none.
std::string refused_ranks(const Tensor& gathered, int64_t channels) {
  const std::vector<double> flags = gathered.select(1, 2 * channels + 1).contiguous().to(kCPU).to_vector<double>();
  std::string out;
  for (size_t r = 0; r < flags.size(); ++r)
    if (flags[r] != 0.0) out += fmt::format("{}{}", out.empty() ? "" : ", ", r);
  return out;
}

}  // namespace

std::shared_ptr<ProcessGroup> ProcessGroupBatchNormSync::resolve() const {
  return group_ ? group_ : default_group_ptr();
}

int ProcessGroupBatchNormSync::world_size() const { return resolve()->size(); }

std::string ProcessGroupBatchNormSync::describe() const {
  const std::shared_ptr<ProcessGroup> g = group_ ? group_ : (is_initialized() ? default_group_ptr() : nullptr);
  return g ? fmt::format("{}, {} processes", g->backend_name(), g->size()) : std::string("the default group");
}

Tensor ProcessGroupBatchNormSync::forward(const Tensor& input, const nn::BatchNormSyncCall& call) {
  const std::shared_ptr<ProcessGroup> group = resolve();
  const int64_t channels = call.num_features;
  const std::string& layer = call.layer;
  const Device row_device = group->device();

  // This rank's row, or zeros and refused = 1 when its input is refused: every rank still
  // gathers, and then every rank raises (Note [SyncBatchNorm's collectives]).
  Tensor row;
  std::exception_ptr refusal;
  try {
    call.check_input(input);
    check_call(input, call);
    row = local_row(input, channels, row_device);
  } catch (const Error&) {
    refusal = std::current_exception();
    NoGradGuard no_grad;
    row = wick::zeros({2 * channels + 2}, TensorOptions(kFloat64).device(row_device));
    row.narrow(0, 2 * channels + 1, 1).fill_(1.0);
  }
  const Tensor gathered = all_gather_rows(row, group);  // [world, 2C + 2]
  if (refusal) std::rethrow_exception(refusal);
  const std::string refused = refused_ranks(gathered, channels);
  WICK_CHECK(refused.empty(),
             "{} (synchronised over {}): rank(s) {} refused their input (see the error on that rank); no rank "
             "changed its statistics",
             layer, describe(), refused);

  const Tensor counts = gathered.select(1, 2 * channels).detach();  // [world], float64, exact
  const double total = counts.sum().item<double>();
  WICK_CHECK(total != 1.0,
             "{} (synchronised over {}): expected more than 1 value per channel when training, got input size 1 "
             "over all ranks (this rank's input {})",
             layer, describe(), shape_text(input));
  if (total == 0.0) {
    // Every rank's batch is empty: an empty output in the graph, the statistics left alone, as
    // F::batch_norm on an empty batch.
    return nn::functional::batch_norm(input, Tensor(), Tensor(), call.weight, call.bias, true, call.momentum, call.eps);
  }
  // Chan's merge, in rank order on every rank, so the statistics are bitwise the same everywhere.
  const Tensor c = counts.unsqueeze(1);                                 // [world, 1]
  const Tensor means = gathered.narrow(1, 0, channels);                 // [world, C]
  const Tensor m2s = gathered.narrow(1, channels, channels);            // [world, C]
  const Tensor mean = wick::sum(means * c, {0}) * Scalar(1.0 / total);  // [C]
  const Tensor spread = means - mean.unsqueeze(0);
  const Tensor m2 = wick::sum(m2s + c * spread * spread, {0});
  const Tensor invstd = wick::rsqrt(m2 * Scalar(1.0 / total) + Scalar(call.eps));

  const std::vector<int64_t> shape = channel_shape(channels, input.dim());
  const Tensor mean_x = wick::to(mean, input.device(), input.dtype()).view(shape);
  Tensor scale = wick::to(invstd, input.device(), input.dtype());
  if (call.weight.defined()) scale = scale * call.weight;
  Tensor out = (input - mean_x) * scale.view(shape);
  if (call.bias.defined()) out = out + call.bias.view(shape);

  if (call.running_mean.defined() || call.running_var.defined()) {
    NoGradGuard no_grad;
    const double f = call.momentum;
    if (call.running_mean.defined()) {
      const Tensor batch_mean = wick::to(mean, input.device(), input.dtype());
      Tensor(call.running_mean).copy_(call.running_mean * Scalar(1.0 - f) + batch_mean * Scalar(f));
    }
    if (call.running_var.defined()) {
      const Tensor unbiased = wick::to(m2 * Scalar(1.0 / (total - 1.0)), input.device(), input.dtype());
      Tensor(call.running_var).copy_(call.running_var * Scalar(1.0 - f) + unbiased * Scalar(f));
    }
  }
  return out;
}

bool synchronises_batch_norm(const nn::Module& m) {
  if (const auto* bn1 = dynamic_cast<const nn::BatchNorm1dImpl*>(&m)) return bn1->sync() != nullptr;
  if (const auto* bn2 = dynamic_cast<const nn::BatchNorm2dImpl*>(&m)) return bn2->sync() != nullptr;
  if (const auto* bn3 = dynamic_cast<const nn::BatchNorm3dImpl*>(&m)) return bn3->sync() != nullptr;
  return false;
}

std::shared_ptr<nn::Module> convert_sync_batchnorm(std::shared_ptr<nn::Module> module,
                                                   std::shared_ptr<ProcessGroup> group) {
  WICK_CHECK(module != nullptr, "convert_sync_batchnorm: the module is null");
  const auto sync = std::make_shared<ProcessGroupBatchNormSync>(std::move(group));
  for (const std::shared_ptr<nn::Module>& m : module->modules()) {
    if (auto* bn1 = dynamic_cast<nn::BatchNorm1dImpl*>(m.get())) bn1->set_sync(sync);
    if (auto* bn2 = dynamic_cast<nn::BatchNorm2dImpl*>(m.get())) bn2->set_sync(sync);
    if (auto* bn3 = dynamic_cast<nn::BatchNorm3dImpl*>(m.get())) bn3->set_sync(sync);
  }
  return module;
}

}  // namespace wick::distributed
