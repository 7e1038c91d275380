// The promise (docs/parallel.md, "DataParallel: what it promises"): DataParallel over 1, 2, 3 and 4 CPU devices gives
// the same loss and the same gradients on the original parameters as the plain module on the whole batch, within 1e-12
// relative in float64. Also: no two replicas share storage, only the source replica shares with the original, every
// replica tensor is on its replica's device.
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "parallel/parallel_test_util.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;
using wick::test::cpus;
using wick::test::f64;

namespace {

// max |a - e| / max |e| (0 when both are zero).
double rel_err(const Tensor& a, const Tensor& e) {
  auto av = a.to_vector<double>(), ev = e.to_vector<double>();
  REQUIRE(av.size() == ev.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < av.size(); ++i) {
    num = std::max(num, std::abs(av[i] - ev[i]));
    den = std::max(den, std::abs(ev[i]));
  }
  return den == 0 ? num : num / den;
}

std::shared_ptr<nn::Module> mlp() {
  return nn::Sequential(std::make_shared<nn::LinearImpl>(6, 16, f64()), std::make_shared<nn::TanhImpl>(),
                        std::make_shared<nn::LinearImpl>(16, 3, f64()))
      .ptr();
}

std::shared_ptr<nn::Module> cnn() {
  return nn::Sequential(std::make_shared<nn::Conv2dImpl>(nn::Conv2dOptions(2, 4, 3).padding(1), f64()),
                        std::make_shared<nn::BatchNorm2dImpl>(nn::BatchNorm2dOptions(4), f64()),
                        std::make_shared<nn::ReLUImpl>(), std::make_shared<nn::FlattenImpl>(),
                        std::make_shared<nn::LinearImpl>(4 * 5 * 5, 3, f64()))
      .ptr();
}

// An autoencoder-style model whose decoder uses the encoder's weight transposed.
class TiedAE : public nn::Cloneable<TiedAE> {
 public:
  TiedAE() {
    enc_ = register_module("enc", std::make_shared<nn::LinearImpl>(6, 4, f64()));
    dec_bias_ = register_parameter("dec_bias", zeros({6}, f64()));
    tied_ = register_parameter("tied", child(enc_).weight());  // the same tensor, registered again
  }
  Tensor forward(const Tensor& x) {
    Tensor h = child(enc_).forward(x).tanh();
    return nn::F::linear(h, param(tied_).t(), param(dec_bias_));
  }
  nn::ChildSlot<nn::LinearImpl> enc_;
  nn::ParamSlot dec_bias_, tied_;
};

std::shared_ptr<nn::Module> child_twice() {
  auto block = std::make_shared<nn::LinearImpl>(6, 6, f64());
  auto seq = std::make_shared<nn::SequentialImpl>();
  seq->push_back("a", block);
  seq->push_back("act", std::make_shared<nn::TanhImpl>());
  seq->push_back("b", block);  // the same child again
  return seq;
}

std::shared_ptr<nn::Module> frozen() {
  auto seq = std::dynamic_pointer_cast<nn::SequentialImpl>(mlp());
  Tensor(seq->at<nn::LinearImpl>(0)->weight()).requires_grad_(false);
  return seq;
}

struct Case {
  std::string name;
  std::function<std::shared_ptr<nn::Module>()> make;
  std::vector<int64_t> item_shape;  // one sample
  bool train = true;                // training mode (only matters for BatchNorm)
};

std::vector<Tensor> grads(const nn::Module& m) {
  std::vector<Tensor> g;
  for (const auto& e : m.named_parameters().values()) g.push_back(e.grad().defined() ? e.grad().clone() : Tensor());
  return g;
}

void clear_grads(nn::Module& m) {
  for (auto p : m.parameters()) p.set_grad(Tensor());
}

Tensor loss_of(const Tensor& out, const Tensor& target) { return ((out - target) * (out - target)).mean(); }

// The module on each chunk of the batch, chunked as scatter chunks it (BatchNorm in training
// mode normalizes each replica's chunk with that chunk's statistics).
Tensor chunkwise(nn::Module& m, const Tensor& x, int devices) {
  std::vector<Tensor> outs;
  for (const Tensor& c : x.chunk(devices)) outs.push_back(m.forward_tensor(c));
  return cat(outs);
}

void check_replica_storage(const std::shared_ptr<nn::Module>& model, int n) {
  auto replicas = replicate(model, cpus(n));
  std::set<const void*> originals;
  for (const auto& t : model->named_parameters().values()) originals.insert(t.data_ptr());
  for (const auto& t : model->named_buffers().values()) originals.insert(t.data_ptr());
  std::set<const void*> seen;
  for (int j = 0; j < n; ++j) {
    std::set<const void*> mine;
    for (const auto& m : replicas[static_cast<size_t>(j)]->modules()) {
      auto visit = [&](const Tensor& t) {
        if (!t.defined()) return;
        CHECK(t.device() == cpu(j));
        mine.insert(t.data_ptr());
        CHECK(originals.count(t.data_ptr()) == (j == 0 ? 1u : 0u));
      };
      for (const auto& e : m->parameter_table()) visit(e.value);
      for (const auto& e : m->buffer_table()) visit(e.value);
    }
    for (const void* p : mine) CHECK(seen.insert(p).second);  // not shared with another replica
  }
}

}  // namespace

TEST_CASE("DataParallel over 1-4 CPU devices equals the plain module (float64, 1e-12 relative)") {
  const std::vector<Case> cases{
      {"MLP", mlp, {6}},
      {"CNN with BatchNorm, eval", cnn, {2, 5, 5}, false},
      {"CNN with BatchNorm, train", cnn, {2, 5, 5}, true},
      {"tied weights", [] { return std::make_shared<TiedAE>(); }, {6}},
      {"a child registered twice", child_twice, {6}},
      {"a frozen parameter", frozen, {6}},
  };
  for (const Case& c : cases) {
    for (int64_t batch : {12, 7, 2}) {  // even, not divisible, smaller than the device count
      for (int n = 1; n <= 4; ++n) {
        INFO(c.name << ", batch " << batch << ", " << n << " devices");
        manual_seed(static_cast<uint64_t>(batch * 10 + n));
        auto model = c.make();
        std::vector<int64_t> shape{batch};
        shape.insert(shape.end(), c.item_shape.begin(), c.item_shape.end());
        Tensor x = randn(shape, f64());
        // give BatchNorm non-trivial running statistics first
        {
          NoGradGuard ng;
          model->train();
          model->forward_tensor(randn(shape, f64()) * 2.0 + 1.0);
        }
        model->train(c.train);
        const auto state = model->state_dict();
        std::map<std::string, Tensor> saved;
        for (const auto& [k, v] : state) saved[k] = v.clone();
        auto restore = [&] {
          nn::StateDict d;
          for (const auto& [k, v] : saved) d.insert(k, v.clone());
          model->load_state_dict(d);
        };

        // The reference: the plain module on the whole batch (chunk by chunk for BatchNorm in
        // training mode, whose statistics are per replica).
        const bool per_chunk = c.train && c.name.find("BatchNorm") != std::string::npos;
        const int chunks = static_cast<int>(std::min<int64_t>(n, batch));
        Tensor target = randn({batch, 3}, f64());
        if (c.name == "tied weights" || c.name == "a child registered twice") target = randn({batch, 6}, f64());
        Tensor ref_out = per_chunk ? chunkwise(*model, x, chunks) : model->forward_tensor(x);
        Tensor ref_loss = loss_of(ref_out, target);
        ref_loss.backward();
        auto ref_grads = grads(*model);
        clear_grads(*model);
        restore();
        // running statistics after the first chunk alone (what replica 0 leaves behind)
        Tensor ref_running;
        if (per_chunk) {
          model->forward_tensor(x.chunk(chunks)[0]);
          ref_running = model->named_buffers().values()[0].clone();
          clear_grads(*model);
          restore();
        }

        Tensor out = data_parallel(model, x, cpus(n));
        CHECK(out.device() == cpu(0));
        Tensor loss = loss_of(out, target);
        loss.backward();
        CHECK(rel_err(loss, ref_loss) <= 1e-12);
        CHECK(rel_err(out, ref_out) <= 1e-12);
        auto dp_grads = grads(*model);
        REQUIRE(dp_grads.size() == ref_grads.size());
        for (size_t k = 0; k < dp_grads.size(); ++k) {
          INFO("parameter " << k);
          REQUIRE(dp_grads[k].defined() == ref_grads[k].defined());
          if (!dp_grads[k].defined()) continue;  // the frozen weight: no gradient either way
          CHECK(dp_grads[k].device() == cpu(0));
          CHECK(rel_err(dp_grads[k], ref_grads[k]) <= 1e-12);
        }
        if (per_chunk) CHECK(rel_err(model->named_buffers().values()[0], ref_running) <= 1e-12);
        if (c.name.find("eval") != std::string::npos) {
          // eval mode leaves the running statistics alone
          CHECK(rel_err(model->named_buffers().values()[0], saved.at("1.running_mean")) == 0);
        }
        clear_grads(*model);
        check_replica_storage(model, n);
      }
    }
  }
}
