// The nccl process group and DistributedDataParallel on CUDA, at the world size mpirun gives
// (ctest: 1). Expected values are hand-computed from each rank's known contribution; DDP is
// checked against plain training of the same model on the same device.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "support/allclose.h"
#include "wick/cuda/runtime.h"
#include "wick/cuda/stream.h"
#include "wick/distributed/distributed.h"

using namespace wick;
using Catch::Matchers::Contains;
using RO = distributed::ReduceOp;

namespace {

// The nccl group, started on first use and kept for the whole run (MPI starts once per
// process). Timeout 60 s.
distributed::ProcessGroup& group() {
  static struct Holder {
    Holder() {
      distributed::InitOptions o;
      o.backend = "nccl";
      o.timeout = std::chrono::seconds(60);
      distributed::init_process_group(o);
    }
    ~Holder() { distributed::destroy_process_group(); }
  } holder;
  return distributed::default_group();
}

TensorOptions on_gpu(DType d) { return TensorOptions(d).device(group().device()); }

template <class T>
std::vector<T> host(const Tensor& t) {
  return t.to(kCPU).to_vector<T>();
}

}  // namespace

TEST_CASE("nccl group: one GPU per process, chosen by the local rank", "[nccl]") {
  auto& g = group();
  CHECK(g.backend_name() == "nccl");
  CHECK(g.rank() >= 0);
  CHECK(g.rank() < g.size());
  if (const char* size = std::getenv("OMPI_COMM_WORLD_SIZE")) CHECK(g.size() == std::atoi(size));
  int local = distributed::local_rank_from_environment();
  if (local < 0) local = 0;
  CHECK(g.device() == distributed::nccl_device_for_local_rank(local, cuda::device_count()));
}

TEST_CASE("nccl group: all_reduce sums and averages every dtype, in place", "[nccl]") {
  auto& g = group();
  const int n = g.size(), r = g.rank();
  const double s = n * (n + 1) / 2.0;
  // rank r contributes (r + 1) * [1, 2, 3]
  Tensor t = from_blob(std::vector<double>{1, 2, 3}.data(), {3}, kFloat64).to(group().device()).mul(r + 1);
  auto work = g.all_reduce(t, RO::Sum);
  work->wait();
  CHECK(host<double>(t) == std::vector<double>{s, 2 * s, 3 * s});
  cuda::synchronize(g.device().index);
  CHECK(work->is_completed());
  CHECK(work->seconds() > 0);

  Tensor f = full({4}, static_cast<double>(r + 1), on_gpu(kFloat32));
  g.all_reduce(f, RO::Avg)->wait();
  CHECK(host<float>(f) == std::vector<float>(4, static_cast<float>(s / n)));

  Tensor i = full({2}, static_cast<int64_t>(r), on_gpu(kInt64));
  g.all_reduce(i)->wait();
  CHECK(host<int64_t>(i) == std::vector<int64_t>(2, static_cast<int64_t>(n * (n - 1) / 2)));

  Tensor b = full({2}, r == n - 1, on_gpu(kBool));  // Sum of bools: logical or
  g.all_reduce(b)->wait();
  CHECK(host<bool>(b) == std::vector<bool>{true, true});

  CHECK_THROWS_AS(g.all_reduce(i, RO::Avg)->wait(), TypeError);
}

TEST_CASE("nccl group: the collective sees the caller's queued work and the caller sees its result", "[nccl]") {
  // The caller's stream is kept busy, then writes the tensor: NCCL's stream must wait for that
  // write (the ready event), and the caller's next kernel for the reduction (Work::wait).
  auto& g = group();
  const int n = g.size();
  Tensor t = zeros({1 << 16}, on_gpu(kFloat64));
  const auto caller = cuda::get_current_stream(g.device().index);
  cuda::busy_wait(caller, 20000);
  t.fill_(2.0);
  auto work = g.all_reduce(t);
  work->wait();
  t.add_(1.0);  // after the reduction, on the caller's stream
  const auto v = host<double>(t);
  CHECK(v.front() == 2.0 * n + 1);
  CHECK(v.back() == 2.0 * n + 1);
}

TEST_CASE("nccl group: non-contiguous tensors are staged and written back", "[nccl]") {
  auto& g = group();
  const int n = g.size();
  Tensor m = arange(6, TensorOptions(kFloat64)).to(group().device()).view({2, 3}).t();  // [3, 2], not contiguous
  REQUIRE_FALSE(m.is_contiguous());
  g.all_reduce(m)->wait();
  CHECK(host<double>(m.contiguous()) == std::vector<double>{0.0 * n, 3.0 * n, 1.0 * n, 4.0 * n, 2.0 * n, 5.0 * n});
}

TEST_CASE("nccl group: broadcast, all_gather and barrier", "[nccl]") {
  auto& g = group();
  const int n = g.size(), r = g.rank();
  Tensor t = full({5}, static_cast<double>(r + 10), on_gpu(kFloat64));
  g.broadcast(t, n - 1)->wait();
  CHECK(host<double>(t) == std::vector<double>(5, static_cast<double>(n - 1 + 10)));

  std::vector<Tensor> outs;
  for (int k = 0; k < n; ++k) outs.push_back(empty({2, 2}, on_gpu(kInt64)));
  g.all_gather(outs, full({2, 2}, static_cast<int64_t>(r * 7), on_gpu(kInt64)))->wait();
  for (int k = 0; k < n; ++k) CHECK(host<int64_t>(outs[k]) == std::vector<int64_t>(4, k * 7));

  auto b = g.barrier();
  b->wait();
  cuda::synchronize(g.device().index);
  CHECK(b->is_completed());
  CHECK_THROWS_AS(g.broadcast(t, n)->wait(), IndexError);  // refused on every rank alike
}

TEST_CASE("nccl group: a tensor on the wrong device is a wick::Error naming both devices", "[nccl]") {
  auto& g = group();
  const std::string here = g.device().str();
  Tensor cpu = zeros({3}, kFloat32);
  CHECK_THROWS_WITH(g.all_reduce(cpu)->wait(), Contains("all_reduce") && Contains("cpu") && Contains(here));
  CHECK_THROWS_WITH(g.broadcast(cpu, 0)->wait(), Contains("broadcast") && Contains(here));
  if (cuda::device_count() > 1) {
    const Device other(DeviceType::CUDA, (g.device().index + 1) % cuda::device_count());
    Tensor elsewhere = zeros({3}, TensorOptions(kFloat32).device(other));
    CHECK_THROWS_WITH(g.all_reduce(elsewhere)->wait(), Contains(other.str()) && Contains(here));
  }
  // The group is still usable afterwards.
  Tensor ok = ones({2}, on_gpu(kFloat32));
  g.all_reduce(ok)->wait();
  CHECK(host<float>(ok) == std::vector<float>(2, static_cast<float>(g.size())));
}

namespace {

std::shared_ptr<nn::SequentialImpl> make_mlp(Device device) {
  const TensorOptions f64 = TensorOptions(kFloat64);
  auto m = nn::Sequential(std::make_shared<nn::LinearImpl>(5, 8, f64), std::make_shared<nn::TanhImpl>(),
                          std::make_shared<nn::LinearImpl>(8, 8, f64), std::make_shared<nn::TanhImpl>(),
                          std::make_shared<nn::LinearImpl>(8, 3, f64))
               .ptr();
  m->to(device);
  return m;
}

}  // namespace

TEST_CASE("nccl ddp: DDP on this rank's GPU equals plain training on the whole batch, in many buckets", "[nccl]") {
  auto& g = group();
  const Device dev = g.device();
  const int64_t local = 3, global = local * g.size();
  manual_seed(100);
  auto reference = make_mlp(dev);
  manual_seed(100 + g.rank());  // the other ranks start elsewhere; DDP broadcasts rank 0's
  auto net = make_mlp(dev);
  distributed::DistributedDataParallelOptions o;
  o.bucket_cap_mb = 1e-6;  // every parameter in its own bucket
  o.first_bucket_bytes = 8;
  distributed::DistributedDataParallel ddp(net, o);
  const auto params = net->parameters();
  REQUIRE(ddp.bucket_indices().size() == params.size());
  for (size_t i = 0; i < params.size(); ++i)
    CHECK_ALLCLOSE(params[i].to(kCPU), reference->parameters()[i].to(kCPU), 0.0, 0.0);

  optim::SGD opt_ref(reference->parameters(), optim::SGDOptions(0.1));
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1));
  manual_seed(999);
  const Tensor x = randn({5, global, 5}, kFloat64).to(dev), y = randn({5, global, 3}, kFloat64).to(dev);
  for (int64_t step = 0; step < 5; ++step) {
    opt_ref.zero_grad();
    nn::F::mse_loss(reference->forward_tensor(x[step]), y[step]).backward();
    opt_ref.step();

    opt.zero_grad();
    const Tensor xs = x[step].narrow(0, g.rank() * local, local), ys = y[step].narrow(0, g.rank() * local, local);
    nn::F::mse_loss(ddp.forward(xs), ys).backward();
    opt.step();

    INFO("step " << step);
    const auto ref = reference->parameters();
    for (size_t i = 0; i < params.size(); ++i) CHECK_ALLCLOSE(params[i].to(kCPU), ref[i].to(kCPU), 1e-12, 0.0);
  }
  const auto stats = ddp.comm_stats();
  CHECK(stats.backwards == 5);
  CHECK(stats.buckets == 5 * static_cast<int64_t>(ddp.bucket_indices().size()));
}

TEST_CASE("nccl ddp: communication hooks on the GPU: allreduce_hook and full-rank PowerSGD give DDP's own", "[nccl]") {
  // Three DDPs from the same start: DDP's own all-reduce, allreduce_hook (bit for bit), and
  // PowerSGD at full rank after one plain step (every weight compressed, QR on the host for
  // rank > 2, the random start made on the host and moved: Note [PowerSGD]).
  auto& g = group();
  const Device dev = g.device();
  const int64_t local = 3, global = local * g.size();
  std::vector<std::shared_ptr<nn::SequentialImpl>> nets;
  for (int k = 0; k < 3; ++k) {
    manual_seed(300);
    nets.push_back(make_mlp(dev));
  }
  distributed::DistributedDataParallelOptions o;
  o.bucket_cap_mb = 1e-6;  // every parameter in its own bucket
  o.first_bucket_bytes = 8;
  distributed::DistributedDataParallel plain(nets[0], o), hooked(nets[1], o), compressed(nets[2], o);
  hooked.register_comm_hook(distributed::ddp_comm_hooks::allreduce_hook());
  auto state = std::make_shared<distributed::ddp_comm_hooks::PowerSGDState>();
  state->matrix_approximation_rank = 8;  // full rank for every weight of make_mlp
  state->min_compression_rate = 0;
  state->start_powerSGD_iter = 2;
  compressed.register_comm_hook(distributed::ddp_comm_hooks::powerSGD_hook(state));
  std::vector<std::unique_ptr<optim::SGD>> opts;
  for (auto& n : nets) opts.push_back(std::make_unique<optim::SGD>(n->parameters(), optim::SGDOptions(0.1)));
  manual_seed(301);
  const Tensor x = randn({4, global, 5}, kFloat64).to(dev), y = randn({4, global, 3}, kFloat64).to(dev);
  distributed::DistributedDataParallel* ddps[] = {&plain, &hooked, &compressed};
  for (int64_t step = 0; step < 4; ++step) {
    INFO("step " << step);
    const Tensor xs = x[step].narrow(0, g.rank() * local, local), ys = y[step].narrow(0, g.rank() * local, local);
    for (size_t k = 0; k < 3; ++k) {
      opts[k]->zero_grad();
      nn::F::mse_loss(ddps[k]->forward(xs), ys).backward();
      opts[k]->step();
    }
    const auto p0 = nets[0]->parameters(), p1 = nets[1]->parameters(), p2 = nets[2]->parameters();
    for (size_t i = 0; i < p0.size(); ++i) {
      CHECK_ALLCLOSE(p1[i].to(kCPU), p0[i].to(kCPU), 0.0, 0.0);
      CHECK_ALLCLOSE(p2[i].to(kCPU), p0[i].to(kCPU), 1e-10, 1e-12);
    }
  }
  CHECK(state->iter == 4);
}

namespace {

// fc1 is used, fc2 never.
class HalfUsed : public nn::Cloneable<HalfUsed> {
 public:
  HalfUsed() {
    fc1_ = register_module("fc1", std::make_shared<nn::LinearImpl>(4, 3, TensorOptions(kFloat64)));
    fc2_ = register_module("fc2", std::make_shared<nn::LinearImpl>(4, 3, TensorOptions(kFloat64)));
  }
  Tensor forward(const Tensor& x) { return child(fc1_).forward(x); }

 private:
  nn::ChildSlot<nn::LinearImpl> fc1_, fc2_;
};

}  // namespace

TEST_CASE("nccl ddp: find_unused_parameters and join keep their bookkeeping on the GPU", "[nccl]") {
  auto& g = group();
  const Device dev = g.device();
  manual_seed(7);
  auto net = std::make_shared<HalfUsed>();
  net->to(dev);
  distributed::DistributedDataParallelOptions o;
  o.find_unused_parameters = true;
  distributed::DistributedDataParallel ddp(net, o);
  ddp.enable_join();
  const Tensor x = randn({4, 4}, kFloat64).to(dev);
  for (int step = 0; step < 2; ++step) ddp.forward(x).sum().backward();
  for (const auto& [name, p] : net->named_parameters()) {
    INFO(name);
    CHECK(p.grad().defined() == (name.rfind("fc1", 0) == 0));  // no rank used fc2: .grad stays undefined
  }
  // d(sum(W x + b))/db = 4 rows on every rank (the average of equal gradients), accumulated over 2 steps.
  const Tensor bias_grad = net->named_parameters()["fc1.bias"].grad().to(kCPU);
  CHECK(bias_grad.to_vector<double>() == std::vector<double>(3, 8.0));
  ddp.join();  // every rank trained as many iterations: all leave at once
  CHECK(ddp.comm_stats().backwards == 2);
}
