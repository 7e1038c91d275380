#pragma once
// conv_size_t<D>: the per-axis size type of the D-d convolution and pooling options (int64_t,
// Int2 or Int3), in a header of its own that does not include functional.h.
//
// Note [Options headers and functional.h]
// functional.h includes wick/nn/functional_options_pool.h at its end, and that header includes
// the pooling, fold and pixel shuffle options (wick/nn/modules/pooling_options.h and others) so
// that `F::max_pool2d(x, F::MaxPool2dFuncOptions(3))` compiles with functional.h alone, as with
// LibTorch's functional headers. Those options headers include functional.h back (for Int2), so
// whichever of them a file includes first, the others are read inside it, before its own body.
// So nothing they need may be defined after an `#include "wick/nn/functional.h"` in a header they
// include: conv_size_t lives here, with Int2 only declared (conv_options.h, which a file may
// include first, would otherwise define it too late for pooling_options.h), and
// functional_options_pool.h declares the option templates before it names them.
#include <cstddef>
#include <cstdint>

#include "wick/nn/int3.h"

namespace wick::nn {

struct Int2;  // wick/nn/functional.h

namespace detail {
template <size_t D>
struct ConvSize;
template <>
struct ConvSize<1> {
  using type = int64_t;
};
template <>
struct ConvSize<2> {
  using type = Int2;
};
template <>
struct ConvSize<3> {
  using type = Int3;
};
}  // namespace detail

/// The per-axis sizes of a D-d convolution: int64_t, Int2 or Int3 (LibTorch's ExpandingArray<D>).
template <size_t D>
using conv_size_t = typename detail::ConvSize<D>::type;

}  // namespace wick::nn
