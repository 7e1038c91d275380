#include "support/sanitizer.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WICK_TEST_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define WICK_TEST_SANITIZER 1
#endif
#endif

namespace wick::test {

bool sanitizer_build() {
#ifdef WICK_TEST_SANITIZER
  return true;
#else
  return false;
#endif
}

bool asan_build() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#else
  return false;
#endif
}

}  // namespace wick::test
