// The Communicator registry and the local communicator (Note [Choosing a communicator]).
#include "wick/parallel/communicator.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>

#include "split_over_devices.h"
#include "wick/config.h"
#include "wick/core/cpu_multiversion.h"
#include "wick/core/error.h"
#include "wick/core/int_math.h"
#include "wick/core/native.h"

namespace wick::parallel {

#if WICK_WITH_CUDA
namespace detail {
// nccl_communicator.cpp: registers the NCCL factory (called once, lazily; no static initialiser).
void register_nccl_communicator();
}  // namespace detail
#endif

namespace {

bool host_contiguous(const Tensor& t) { return t.is_cpu() && t.is_contiguous(); }

// A broadcast's destination buffers were last read by their own device's thread (the replica's
// forward and backward), so another core writing them must first take each line from that core's
// cache: on two cores without a shared cache, cpu:0's thread copied its half of cpu:1's replica
// 4-5 times slower than cpu:1's thread copied the other half (170 vs 35 us per 1.3 MB). Cut into
// several parts per device, the faster thread claims more of them (docs/parallel.md, "13th
// session"); where the cores share a cache the parts still split evenly.
constexpr int64_t kBroadcastPartsPerDevice = 4;

// dst <- src, same dtype and numel; dst contiguous.
void copy_into(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0 || dst.data_ptr() == src.data_ptr()) return;
  if (host_contiguous(dst) && host_contiguous(src)) {
    std::memcpy(dst.data_ptr(), src.data_ptr(), src.nbytes());
  } else {
    native::copy_(dst, src.sizes() == dst.sizes() ? src : native::reshape(src, dst.sizes()));
  }
}

// One pass per chunk: o = a + b, or o += b; the pointers do not overlap, so the loops vectorise
// (this file is built with -O3, parallel/CMakeLists.txt; SSE2 and AVX2 builds, Note [CPU
// multiversioning]).
// int64 wraps as two's complement, as core's add does (wrapping_add, Note [Integer overflow and
// conversions]), never signed-overflow UB.
template <typename T>
WICK_CPU_MULTIVERSION void add_two(T* __restrict o, const T* __restrict a, const T* __restrict b, int64_t n) {
  if constexpr (std::is_same_v<T, bool>) {
    for (int64_t k = 0; k < n; ++k) o[k] = a[k] || b[k];
  } else {
    for (int64_t k = 0; k < n; ++k) o[k] = math::wrapping_add(a[k], b[k]);
  }
}
template <typename T>
WICK_CPU_MULTIVERSION void add_to(T* __restrict o, const T* __restrict b, int64_t n) {
  if constexpr (std::is_same_v<T, bool>) {
    for (int64_t k = 0; k < n; ++k) o[k] = o[k] || b[k];
  } else {
    for (int64_t k = 0; k < n; ++k) o[k] = math::wrapping_add(o[k], b[k]);
  }
}

// out[k] = ((ins[0][k] + ins[1][k]) + ins[2][k]) + ... (list order), on host memory, a chunk at
// a time so that each chunk of out stays in the L1 cache while every input is added to it.
template <typename T>
void sum_host(T* out, const std::vector<const T*>& ins, int64_t n) {
  bool aliased = false;
  for (size_t d = 1; d < ins.size(); ++d) aliased = aliased || ins[d] == out;
  std::unique_ptr<T[]> tmp;
  T* o = out;
  if (aliased) {
    tmp.reset(new T[static_cast<size_t>(n)]);
    o = tmp.get();
  }
  constexpr int64_t kChunk = 2048;
  for (int64_t c = 0; c < n; c += kChunk) {
    const int64_t m = std::min(kChunk, n - c);
    size_t d = 1;
    if (ins.size() == 1) {
      if (o != ins[0]) std::memcpy(o + c, ins[0] + c, sizeof(T) * static_cast<size_t>(m));
    } else if (o == ins[0]) {
      add_to(o + c, ins[1] + c, m);
      d = 2;
    } else {
      add_two(o + c, ins[0] + c, ins[1] + c, m);
      d = 2;
    }
    for (; d < ins.size(); ++d) add_to(o + c, ins[d] + c, m);
  }
  if (aliased) std::memcpy(out, o, sizeof(T) * static_cast<size_t>(n));
}

// The CPU devices of `ts` and of `out` (the devices whose threads share a host collective,
// Note [Local collectives use every device's thread]).
std::vector<Device> devices_of(const std::vector<Tensor>& ts, const Tensor& out) {
  std::vector<Device> ds{out.device()};
  for (const Tensor& t : ts) ds.push_back(t.device());
  return ds;
}

int64_t total(const std::vector<int64_t>& sizes) {
  int64_t n = 0;
  for (int64_t s : sizes) n += s;
  return n;
}

// For pieces of `sizes` elements packed back to back, calls f(i, at, offset, len) for each piece
// i that overlaps [b, e): its elements [at, at + len) lie at [offset, offset + len) of the pack.
template <typename F>
void for_each_segment(const std::vector<int64_t>& sizes, int64_t b, int64_t e, F&& f) {
  int64_t offset = 0;
  for (size_t i = 0; i < sizes.size() && offset < e; ++i) {
    const int64_t lo = std::max(b, offset), hi = std::min(e, offset + sizes[i]);
    if (lo < hi) f(i, lo - offset, lo, hi - lo);
    offset += sizes[i];
  }
}

// Calls f.template operator()<T>() with T the C++ type of `dtype`.
template <typename F>
void with_host_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Bool:
      f.template operator()<bool>();
      break;
    case DType::Int64:
      f.template operator()<int64_t>();
      break;
    case DType::Float32:
      f.template operator()<float>();
      break;
    case DType::Float64:
      f.template operator()<double>();
      break;
  }
}

// out = sum of ins, all contiguous host memory of out's dtype, split over the devices' threads.
void sum_host(const Tensor& out, const std::vector<Tensor>& ins) {
  with_host_type(out.dtype(), [&]<typename T>() {
    T* o = static_cast<T*>(out.data_ptr());
    std::vector<const T*> ptrs;
    ptrs.reserve(ins.size());
    for (const Tensor& t : ins) ptrs.push_back(static_cast<const T*>(t.data_ptr()));
    detail::split_over_cpu_devices(devices_of(ins, out), out.numel(), 64 / sizeof(T), [&](int64_t b, int64_t e) {
      std::vector<const T*> part(ptrs);
      for (const T*& p : part) p += b;
      sum_host<T>(o + b, part, e - b);
    });
  });
}

// out = sum of ins (list order); out may be one of the inputs.
void sum_into(const Tensor& out, const std::vector<Tensor>& ins) {
  if (out.numel() == 0) return;
  bool host = host_contiguous(out);
  for (const Tensor& t : ins) host = host && host_contiguous(t) && t.dtype() == out.dtype();
  if (host) {
    sum_host(out, ins);
    return;
  }
  // Accelerators or mixed lists: bring each input to out's device, add with native ops.
  const Device dev = out.device();
  auto on_dev = [&](const Tensor& t) {
    Tensor r = t.device() == dev ? t : native::to(t, dev, t.dtype());
    return r.sizes() == out.sizes() ? r : native::reshape(r, out.sizes());
  };
  Tensor acc = native::clone(on_dev(ins[0]));
  for (size_t d = 1; d < ins.size(); ++d) native::binary_(BinaryOp::Add, acc, on_dev(ins[d]));
  copy_into(out, acc);
}

// Note [Communicator operands]: every Communicator entry takes tensors of one dtype whose element
// counts match (communicator.h). comm:: checks that before calling; the local communicator, which
// local_communicator() hands to anyone, checks it again (a few comparisons per tensor, no data
// touched), so a direct caller gets an error instead of a copy past a buffer's end.
void check_operand(const char* op, const char* what, size_t i, const Tensor& t, DType dtype, int64_t numel) {
  WICK_CHECK(t.defined(), "Communicator::{}: {} {} is undefined", op, what, i);
  WICK_CHECK_TYPE(t.dtype() == dtype,
                  "Communicator::{}: {} {} is {} but the collective moves {}: every tensor of a collective has one "
                  "dtype (convert with .to(dtype) first)",
                  op, what, i, t.dtype(), dtype);
  WICK_CHECK(t.numel() == numel,
             "Communicator::{}: {} {} has {} elements (shape {}) but the collective moves {}: every tensor must "
             "hold as many elements",
             op, what, i, t.numel(), fmt::format("[{}]", fmt::join(t.sizes(), ", ")), numel);
}
void check_operands(const char* op, const char* what, const std::vector<Tensor>& ts, DType dtype, int64_t numel) {
  for (size_t i = 0; i < ts.size(); ++i) check_operand(op, what, i, ts[i], dtype, numel);
}
// ts is not empty and every tensor is like ts[0].
void check_like_first(const char* op, const char* what, const std::vector<Tensor>& ts) {
  WICK_CHECK(!ts.empty(), "Communicator::{}: no {}", op, what);
  WICK_CHECK(ts[0].defined(), "Communicator::{}: {} 0 is undefined", op, what);
  check_operands(op, what, ts, ts[0].dtype(), ts[0].numel());
}

class LocalCommunicator final : public Communicator {
 public:
  std::string name() const override { return "local"; }

  void broadcast(const std::vector<Tensor>& tensors) override {
    if (tensors.empty()) return;
    check_like_first("broadcast", "tensor", tensors);
    for (size_t i = 1; i < tensors.size(); ++i) copy_into(tensors[i], tensors[0]);
  }

  void reduce(const std::vector<Tensor>& inputs, const Tensor& output, int root) override {
    WICK_CHECK_INDEX(!inputs.empty() && root >= 0 && static_cast<size_t>(root) < inputs.size(),
                     "Communicator::reduce: root {} is not an index of the {} inputs", root, inputs.size());
    check_like_first("reduce", "input", inputs);
    check_operand("reduce", "output", 0, output, inputs[0].dtype(), inputs[0].numel());
    sum_into(output, inputs);
  }

  void all_reduce(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) override {
    WICK_CHECK(inputs.size() == outputs.size() && !inputs.empty(),
               "Communicator::all_reduce: expected one output per input, got {} inputs and {} outputs", inputs.size(),
               outputs.size());
    check_like_first("all_reduce", "input", inputs);
    check_operands("all_reduce", "output", outputs, inputs[0].dtype(), inputs[0].numel());
    Tensor total = native::empty(inputs[0].sizes(), inputs[0].dtype(), inputs[0].device());
    sum_into(total, inputs);
    for (const Tensor& o : outputs) copy_into(o, total);
  }

  // Each piece goes straight from the source into every destination bucket: the bytes of one
  // bucket copy per destination, and no staging flatten on the source. On host memory the bucket's
  // range is split over the devices' threads (Note [Local collectives use every device's thread]).
  void broadcast_bucket(const std::vector<Tensor>& pieces, const std::vector<Tensor>& flats) override {
    if (pieces.empty()) return;
    WICK_CHECK(pieces[0].defined(), "Communicator::broadcast_bucket: piece 0 is undefined");
    int64_t held = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
      check_operand("broadcast_bucket", "piece", i, pieces[i], pieces[0].dtype(), pieces[i].numel());
      held += pieces[i].numel();  // each within a real tensor's size, so the sum fits as memory does
    }
    for (size_t i = 0; i < flats.size(); ++i) {
      check_operand("broadcast_bucket", "flat buffer", i, flats[i], pieces[0].dtype(), flats[i].numel());
      WICK_CHECK(flats[i].dim() == 1 && flats[i].numel() >= held && flats[i].is_contiguous(),
                 "Communicator::broadcast_bucket: flat buffer {} (shape {}) must be 1-d, contiguous and hold the {} "
                 "elements of the pieces",
                 i, fmt::format("[{}]", fmt::join(flats[i].sizes(), ", ")), held);
    }
    bool host = true;
    std::vector<Device> devices;
    std::vector<int64_t> sizes;
    for (const Tensor& p : pieces) {
      host = host && host_contiguous(p);
      devices.push_back(p.device());
      sizes.push_back(p.numel());
    }
    for (const Tensor& f : flats) {
      host = host && f.is_cpu();
      devices.push_back(f.device());
    }
    if (host && !pieces.empty()) {
      const size_t elem = pieces[0].element_size();
      detail::split_over_cpu_devices(
          devices, total(sizes), 64 / static_cast<int64_t>(elem),
          [&](int64_t b, int64_t e) {
            for_each_segment(sizes, b, e, [&](size_t i, int64_t at, int64_t offset, int64_t len) {
              const char* src = static_cast<const char*>(pieces[i].data_ptr()) + at * static_cast<int64_t>(elem);
              for (const Tensor& f : flats)
                std::memcpy(static_cast<char*>(f.data_ptr()) + offset * static_cast<int64_t>(elem), src,
                            static_cast<size_t>(len) * elem);
            });
          },
          kBroadcastPartsPerDevice);
      return;
    }
    int64_t offset = 0;
    for (const Tensor& p : pieces) {
      const int64_t n = p.numel();
      if (n > 0)
        for (const Tensor& f : flats) native::copy_(native::view(native::narrow(f, 0, offset, n), p.sizes()), p);
      offset += n;
    }
  }

  // The host path splits the whole bucket's range (every tensor's elements, back to back) over
  // the devices' threads at once, as broadcast_bucket does: the split then falls where the next
  // broadcast's and the optimizer's fall (Note [Claimed parts]), not at each tensor's middle.
  void reduce_bucket_each(const std::vector<std::vector<Tensor>>& pieces, const std::vector<Tensor>& outs) override {
    if (outs.empty()) return;
    WICK_CHECK(!pieces.empty(), "Communicator::reduce_bucket_each: no device's pieces to reduce");
    WICK_CHECK(outs[0].defined(), "Communicator::reduce_bucket_each: output 0 is undefined");
    for (size_t i = 0; i < outs.size(); ++i)
      check_operand("reduce_bucket_each", "output", i, outs[i], outs[0].dtype(), outs[i].numel());
    for (size_t d = 0; d < pieces.size(); ++d) {
      WICK_CHECK(pieces[d].size() == outs.size(),
                 "Communicator::reduce_bucket_each: device {} gives {} pieces for {} outputs; each device gives one "
                 "per output",
                 d, pieces[d].size(), outs.size());
      for (size_t i = 0; i < outs.size(); ++i)
        check_operand("reduce_bucket_each", "piece", i, pieces[d][i], outs[0].dtype(), outs[i].numel());
    }
    bool host = true;
    std::vector<Device> devices;
    std::vector<int64_t> sizes;
    for (const Tensor& o : outs) {
      host = host && host_contiguous(o) && o.dtype() == outs[0].dtype();
      devices.push_back(o.device());
      sizes.push_back(o.numel());
    }
    for (const auto& list : pieces)
      for (const Tensor& t : list) {
        host = host && host_contiguous(t) && t.dtype() == outs[0].dtype();
        devices.push_back(t.device());
      }
    if (host) {  // the columns' sums, split over the devices' threads
      with_host_type(outs[0].dtype(), [&]<typename T>() {
        detail::split_over_cpu_devices(devices, total(sizes), 64 / sizeof(T), [&](int64_t b, int64_t e) {
          std::vector<const T*> column(pieces.size());
          for_each_segment(sizes, b, e, [&](size_t i, int64_t at, int64_t, int64_t len) {
            for (size_t d = 0; d < pieces.size(); ++d) column[d] = static_cast<const T*>(pieces[d][i].data_ptr()) + at;
            sum_host<T>(static_cast<T*>(outs[i].data_ptr()) + at, column, len);
          });
        });
      });
      return;
    }
    std::vector<Tensor> column(pieces.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      for (size_t d = 0; d < pieces.size(); ++d) column[d] = pieces[d][i];
      if (outs[i].numel() > 0) sum_into(outs[i], column);
    }
  }

  // A flat bucket buys nothing where no bytes cross a link (comm.cpp's reduce_add_coalesced).
  bool wants_flat_buckets() const override { return false; }
};

// The factories live in an immutable list that register/unregister replace (copy on write):
// select_communicator takes the current list under the lock (one reference count) and asks the
// factories outside it, so a factory may select, register or unregister in turn (delegating to
// another communicator) without deadlocking, and a collective copies no factory.
using FactoryList = std::vector<std::tuple<int, std::string, CommunicatorFactory>>;
struct Registry {
  std::mutex mutex;
  int next_id = 0;
  std::shared_ptr<const FactoryList> factories = std::make_shared<const FactoryList>();
};

Registry& registry() {
  static Registry r;
  return r;
}

void ensure_builtin_factories() {
#if WICK_WITH_CUDA
  static std::once_flag once;
  std::call_once(once, [] { detail::register_nccl_communicator(); });
#endif
}

}  // namespace

void Communicator::broadcast_bucket(const std::vector<Tensor>& pieces, const std::vector<Tensor>& flats) {
  if (flats.empty()) return;
  std::vector<Tensor> all;
  all.reserve(flats.size() + 1);
  all.push_back(flatten_dense(pieces));
  all.insert(all.end(), flats.begin(), flats.end());
  broadcast(all);
}

void Communicator::reduce_bucket(const std::vector<std::vector<Tensor>>& pieces, const Tensor& flat) {
  std::vector<Tensor> flats;
  int root = -1;
  for (size_t d = 0; d < pieces.size(); ++d) {
    flats.push_back(flatten_dense(pieces[d]));
    if (root < 0 && flats.back().device() == flat.device()) root = static_cast<int>(d);
  }
  WICK_CHECK(root >= 0, "Communicator::reduce_bucket: the destination {} holds none of the inputs", flat.device());
  reduce(flats, flat, root);
}

void Communicator::reduce_bucket_each(const std::vector<std::vector<Tensor>>& pieces, const std::vector<Tensor>& outs) {
  for (size_t i = 0; i < outs.size(); ++i) {
    std::vector<std::vector<Tensor>> one(pieces.size());
    for (size_t d = 0; d < pieces.size(); ++d) one[d].push_back(pieces[d][i]);
    reduce_bucket(one, outs[i]);
  }
}

Communicator& local_communicator() {
  static LocalCommunicator c;
  return c;
}

int register_communicator_factory(std::string name, CommunicatorFactory factory) {
  WICK_CHECK(static_cast<bool>(factory), "register_communicator_factory('{}'): the factory is empty", name);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const int id = r.next_id++;
  auto next = std::make_shared<FactoryList>(*r.factories);
  next->emplace_back(id, std::move(name), std::move(factory));
  r.factories = std::move(next);
  return id;
}

void unregister_communicator_factory(int id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto next = std::make_shared<FactoryList>(*r.factories);
  std::erase_if(*next, [&](const auto& f) { return std::get<0>(f) == id; });
  r.factories = std::move(next);
}

std::shared_ptr<Communicator> select_communicator(const std::vector<Device>& devices, DType dtype) {
  ensure_builtin_factories();
  Registry& r = registry();
  std::shared_ptr<const FactoryList> factories;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    factories = r.factories;  // asked outside the lock (Registry)
  }
  for (const auto& f : *factories)
    if (auto c = std::get<2>(f)(devices, dtype)) return c;
  return std::shared_ptr<Communicator>(std::shared_ptr<Communicator>(), &local_communicator());
}

Tensor flatten_dense(const std::vector<Tensor>& pieces) {
  WICK_CHECK(!pieces.empty(), "flatten_dense: no tensors to flatten");
  int64_t total = 0;
  for (const Tensor& p : pieces) {
    WICK_CHECK_TYPE(p.dtype() == pieces[0].dtype(),
                    "flatten_dense: all tensors must share a dtype and a device; tensor 0 is {} on {}, but a later "
                    "one is {} on {}",
                    pieces[0].dtype(), pieces[0].device(), p.dtype(), p.device());
    WICK_CHECK(p.device() == pieces[0].device(),
               "flatten_dense: all tensors must share a dtype and a device; tensor 0 is {} on {}, but a later one "
               "is {} on {}",
               pieces[0].dtype(), pieces[0].device(), p.dtype(), p.device());
    total += p.numel();
  }
  Tensor flat = native::empty({total}, pieces[0].dtype(), pieces[0].device());
  int64_t offset = 0;
  for (const Tensor& p : pieces) {
    if (p.numel()) copy_into(native::narrow(flat, 0, offset, p.numel()), p);
    offset += p.numel();
  }
  return flat;
}

}  // namespace wick::parallel
