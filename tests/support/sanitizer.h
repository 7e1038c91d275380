#pragma once
// Whether the test executable was built under a sanitizer, asked at run time so that a test file
// needs no preprocessor conditional (a test file with one compiles alone, Note [Test batches]).
namespace wick::test {

/// True when built with AddressSanitizer, ThreadSanitizer or MemorySanitizer (GCC or Clang).
bool sanitizer_build();

/// True when built with GCC's -fsanitize=address (__SANITIZE_ADDRESS__), the condition under which
/// the CPU allocator keeps no block cache (core/src/cpu/cpu_allocator.cpp, Note [CPU block cache]).
bool asan_build();

}  // namespace wick::test
