// The nccl backend's choices that need no GPU and no running MPI: which backend a device gets,
// which GPU a local rank uses, the wrong-device errors, and init_process_group("nccl") on a
// machine where the backend cannot start. Single-process cases (tag [backend]).
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "wick/config.h"
#include "wick/distributed/distributed.h"

using namespace wick;
using Catch::Matchers::Contains;

namespace {

// Sets (or unsets, with nullopt) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("backend choice: CUDA devices get nccl, the CPU gets mpi", "[backend]") {
  CHECK(distributed::default_backend(Device("cpu:0")) == "mpi");
  CHECK(distributed::default_backend(Device("cpu:3")) == "mpi");
  CHECK(distributed::default_backend(Device(DeviceType::CUDA, 0)) == "nccl");
  CHECK(distributed::default_backend(Device(DeviceType::CUDA, 5)) == "nccl");
}

TEST_CASE("backend choice: local rank r uses cuda:(r mod device count)", "[backend]") {
  CHECK(distributed::nccl_device_for_local_rank(0, 1) == Device(DeviceType::CUDA, 0));
  CHECK(distributed::nccl_device_for_local_rank(3, 1) == Device(DeviceType::CUDA, 0));
  CHECK(distributed::nccl_device_for_local_rank(1, 4) == Device(DeviceType::CUDA, 1));
  CHECK(distributed::nccl_device_for_local_rank(6, 4) == Device(DeviceType::CUDA, 2));
  CHECK_THROWS_AS(distributed::nccl_device_for_local_rank(0, 0), ValueError);
  CHECK_THROWS_AS(distributed::nccl_device_for_local_rank(-1, 2), ValueError);
}

TEST_CASE("backend choice: the local rank comes from the launcher's environment", "[backend]") {
  ScopedEnv ompi("OMPI_COMM_WORLD_LOCAL_RANK", std::nullopt), mpich("MPI_LOCALRANKID", std::nullopt),
      slurm("SLURM_LOCALID", std::nullopt);
  CHECK(distributed::local_rank_from_environment() == -1);
  {
    ScopedEnv s("SLURM_LOCALID", "2");
    CHECK(distributed::local_rank_from_environment() == 2);
    ScopedEnv m("MPI_LOCALRANKID", "5");
    CHECK(distributed::local_rank_from_environment() == 5);
    ScopedEnv o("OMPI_COMM_WORLD_LOCAL_RANK", "3");  // Open MPI's own variable wins
    CHECK(distributed::local_rank_from_environment() == 3);
  }
  ScopedEnv bad("OMPI_COMM_WORLD_LOCAL_RANK", "x1");  // not a number: ignored
  CHECK(distributed::local_rank_from_environment() == -1);
  // Past INT_MAX: ignored, never truncated (4294967296 used to give local rank 0, 2147483648 a
  // negative one), and so are a sign and values past long's range.
  for (const char* v : {"4294967296", "2147483648", "-1", "99999999999999999999999", "+3"}) {
    CAPTURE(v);
    ScopedEnv big("OMPI_COMM_WORLD_LOCAL_RANK", v);
    ScopedEnv slurm_set("SLURM_LOCALID", "1");  // the next variable is read instead
    CHECK(distributed::local_rank_from_environment() == 1);
  }
  ScopedEnv max("OMPI_COMM_WORLD_LOCAL_RANK", "2147483647");
  CHECK(distributed::local_rank_from_environment() == 2147483647);
}

TEST_CASE("backend choice: a tensor on the wrong device is refused with both devices named", "[backend]") {
  const Tensor cpu = zeros({2, 3}, kFloat32);
  const Device gpu(DeviceType::CUDA, 1);
  try {
    distributed::check_collective_device("all_reduce", cpu, gpu, "nccl");
    FAIL("a CPU tensor was accepted by the nccl backend");
  } catch (const ValueError& e) {
    const std::string m = e.what();
    CHECK_THAT(m, Contains("all_reduce") && Contains("nccl") && Contains("float32") && Contains("[2, 3]") &&
                      Contains("cpu") && Contains("cuda:1"));
  }
  CHECK_THROWS_WITH(distributed::check_collective_device("broadcast", Tensor(), gpu, "nccl"),
                    Contains("broadcast") && Contains("undefined") && Contains("cuda:1"));
  CHECK_NOTHROW(distributed::check_collective_device("all_gather", cpu, kCPU, "mpi"));

  // The cases that need CUDA tensors, through the message itself.
  const Device gpu0(DeviceType::CUDA, 0);
  const std::string other_gpu = distributed::collective_device_problem("all_gather", kFloat64, {4}, gpu0, gpu, "nccl");
  CHECK_THAT(other_gpu, Contains("all_gather") && Contains("float64 [4]") && Contains("is on cuda:0") &&
                            Contains("this rank's device is cuda:1") && Contains("local rank"));
  const std::string cuda_to_mpi = distributed::collective_device_problem("broadcast", kInt64, {}, gpu0, kCPU, "mpi");
  CHECK_THAT(cuda_to_mpi, Contains("broadcast") && Contains("mpi backend moves CPU tensors") && Contains("cuda:0"));
  CHECK(distributed::collective_device_problem("all_reduce", kFloat32, {1}, gpu, gpu, "nccl").empty());
}

TEST_CASE("backend choice: nccl without CUDA or without a GPU is a clear error before MPI starts", "[backend]") {
  const std::string why = distributed::nccl_unavailable_reason();
  if (WICK_WITH_CUDA == 0) CHECK_THAT(why, Contains("without CUDA"));
  if (why.empty()) return;  // a GPU machine: the nccl backend starts (tests/distributed/gpu)
  distributed::InitOptions o;
  o.backend = "nccl";
  try {
    distributed::init_process_group(o);
    FAIL("init_process_group started the nccl backend without a GPU");
  } catch (const DeviceUnavailable& e) {
    const std::string m = e.what();
    CHECK_THAT(m, Contains("init_process_group") && Contains("nccl") && Contains(why) && Contains("\"mpi\""));
  }
  CHECK_FALSE(distributed::is_initialized());
  o.backend = "gloo";
  CHECK_THROWS_WITH(distributed::init_process_group(o), Contains("unknown backend \"gloo\"") && Contains("\"nccl\""));
  CHECK_FALSE(distributed::is_initialized());
}

TEST_CASE("init_process_group and DistributedDataParallel refuse options past their limits before anything starts",
          "[backend]") {
  // A timeout of milliseconds::max() (a natural "never") used to wrap in the watchdogs'
  // nanoseconds and abort the job at its first wait; bucket caps past 2^43 MB made the byte
  // count's conversion UB.
  distributed::InitOptions o;
  for (auto t : {std::chrono::milliseconds::max(), distributed::kMaxTimeout + std::chrono::milliseconds(1),
                 std::chrono::milliseconds(0), std::chrono::milliseconds(-5)}) {
    CAPTURE(t.count());
    o.timeout = t;
    CHECK_THROWS_AS(distributed::init_process_group(o), ValueError);
    CHECK_THROWS_WITH(distributed::init_process_group(o), Contains("timeout") && Contains("at most"));
    CHECK_FALSE(distributed::is_initialized());
  }
  auto module = nn::Linear(2, 2).ptr();
  for (double cap :
       {1e13, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(), 0.0, -1.0}) {
    CAPTURE(cap);
    distributed::DistributedDataParallelOptions opts;
    opts.bucket_cap_mb = cap;
    CHECK_THROWS_AS(distributed::DistributedDataParallel(module, opts), ValueError);
    CHECK_THROWS_WITH(distributed::DistributedDataParallel(module, opts), Contains("bucket_cap_mb"));
  }
}
