#pragma once
// Models, options and helpers shared by the DistributedDataParallel tests (ddp_*_test.cpp), run
// under mpirun with 2 and 3 ranks. Float64 throughout, so a reference trained in one process
// agrees to 1e-12.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dist_test_util.h"

namespace wick::test::ddp {

inline const TensorOptions kF64 = TensorOptions(kFloat64);

/// Linear(5, 8), Tanh, Linear(8, 8), Tanh, Linear(8, 3) in float64.
inline std::shared_ptr<nn::SequentialImpl> make_mlp() {
  using namespace nn;
  return Sequential(std::make_shared<nn::LinearImpl>(5, 8, kF64), std::make_shared<nn::TanhImpl>(),
                    std::make_shared<nn::LinearImpl>(8, 8, kF64), std::make_shared<nn::TanhImpl>(),
                    std::make_shared<nn::LinearImpl>(8, 3, kF64))
      .ptr();
}

/// Linear(5, 3) then BatchNorm1d(3) in float64: a model with buffers.
inline std::shared_ptr<nn::SequentialImpl> make_bn_model() {
  return nn::Sequential(std::make_shared<nn::LinearImpl>(5, 3, kF64),
                        std::make_shared<nn::BatchNorm1dImpl>(nn::BatchNorm1dOptions(3), kF64))
      .ptr();
}

/// Options that put every parameter in its own bucket.
inline distributed::DistributedDataParallelOptions tiny_buckets() {
  distributed::DistributedDataParallelOptions o;
  o.bucket_cap_mb = 1e-6;  // 1 byte
  o.first_bucket_bytes = 8;
  return o;
}

/// tiny_buckets() with find_unused_parameters.
inline distributed::DistributedDataParallelOptions tiny_buckets_find_unused() {
  distributed::DistributedDataParallelOptions o = tiny_buckets();
  o.find_unused_parameters = true;
  return o;
}

/// Rank r's rows of a global batch.
inline Tensor mine(const Tensor& global, int64_t local) { return global.narrow(0, world().rank() * local, local); }

/// Rank k's rows of a global batch.
inline Tensor rows_of(const Tensor& global, int64_t local, int k) { return global.narrow(0, k * local, local); }

/// fc1 always, fc2 when asked, fc3 never.
class Branchy : public nn::Cloneable<Branchy> {
 public:
  Branchy() {
    fc1_ = register_module("fc1", std::make_shared<nn::LinearImpl>(4, 3, kF64));
    fc2_ = register_module("fc2", std::make_shared<nn::LinearImpl>(4, 3, kF64));
    fc3_ = register_module("fc3", std::make_shared<nn::LinearImpl>(4, 3, kF64));
  }
  Tensor forward(const Tensor& x, bool use_fc2) {
    Tensor h = child(fc1_).forward(x);
    return use_fc2 ? h + child(fc2_).forward(x).tanh() : h;
  }

 private:
  nn::ChildSlot<nn::LinearImpl> fc1_, fc2_, fc3_;
};

/// Branchy's (or any module's) forward with a tensor and a flag.
inline Tensor call(nn::Module& m, const Tensor& x, bool flag) {
  return m.forward_value({nn::Value(x), nn::Value(flag)}).tensor();
}

/// Fills m's parameters with this rank's number + 1, expects DistributedDataParallel(m) to raise a
/// ValueError (its message handed to `check`), and checks that no parameter changed.
inline void expect_refused_untouched(const std::shared_ptr<nn::Module>& m,
                                     const std::function<void(const std::string&)>& check) {
  const double mine = world().rank() + 1.0;
  {
    NoGradGuard no_grad;
    for (Tensor p : m->parameters()) p.fill_(mine);
  }
  try {
    distributed::DistributedDataParallel ddp(m);
    FAIL("expected a ValueError");
  } catch (const ValueError& e) {
    check(e.what());
  }
  for (const Tensor& p : m->parameters())  // untouched: still this rank's own values
    CHECK(p.to_vector<double>() == std::vector<double>(static_cast<size_t>(p.numel()), mine));
}

}  // namespace wick::test::ddp
