// CPU elementwise kernels: unary, binary, where, copy/cast, fill, arange, random. Each splits across
// the device's intra-op threads past kElementwiseGrain elements (Note [Intra-op threads]).
#include <algorithm>
#include <cmath>

#include "cpu/cpu_backend.h"
#include "cpu/loop.h"
#include "wick/core/cpu_multiversion.h"
#include "wick/core/generator.h"
#include "wick/core/int_math.h"
#include "wick/core/op_dispatch.h"
#include "wick/core/stubs.h"

namespace wick::cpu {

namespace {
// Contiguous inner loops with no aliasing between output and inputs unless they are the same
// array (in-place): the restrict-qualified version runs only when the ranges are disjoint, so
// GCC vectorises it; relu/where/max become branch-free selects. Each is built for SSE2 and AVX2
// (Note [CPU multiversioning]).
template <typename R, typename T, typename F>
WICK_CPU_MULTIVERSION void contiguous_unary(R* po, const T* pa, int64_t n, F fn, double p0, double p1) {
  if (static_cast<const void*>(po) == static_cast<const void*>(pa)) {
    for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[i], p0, p1);
    return;
  }
  R* __restrict__ o = po;
  const T* __restrict__ a = pa;
  for (int64_t i = 0; i < n; ++i) o[i] = fn(a[i], p0, p1);
}
template <typename R, typename T, typename F>
WICK_CPU_MULTIVERSION void contiguous_binary(R* po, const T* pa, const T* pb, int64_t n, F fn) {
  if (static_cast<const void*>(po) == static_cast<const void*>(pa) ||
      static_cast<const void*>(po) == static_cast<const void*>(pb)) {
    for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[i], pb[i]);
    return;
  }
  R* __restrict__ o = po;
  const T* __restrict__ a = pa;
  const T* __restrict__ b = pb;
  for (int64_t i = 0; i < n; ++i) o[i] = fn(a[i], b[i]);
}
template <typename R, typename T, typename F>
WICK_CPU_MULTIVERSION void contiguous_binary_scalar(R* po, const T* pa, T b, int64_t n, F fn) {
  if (static_cast<const void*>(po) == static_cast<const void*>(pa)) {
    for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[i], b);
    return;
  }
  R* __restrict__ o = po;
  const T* __restrict__ a = pa;
  for (int64_t i = 0; i < n; ++i) o[i] = fn(a[i], b);
}
}  // namespace

void CpuBackend::unary(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1) {
  auto L = layout_of<2>({&out, &in});
  dispatch(out.dtype, "unary", [&]<typename T>() {
    dispatch_unary_op(op, [&](auto fn) {
      T* o = reinterpret_cast<T*>(out.data);
      const T* a = reinterpret_cast<const T*>(in.data);
      for_each_row_parallel(L, [&](const int64_t* off, int64_t n, const int64_t* st) {
        T* po = o + off[0];
        const T* pa = a + off[1];
        if (st[0] == 1 && st[1] == 1) {
          contiguous_unary(po, pa, n, fn, p0, p1);
        } else {
          for (int64_t i = 0; i < n; ++i) po[i * st[0]] = fn(pa[i * st[1]], p0, p1);
        }
      });
    });
  });
}

void CpuBackend::binary(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b) {
  auto L = layout_of<3>({&out, &a, &b});
  dispatch(a.dtype, "binary", [&]<typename T>() {
    dispatch_binary_op(op, [&](auto fn) {
      using R = typename decltype(fn)::template result<T>;
      R* o = reinterpret_cast<R*>(out.data);
      const T* pa0 = reinterpret_cast<const T*>(a.data);
      const T* pb0 = reinterpret_cast<const T*>(b.data);
      for_each_row_parallel(L, [&](const int64_t* off, int64_t n, const int64_t* st) {
        R* po = o + off[0];
        const T* pa = pa0 + off[1];
        const T* pb = pb0 + off[2];
        if (st[0] == 1 && st[1] == 1 && st[2] == 1) {
          contiguous_binary(po, pa, pb, n, fn);
        } else if (st[0] == 1 && st[1] == 1 && st[2] == 0) {
          contiguous_binary_scalar(po, pa, *pb, n, fn);
        } else {
          for (int64_t i = 0; i < n; ++i) po[i * st[0]] = fn(pa[i * st[1]], pb[i * st[2]]);
        }
      });
    });
  });
}

namespace {
// out = op(a, b) for a scalar b (stubs::binary_scalar, Note [Scalar operands]): b converted to a's
// dtype as fill converts it, so the bits are those of the broadcast 0-d tensor, without making one.
void binary_scalar(BinaryOp op, const KernelTensor& out, const KernelTensor& a, double b) {
  auto L = layout_of<2>({&out, &a});
  dispatch(a.dtype, "binary_scalar", [&]<typename T>() {
    const T s = math::convert<T>(b);
    dispatch_binary_op(op, [&](auto fn) {
      using R = typename decltype(fn)::template result<T>;
      R* o = reinterpret_cast<R*>(out.data);
      const T* pa = reinterpret_cast<const T*>(a.data);
      for_each_row_parallel(L, [&](const int64_t* off, int64_t n, const int64_t* st) {
        if (st[0] == 1 && st[1] == 1) {
          contiguous_binary_scalar(o + off[0], pa + off[1], s, n, fn);
        } else {
          for (int64_t i = 0; i < n; ++i) o[off[0] + i * st[0]] = fn(pa[off[1] + i * st[1]], s);
        }
      });
    });
  });
}
}  // namespace

void register_cpu_elementwise_stubs() { stubs::binary_scalar.set(DeviceType::CPU, &binary_scalar); }

namespace {
// where along one row whose output and condition are contiguous, each value operand contiguous
// (k = 1) or one broadcast value (k = 0): the strides known at compile time, so the loop
// vectorises.
template <typename T, int kA, int kB>
void where_row(T* __restrict__ po, const bool* __restrict__ pc, const T* __restrict__ x, const T* __restrict__ y,
               int64_t n) {
  for (int64_t i = 0; i < n; ++i) po[i] = pc[i] ? x[i * kA] : y[i * kB];
}
}  // namespace

void CpuBackend::where(const KernelTensor& out, const KernelTensor& cond, const KernelTensor& a,
                       const KernelTensor& b) {
  auto L = layout_of<4>({&out, &cond, &a, &b});
  dispatch(out.dtype, "where", [&]<typename T>() {
    T* o = reinterpret_cast<T*>(out.data);
    const bool* c = reinterpret_cast<const bool*>(cond.data);
    const T* pa = reinterpret_cast<const T*>(a.data);
    const T* pb = reinterpret_cast<const T*>(b.data);
    for_each_row_parallel(L, [&](const int64_t* off, int64_t n, const int64_t* st) {
      const bool rows = st[0] == 1 && st[1] == 1;  // output and condition contiguous
      auto row = [&](auto loop) { loop(o + off[0], c + off[1], pa + off[2], pb + off[3], n); };
      if (rows && st[2] == 1 && st[3] == 1) {
        row(where_row<T, 1, 1>);
      } else if (rows && st[2] == 1 && st[3] == 0) {
        row(where_row<T, 1, 0>);
      } else if (rows && st[2] == 0 && st[3] == 1) {  // masked_fill's form
        row(where_row<T, 0, 1>);
      } else {
        for (int64_t i = 0; i < n; ++i)
          o[off[0] + i * st[0]] = c[off[1] + i * st[1]] ? pa[off[2] + i * st[2]] : pb[off[3] + i * st[3]];
      }
    });
  });
}

void CpuBackend::copy(const KernelTensor& dst, const KernelTensor& src) {
  auto L = layout_of<2>({&dst, &src});
  dispatch(dst.dtype, "copy", [&]<typename D>() {
    dispatch(src.dtype, "copy", [&]<typename S>() {
      D* o = reinterpret_cast<D*>(dst.data);
      const S* s = reinterpret_cast<const S*>(src.data);
      for_each_row_parallel(L, [&](const int64_t* off, int64_t n, const int64_t* st) {
        D* po = o + off[0];
        const S* ps = s + off[1];
        if (st[0] == 1 && st[1] == 1) {
          for (int64_t i = 0; i < n; ++i) po[i] = math::convert<D>(ps[i]);
        } else if (st[0] == 1 && st[1] == 0) {  // a broadcast row (e.g. a bias over positions)
          std::fill(po, po + n, math::convert<D>(*ps));
        } else {
          for (int64_t i = 0; i < n; ++i) po[i * st[0]] = math::convert<D>(ps[i * st[1]]);
        }
      });
    });
  });
}

void CpuBackend::fill(const KernelTensor& dst, double value) {
  auto L = layout_of<1>({&dst});
  dispatch(dst.dtype, "fill", [&]<typename T>() {
    T* o = reinterpret_cast<T*>(dst.data);
    const T v = math::convert<T>(value);
    for_each_row_parallel(L, [&](const int64_t* off, int64_t n, const int64_t* st) {
      if (st[0] == 1) {
        std::fill(o + off[0], o + off[0] + n, v);
      } else {
        for (int64_t i = 0; i < n; ++i) o[off[0] + i * st[0]] = v;
      }
    });
  });
}

void CpuBackend::arange(const KernelTensor& out, double start, double step) {
  int64_t n = 1;
  for (auto s : out.sizes) n *= s;
  dispatch(out.dtype, "arange", [&]<typename T>() {
    T* o = reinterpret_cast<T*>(out.data);
    parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = static_cast<T>(start + static_cast<double>(i) * step);
    });
  });
}

void CpuBackend::random(const KernelTensor& out, RandomKind kind, double a, double b, uint64_t seed, uint64_t offset) {
  int64_t n = 1;
  for (auto s : out.sizes) n *= s;
  dispatch(out.dtype, "random", [&]<typename T>() {
    T* o = reinterpret_cast<T*>(out.data);
    // Element i draws from counter offset + i (Note [Random affine maps]): any split gives the same bits.
    parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        o[i] = math::random_value<T>(kind, a, b, seed, offset + static_cast<uint64_t>(i));
    });
  });
}

}  // namespace wick::cpu
