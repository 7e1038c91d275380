#pragma once
// The one Fisher-Yates shuffle of wick::data (BatchLoader's epochs, RandomSampler,
// DistributedRandomSampler): driven by wick's counter-based hash, so an order depends only on
// `stream`, on every platform (std::shuffle and std::uniform_int_distribution do not promise that).
#include <cstdint>
#include <utility>
#include <vector>

#include "wick/core/generator.h"

namespace wick::data::detail {

/// Shuffles `v` in place; the permutation depends only on (v.size(), stream).
template <class T>
void shuffle_in_place(std::vector<T>& v, uint64_t stream) {
  for (size_t i = v.size(); i > 1; --i) {
    const uint64_t r = math::random_bits(stream, i - 1);
    const auto j = static_cast<size_t>((static_cast<unsigned __int128>(r) * i) >> 64);  // uniform in [0, i)
    std::swap(v[i - 1], v[j]);
  }
}

}  // namespace wick::data::detail
