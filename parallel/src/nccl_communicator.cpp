// The NCCL communicator (Note [Choosing a communicator]): built only with CUDA, on top of
// wick::cuda::nccl_* (cuda/include/wick/cuda/nccl.h), which caches one NCCL communicator per
// ordered device list and queues every collective on each device's current stream.
#include "wick/config.h"

#if WICK_WITH_CUDA

#include <unordered_set>

#include "wick/cuda/nccl.h"
#include "wick/parallel/communicator.h"

namespace wick::parallel {

namespace {

// The reduction that sums `inputs` as the local communicator does: + for numbers, logical or
// (NCCL's max over 0/1 bytes) for bool, which NCCL cannot sum.
ReduceOp sum_op(const std::vector<Tensor>& inputs) {
  return !inputs.empty() && inputs[0].dtype() == kBool ? ReduceOp::Max : ReduceOp::Sum;
}

class NcclCommunicator final : public Communicator {
 public:
  std::string name() const override { return "nccl"; }

  void broadcast(const std::vector<Tensor>& tensors) override {
    std::vector<Tensor> ts = tensors;
    cuda::nccl_broadcast(ts);
  }

  void reduce(const std::vector<Tensor>& inputs, const Tensor& output, int root) override {
    Tensor out = output;
    cuda::nccl_reduce(inputs, out, root, sum_op(inputs));
  }

  void all_reduce(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) override {
    std::vector<Tensor> outs = outputs;
    cuda::nccl_all_reduce(inputs, outs, sum_op(inputs));
  }

  void group_begin() override { group_ = std::make_unique<cuda::NcclGroupGuard>(); }
  void group_end() override {
    if (group_) group_->end();
    group_.reset();
  }

 private:
  std::unique_ptr<cuda::NcclGroupGuard> group_;
};

}  // namespace

namespace detail {

// Applies when every device is a CUDA device and no device repeats; comm hands it only dense,
// contiguous flat buffers of one dtype (bool travels as bytes).
void register_nccl_communicator() {
  register_communicator_factory("nccl", [](const std::vector<Device>& devices, DType) -> std::shared_ptr<Communicator> {
    if (devices.size() < 2) return nullptr;
    std::unordered_set<int> seen;
    for (Device d : devices)
      if (!d.is_cuda() || !seen.insert(d.index).second) return nullptr;
    return std::make_shared<NcclCommunicator>();
  });
}

}  // namespace detail
}  // namespace wick::parallel

#endif  // WICK_WITH_CUDA
