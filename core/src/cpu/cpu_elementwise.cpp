// CPU elementwise kernels: unary, binary, where, copy/cast, fill, arange, random.
#include <cmath>

#include "cpu/cpu_backend.h"
#include "cpu/loop.h"
#include "wick/core/generator.h"
#include "wick/core/op_dispatch.h"

namespace wick::cpu {

void CpuBackend::unary(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1) {
  auto L = layout_of<2>({&out, &in});
  dispatch(out.dtype, "unary", [&]<typename T>() {
    dispatch_unary_op(op, [&](auto fn) {
      T* o = reinterpret_cast<T*>(out.data);
      const T* a = reinterpret_cast<const T*>(in.data);
      for_each_row(L, [&](const int64_t* off, int64_t n, const int64_t* st) {
        T* po = o + off[0];
        const T* pa = a + off[1];
        if (st[0] == 1 && st[1] == 1) {
          for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[i], p0, p1);
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
      for_each_row(L, [&](const int64_t* off, int64_t n, const int64_t* st) {
        R* po = o + off[0];
        const T* pa = pa0 + off[1];
        const T* pb = pb0 + off[2];
        if (st[0] == 1 && st[1] == 1 && st[2] == 1) {
          for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[i], pb[i]);
        } else if (st[0] == 1 && st[1] == 1 && st[2] == 0) {
          const T bv = *pb;
          for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[i], bv);
        } else {
          for (int64_t i = 0; i < n; ++i) po[i * st[0]] = fn(pa[i * st[1]], pb[i * st[2]]);
        }
      });
    });
  });
}

void CpuBackend::where(const KernelTensor& out, const KernelTensor& cond, const KernelTensor& a,
                       const KernelTensor& b) {
  auto L = layout_of<4>({&out, &cond, &a, &b});
  dispatch(out.dtype, "where", [&]<typename T>() {
    T* o = reinterpret_cast<T*>(out.data);
    const bool* c = reinterpret_cast<const bool*>(cond.data);
    const T* pa = reinterpret_cast<const T*>(a.data);
    const T* pb = reinterpret_cast<const T*>(b.data);
    for_each_row(L, [&](const int64_t* off, int64_t n, const int64_t* st) {
      for (int64_t i = 0; i < n; ++i)
        o[off[0] + i * st[0]] = c[off[1] + i * st[1]] ? pa[off[2] + i * st[2]] : pb[off[3] + i * st[3]];
    });
  });
}

void CpuBackend::copy(const KernelTensor& dst, const KernelTensor& src) {
  auto L = layout_of<2>({&dst, &src});
  dispatch(dst.dtype, "copy", [&]<typename D>() {
    dispatch(src.dtype, "copy", [&]<typename S>() {
      D* o = reinterpret_cast<D*>(dst.data);
      const S* s = reinterpret_cast<const S*>(src.data);
      for_each_row(L, [&](const int64_t* off, int64_t n, const int64_t* st) {
        D* po = o + off[0];
        const S* ps = s + off[1];
        if (st[0] == 1 && st[1] == 1) {
          for (int64_t i = 0; i < n; ++i) po[i] = static_cast<D>(ps[i]);
        } else {
          for (int64_t i = 0; i < n; ++i) po[i * st[0]] = static_cast<D>(ps[i * st[1]]);
        }
      });
    });
  });
}

void CpuBackend::fill(const KernelTensor& dst, double value) {
  auto L = layout_of<1>({&dst});
  dispatch(dst.dtype, "fill", [&]<typename T>() {
    T* o = reinterpret_cast<T*>(dst.data);
    const T v = static_cast<T>(value);
    for_each_row(L, [&](const int64_t* off, int64_t n, const int64_t* st) {
      for (int64_t i = 0; i < n; ++i) o[off[0] + i * st[0]] = v;
    });
  });
}

void CpuBackend::arange(const KernelTensor& out, double start, double step) {
  int64_t n = 1;
  for (auto s : out.sizes) n *= s;
  dispatch(out.dtype, "arange", [&]<typename T>() {
    T* o = reinterpret_cast<T*>(out.data);
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(start + static_cast<double>(i) * step);
  });
}

void CpuBackend::random(const KernelTensor& out, RandomKind kind, double a, double b, uint64_t seed,
                        uint64_t offset) {
  int64_t n = 1;
  for (auto s : out.sizes) n *= s;
  dispatch(out.dtype, "random", [&]<typename T>() {
    T* o = reinterpret_cast<T*>(out.data);
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t c = offset + static_cast<uint64_t>(i);
      double v = 0;
      switch (kind) {
        case RandomKind::Uniform:
          v = a + (b - a) * math::random_uniform(seed, c);
          // A double just below b can round up to b in float32: keep the interval half-open.
          if constexpr (std::is_floating_point_v<T>) {
            if (static_cast<T>(v) >= static_cast<T>(b) && b > a) v = std::nextafter(static_cast<T>(b), static_cast<T>(a));
          }
          break;
        case RandomKind::Normal: v = a + b * math::random_normal(seed, c); break;
        case RandomKind::RandInt: v = a + std::floor(math::random_uniform(seed, c) * (b - a)); break;
        case RandomKind::Bernoulli: v = math::random_uniform(seed, c) < a ? 1.0 : 0.0; break;
      }
      o[i] = static_cast<T>(v);
    }
  });
}

}  // namespace wick::cpu
