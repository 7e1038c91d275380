// Copies between layouts, dtypes and devices.
//
// Note [Cross-device copies]
// A copy within one device type is the backend's `copy` (CUDA handles peers itself). A copy
// between device types is staged: the source is made contiguous in the destination's dtype on
// its own device, its bytes move with copy_bytes_host (the CUDA side owns the transfer), and a
// final same-device copy writes them into the destination's layout. Between two non-CPU types
// (CUDA and a registered one, Note [Device registry]) no backend can reach the other's memory,
// so the bytes go through a host tensor: each side moves them with its own copy_bytes_host.
#include "memory_overlap.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::native {

void copy_(const Tensor& dst, const Tensor& source) {
  WICK_CHECK(dst.defined() && source.defined(), "copy_: undefined tensor");
  WICK_CHECK(broadcast_shapes(dst.sizes(), source.sizes(), "copy_") == DimVector(dst.sizes()),
             "copy_: the source of shape [{}] cannot be broadcast to the destination's shape [{}]",
             fmt::join(source.sizes(), ", "), fmt::join(dst.sizes(), ", "));
  check_no_internal_overlap(dst, "copy_");  // Note [In-place writes and overlapping memory]
  dst.bump_version();
  if (dst.numel() == 0) return;
  const Tensor src = unaliased_operand(source, dst);
  // A tensor copied onto itself (same memory, layout and dtype) is already the result; a backend's
  // memcpy must not be given overlapping ranges.
  if (src.data_ptr() == dst.data_ptr() && src.dtype() == dst.dtype() && src.device() == dst.device() &&
      src.sizes() == dst.sizes() && src.strides() == dst.strides())
    return;
  const Device dd = dst.device(), sd = src.device();
  if (dd.type == sd.type) {
    if (dd.type == DeviceType::CPU || dd == sd) {
      backend(dd).copy(kernel_tensor(dst), kernel_tensor_broadcast(src, dst.sizes()));
      return;
    }
    // Two devices of one accelerator type: move contiguous bytes peer-to-peer.
    Tensor s = contiguous(src.dtype() == dst.dtype() ? src : to(src, sd, dst.dtype()));
    Tensor staged = empty(s.sizes(), dst.dtype(), dd);
    backend(dd).copy_bytes_peer(staged.data_ptr(), dd, s.data_ptr(), sd, s.nbytes());
    backend(dd).copy(kernel_tensor(dst), kernel_tensor_broadcast(staged, dst.sizes()));
    return;
  }
  // Across device types (Note [Cross-device copies]).
  if (!sd.is_cpu() && !dd.is_cpu()) {
    Tensor host = empty(src.sizes(), dst.dtype(), kCPU);
    copy_(host, src);
    copy_(dst, host);
    return;
  }
  Tensor s = src;
  if (s.dtype() != dst.dtype()) {
    Tensor c = empty(s.sizes(), dst.dtype(), sd);
    backend(sd).copy(kernel_tensor(c), kernel_tensor(s));
    s = c;
  }
  s = contiguous(s);
  const bool direct = dst.is_contiguous() && DimVector(dst.sizes()) == DimVector(s.sizes());
  Tensor staged = direct ? dst : empty(s.sizes(), dst.dtype(), dd);
  if (sd.is_cpu())
    backend(dd).copy_bytes_host(staged.data_ptr(), s.data_ptr(), s.nbytes(), dd, /*to_device=*/true);
  else
    backend(sd).copy_bytes_host(staged.data_ptr(), s.data_ptr(), s.nbytes(), sd, /*to_device=*/false);
  if (!direct) backend(dd).copy(kernel_tensor(dst), kernel_tensor_broadcast(staged, dst.sizes()));
}

Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  return clone(t);
}

Tensor clone(const Tensor& t) {
  Tensor out = empty(t.sizes(), t.dtype(), t.device());
  if (out.numel()) backend(t.device()).copy(kernel_tensor(out), kernel_tensor(t));
  return out;
}

Tensor to(const Tensor& t, Device device, DType dtype) {
  if (t.device() == device && t.dtype() == dtype) return t;
  Tensor out = empty(t.sizes(), dtype, device);
  copy_(out, t);
  out.impl()->version().value.store(0);
  return out;
}

}  // namespace wick::native
