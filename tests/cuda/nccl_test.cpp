// NCCL collectives on one tensor per device (a single device forms a communicator of one).
#include "wick/cuda/nccl.h"

#include "cuda_test_util.h"
#include "wick/core/error.h"
#include "wick/cuda/stream.h"
#include "wick/parallel/comm.h"
#include "wick/parallel/communicator.h"

using namespace wick;
using namespace wick::cuda_test;
using Catch::Matchers::Contains;

namespace {
std::vector<Tensor> per_device(const std::vector<Tensor>& cpu) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < cpu.size(); ++i) out.push_back(to_gpu(cpu[i], static_cast<int>(i)));
  return out;
}
void sync_all() {
  for (int d = 0; d < cuda::device_count(); ++d) cuda::synchronize(d);
}
}  // namespace

TEST_CASE("nccl_is_available says which tensor lists NCCL can take", "[cuda][nccl]") {
  CHECK(cuda::nccl_version() > 0);
  Tensor g = native::zeros({10}, kFloat32, gpu());
  CHECK(cuda::nccl_is_available({g}));
  CHECK_FALSE(cuda::nccl_is_available({}));
  CHECK_FALSE(cuda::nccl_is_available({native::zeros({10}, kFloat32, kCPU)}));
  CHECK_FALSE(cuda::nccl_is_available({native::transpose(native::zeros({3, 4}, kFloat32, gpu()), 0, 1)}));
  CHECK_FALSE(cuda::nccl_is_available({g, g}));
  std::vector<Tensor> same{g, native::zeros({10}, kFloat32, gpu())};
  CHECK_THROWS_WITH(cuda::nccl_broadcast(same), Contains("two tensors are on cuda:0"));
}

TEST_CASE("broadcast, reduce and all_reduce over every device", "[cuda][nccl]") {
  const int n = cuda::device_count();
  for (DType dt : {kFloat32, kFloat64, kInt64}) {
    std::vector<Tensor> cpu;
    for (int i = 0; i < n; ++i) cpu.push_back(random_cpu({1000003}, dt));
    Tensor sum = cpu[0];
    for (int i = 1; i < n; ++i) sum = native::binary(BinaryOp::Add, sum, cpu[i]);
    const double tol = dt == kFloat32 ? 1e-5 : 1e-12;

    std::vector<Tensor> b = per_device(cpu);
    cuda::nccl_broadcast(b);
    sync_all();
    for (int i = 0; i < n; ++i)
      check_equal(b[static_cast<size_t>(i)], cpu[0], fmt::format("broadcast {} to {}", dt, i));

    std::vector<Tensor> r = per_device(cpu);
    Tensor out = native::empty({1000003}, dt, gpu(0));
    cuda::nccl_reduce(r, out, 0);
    sync_all();
    check_close(out, sum, tol, tol, fmt::format("reduce {}", dt));

    std::vector<Tensor> ar = per_device(cpu);
    cuda::nccl_all_reduce(ar);
    sync_all();
    for (int i = 0; i < n; ++i)
      check_close(ar[static_cast<size_t>(i)], sum, tol, tol, fmt::format("all_reduce {} on {}", dt, i));

    std::vector<Tensor> in = per_device(cpu), outs;
    for (int i = 0; i < n; ++i) outs.push_back(native::empty({1000003}, dt, gpu(i)));
    cuda::nccl_all_reduce(in, outs, ReduceOp::Max);
    sync_all();
    Tensor mx = cpu[0];
    for (int i = 1; i < n; ++i) mx = native::binary(BinaryOp::Maximum, mx, cpu[i]);
    for (int i = 0; i < n; ++i) check_equal(outs[static_cast<size_t>(i)], mx, fmt::format("all_reduce max {}", dt));
  }
}

TEST_CASE("collectives run on the current stream and inside a group", "[cuda][nccl]") {
  // No cached communicator: the first collective inside the group creates it (Note
  // [Communicators outside groups]), as when this case runs alone or first.
  cuda::nccl_clear_communicators();
  cuda::Stream s = cuda::get_stream_from_pool(0);
  cuda::StreamGuard guard(s);
  std::vector<Tensor> a = {native::ones({257}, kFloat32, gpu())};
  std::vector<Tensor> b = {native::full({513}, Scalar(2), kFloat32, gpu())};
  {
    cuda::NcclGroupGuard group;
    cuda::nccl_all_reduce(a);
    cuda::nccl_all_reduce(b);
    group.end();
  }
  s.synchronize();
  check_equal(a[0], native::ones({257}, kFloat32, kCPU));
  check_equal(b[0], native::full({513}, Scalar(2), kFloat32, kCPU));
  std::vector<Tensor> flags = {native::ones({8}, kBool, gpu())};
  CHECK_THROWS_WITH(cuda::nccl_all_reduce(flags, ReduceOp::Sum), Contains("bool"));
  CHECK_THROWS_AS(cuda::nccl_all_reduce(flags, ReduceOp::Sum), TypeError);
}

TEST_CASE("bool tensors reduce by logical or through the NCCL communicator, as the local one", "[cuda][nccl]") {
  const int n = cuda::device_count();
  std::vector<Device> devices;
  std::vector<Tensor> cpu;
  for (int i = 0; i < n; ++i) {
    devices.push_back(gpu(i));
    cpu.push_back(random_cpu({4099}, kBool));
  }
  auto comm = parallel::select_communicator(devices, kBool);
  // NCCL's communicator takes two or more GPUs; on one, the local one runs the same checks.
  REQUIRE(comm->name() == (n >= 2 ? "nccl" : "local"));
  Tensor expected = cpu[0];
  for (int i = 1; i < n; ++i) expected = native::binary(BinaryOp::LogicalOr, expected, cpu[i]);

  Tensor out = native::empty({4099}, kBool, gpu(0));
  comm->reduce(per_device(cpu), out, 0);
  std::vector<Tensor> outs;
  for (int i = 0; i < n; ++i) outs.push_back(native::empty({4099}, kBool, gpu(i)));
  comm->all_reduce(per_device(cpu), outs);
  sync_all();
  check_equal(out, expected, "reduce bool");
  for (int i = 0; i < n; ++i)
    check_equal(outs[static_cast<size_t>(i)], expected, fmt::format("all_reduce bool on {}", i));
  // the same through comm::reduce_add, which picks the communicator itself
  check_equal(parallel::comm::reduce_add(per_device(cpu), gpu(0)), expected, "comm::reduce_add bool");
}
