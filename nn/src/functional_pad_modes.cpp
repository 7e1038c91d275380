// F::pad's reflect, replicate and circular modes, with PyTorch 1.13's rules (at::_pad_enum, the
// reflection_pad and replication_pad kernels' checks, at::_pad_circular), and PadMode's names.
//
// Each padded dim is one index_select whose index, computed on the host, says which input
// position each output position reads. The gradient is then index_select's (the output gradient
// added back at those positions, so an input position read twice gets both), itself
// differentiable, and the same on every device and for every dtype, with no kernel of its own.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn {

const char* pad_mode_name(PadMode mode) {
  switch (mode) {
    case PadMode::Constant:
      return "constant";
    case PadMode::Zeros:
      return "zeros";
    case PadMode::Reflect:
      return "reflect";
    case PadMode::Replicate:
      return "replicate";
    case PadMode::Circular:
      return "circular";
  }
  return "?";
}

PadMode pad_mode_from_string(const std::string& s) {
  for (PadMode m : {kConstant, kZeros, kReflect, kReplicate, kCircular})
    if (s == pad_mode_name(m)) return m;
  WICK_FAIL("unknown padding mode '{}': expected 'constant', 'zeros', 'reflect', 'replicate' or 'circular'", s);
}

namespace functional {

namespace {
// One padded dim: its size, its (before, after) pads and the size they give.
struct DimPad {
  int64_t dim = 0, size = 0, before = 0, after = 0, out = 0;
};

std::string pads_str(const std::vector<int64_t>& pad) { return fmt::format("({})", fmt::join(pad, ", ")); }

// PyTorch 1.13 pads k = 1, 2 or 3 trailing dims of an input with one more dim (unbatched:
// [C, *]) or two more ([N, C, *]); circular only the batched form (later PyTorch versions take
// the unbatched one too).
void check_rank(const Tensor& input, const std::vector<int64_t>& pad, PadMode mode) {
  const int64_t k = static_cast<int64_t>(pad.size() / 2), r = input.dim();
  const bool batched = r == k + 2, unbatched = r == k + 1;
  const bool circular = mode == PadMode::Circular;
  WICK_CHECK_NOT_IMPLEMENTED(
      k >= 1 && k <= 3 && (batched || (unbatched && !circular)),
      "pad: mode {} pads the last k = 1, 2 or 3 dims of a {} input, as PyTorch 1.13; got {} pads {} (k = {}) for "
      "the {}-d input {}{}",
      pad_mode_name(mode), circular ? "(k + 2)-d [N, C, *]" : "(k + 1)-d [C, *] or (k + 2)-d [N, C, *]", pad.size(),
      pads_str(pad), k, r, detail::shape_str(input),
      circular && unbatched ? "; add the batch dim with unsqueeze(0)" : "");
}

// PyTorch 1.13's reflection and replication kernels refuse an empty dim other than the batch
// dim; reflect over 1 or 2 dims also takes an empty first dim of an unbatched input.
void check_not_empty(const Tensor& input, size_t pairs, PadMode mode) {
  const bool batched = input.dim() == static_cast<int64_t>(pairs) + 2;
  const int64_t first = batched || (mode == PadMode::Reflect && pairs <= 2) ? 1 : 0;
  for (int64_t d = first; d < input.dim(); ++d)
    WICK_CHECK(input.size(d) > 0,
               "pad: mode {} takes an empty dim {}, as PyTorch 1.13, but dim {} of input {} is empty",
               pad_mode_name(mode), first == 1 ? "only as the first (batch) dim" : "in no dim of this input", d,
               detail::shape_str(input));
}

// Every padded dim's geometry, checked; nothing is computed before all of them pass.
std::vector<DimPad> check_geometry(const Tensor& input, const std::vector<int64_t>& pad, PadMode mode) {
  const char* name = pad_mode_name(mode);
  const std::string shape = detail::shape_str(input);
  std::vector<DimPad> dims;
  bool some_value = false;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    DimPad p;
    p.dim = input.dim() - 1 - static_cast<int64_t>(i);
    p.size = input.size(p.dim);
    p.before = pad[2 * i];
    p.after = pad[2 * i + 1];
    WICK_CHECK(!add_overflow(p.size, p.before, &p.out) && !add_overflow(p.out, p.after, &p.out),
               "pad: padding ({}, {}) of dim {} (size {}) overflows int64 (mode {}, input {})", p.before, p.after,
               p.dim, p.size, name, shape);
    if (mode == PadMode::Reflect)
      WICK_CHECK(p.before < p.size && p.after < p.size,
                 "pad: mode reflect needs each pad below the size of its dim, got padding ({}, {}) for dim {} of "
                 "size {} (pads {}, input {})",
                 p.before, p.after, p.dim, p.size, pads_str(pad), shape);
    if (mode == PadMode::Circular)
      WICK_CHECK(p.before <= p.size && p.after <= p.size,
                 "pad: mode circular wraps around at most once, so each pad must be <= the size of its dim; got "
                 "padding ({}, {}) for dim {} of size {} (pads {}, input {})",
                 p.before, p.after, p.dim, p.size, pads_str(pad), shape);
    WICK_CHECK(p.out >= 0, "pad: padding ({}, {}) of dim {} (size {}) gives a negative size {} (mode {}, input {})",
               p.before, p.after, p.dim, p.size, p.out, name, shape);
    if (mode == PadMode::Circular) {
      // Cropping comes first; the wrap then reads what is left, which must hold each pad.
      const int64_t left = p.size + std::min<int64_t>(p.before, 0) + std::min<int64_t>(p.after, 0);
      WICK_CHECK(p.before <= left && p.after <= left,
                 "pad: mode circular crops first and then wraps around what is left, but padding ({}, {}) leaves {} "
                 "of the {} values of dim {}, fewer than it wraps (pads {}, input {}); PyTorch 1.13 returns values "
                 "it never wrote, or fails, here",
                 p.before, p.after, left, p.size, p.dim, pads_str(pad), shape);
    }
    some_value = some_value || p.out > 0;
    dims.push_back(p);
  }
  if (mode != PadMode::Circular)
    WICK_CHECK(some_value,
               "pad: mode {} with pads {} leaves input {} no output value in any padded dim (as PyTorch "
               "1.13 refuses it)",
               name, pads_str(pad), shape);
  return dims;
}

// The input position each output position of one dim reads (int64, on the host).
Tensor read_positions(const DimPad& p, PadMode mode) {
  Tensor index = native::empty({p.out}, kInt64, kCPU);
  int64_t* ix = index.data_ptr<int64_t>();
  const int64_t n = p.size, b = p.before;
  if (mode == PadMode::Circular) {
    const int64_t first = std::max<int64_t>(-b, 0), left = n + std::min<int64_t>(b, 0) + std::min<int64_t>(p.after, 0);
    const int64_t shift = std::max<int64_t>(b, 0);
    for (int64_t j = 0; j < p.out; ++j) ix[j] = first + (((j - shift) % left) + left) % left;
  } else if (mode == PadMode::Reflect) {
    // q = j - before is the position in the input's frame; mirror it about 0 and n - 1 (|q|
    // stays below 2n - 1, as each pad is below n).
    for (int64_t j = 0; j < p.out; ++j) ix[j] = (n - 1) - std::abs((n - 1) - std::abs(j - b));
  } else {
    // Clamped to [0, n - 1], compared before subtracting: a pad may be near int64's ends.
    for (int64_t j = 0; j < p.out; ++j) ix[j] = j < b ? 0 : (j - n >= b ? n - 1 : j - b);
  }
  return index;
}
}  // namespace

Tensor pad(const Tensor& input, const std::vector<int64_t>& pad, PadMode mode, std::optional<double> value) {
  if (mode == PadMode::Constant) return functional::pad(input, pad, value.value_or(0.0));
  WICK_CHECK(input.defined(), "pad: input is undefined");
  WICK_CHECK(pad.size() % 2 == 0 && pad.size() / 2 <= static_cast<size_t>(input.dim()),
             "pad: expected (before, after) pairs for at most {} dims (the input is {}), got {} values", input.dim(),
             detail::shape_str(input), pad.size());
  WICK_CHECK(mode != PadMode::Zeros,
             "pad: mode zeros is Conv2d's padding_mode; F::pad pads with zeros in mode constant (kConstant)");
  WICK_CHECK(!value || *value == 0.0, "pad: mode {} takes no value (got {}); the value is for mode constant",
             pad_mode_name(mode), *value);
  check_rank(input, pad, mode);
  if (mode != PadMode::Circular) check_not_empty(input, pad.size() / 2, mode);
  const std::vector<DimPad> dims = check_geometry(input, pad, mode);
  Tensor out = input;
  bool copied = false;
  for (const DimPad& p : dims) {
    if (p.before == 0 && p.after == 0) continue;
    out = index_select(out, p.dim, native::to(read_positions(p, mode), input.device(), kInt64));
    copied = true;
  }
  return copied ? out : clone(input);  // a new tensor even when nothing is padded, as PyTorch
}

}  // namespace functional

}  // namespace wick::nn
