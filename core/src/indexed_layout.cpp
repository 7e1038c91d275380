// The operand layouts of the indexed kernels (Note [Indexed kernels]).
#include "wick/core/indexed_layout.h"

namespace wick {

namespace {
// `t` viewed with `sizes`, stride 0 in `dim` (the index gives the position there).
KernelTensor along_index(const KernelTensor& t, IntArrayRef sizes, int64_t dim) {
  KernelTensor v = t;
  v.sizes = DimVector(sizes);
  v.strides[static_cast<size_t>(dim)] = 0;
  return v;
}

// A 1-d index broadcast to `sizes`, running along `dim`.
KernelTensor broadcast_index(const KernelTensor& index, IntArrayRef sizes, int64_t dim) {
  KernelTensor v = index;
  v.sizes = DimVector(sizes);
  v.strides = DimVector(sizes.size(), 0);
  v.strides[static_cast<size_t>(dim)] = index.strides[0];
  return v;
}
}  // namespace

IndexedLayout index_select_layout(const KernelTensor& out, const KernelTensor& in, int64_t dim,
                                  const KernelTensor& index) {
  const KernelTensor data = along_index(in, out.sizes, dim), idx = broadcast_index(index, out.sizes, dim);
  return {layout_of<3>({&out, &data, &idx}), in.strides[static_cast<size_t>(dim)]};
}

IndexedLayout gather_layout(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) {
  const KernelTensor data = along_index(in, out.sizes, dim);
  return {layout_of<3>({&out, &data, &index}), in.strides[static_cast<size_t>(dim)]};
}

IndexedLayout index_add_layout(const KernelTensor& out, int64_t dim, const KernelTensor& index,
                               const KernelTensor& src) {
  const KernelTensor data = along_index(out, src.sizes, dim), idx = broadcast_index(index, src.sizes, dim);
  return {layout_of<3>({&src, &data, &idx}), out.strides[static_cast<size_t>(dim)]};
}

IndexedLayout scatter_add_layout(const KernelTensor& out, int64_t dim, const KernelTensor& index,
                                 const KernelTensor& src) {
  KernelTensor s = src;
  s.sizes = index.sizes;
  const KernelTensor data = along_index(out, index.sizes, dim);
  return {layout_of<3>({&s, &data, &index}), out.strides[static_cast<size_t>(dim)]};
}

}  // namespace wick
