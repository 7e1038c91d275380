#include "wick/core/generator.h"

#include <mutex>

namespace wick {
namespace {
std::mutex g_mutex;
uint64_t g_seed = 67280421310721ull;
uint64_t g_offset = 0;
}  // namespace

void manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_seed = seed;
  g_offset = 0;
}

RandomDraw reserve_random(uint64_t count) {
  std::lock_guard<std::mutex> lock(g_mutex);
  RandomDraw d{g_seed, g_offset};
  g_offset += count;
  return d;
}

RngState get_rng_state() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return RngState{g_seed, g_offset};
}

void set_rng_state(const RngState& state) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_seed = state.seed;
  g_offset = state.counter;
}

}  // namespace wick
