#pragma once
// The operand layouts of the indexed kernels (index_select, gather, index_add, scatter_add),
// built once for every backend (Note [Indexed kernels]). Each backend owns only its loop (the
// CPU) or its launch and atomic add (CUDA).
//
// Note [Indexed kernels]
// An indexed kernel walks three operands of one shape with one StridedLayout<3>. The data
// operand's indexed dim gets stride 0 and the index supplies the position along it, times
// `stride_dim` (the data tensor's stride in that dim):
//   read  (index_select, gather):    out[o0] = data[o1 + index[o2] * stride_dim]
//   write (index_add, scatter_add):  data[o1 + index[o2] * stride_dim] += src[o0]
// index_select and index_add take a 1-d index, broadcast along the other dims (stride 0); gather
// and scatter_add take an index of the walked shape. Indices are bounds-checked before (native).
// The CPU adds in layout order; CUDA adds with atomics, so repeated indices sum in any order.
#include <cstdint>

#include "wick/core/backend.h"
#include "wick/core/kernel_layout.h"

namespace wick {

/// A layout of (out or src, data, index) and the data operand's stride in the indexed dim.
struct IndexedLayout {
  StridedLayout<3> layout;
  int64_t stride_dim = 0;
};

/// out = in.index_select(dim, index): read form, walked over out.
IndexedLayout index_select_layout(const KernelTensor& out, const KernelTensor& in, int64_t dim,
                                  const KernelTensor& index);
/// out = in.gather(dim, index): read form, walked over out (index has out's shape).
IndexedLayout gather_layout(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index);
/// out.index_add_(dim, index, src): write form, walked over src.
IndexedLayout index_add_layout(const KernelTensor& out, int64_t dim, const KernelTensor& index,
                               const KernelTensor& src);
/// out.scatter_add_(dim, index, src): write form, walked over index (src may be larger).
IndexedLayout scatter_add_layout(const KernelTensor& out, int64_t dim, const KernelTensor& index,
                                 const KernelTensor& src);

}  // namespace wick
