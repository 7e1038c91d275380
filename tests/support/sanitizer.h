#pragma once
// Whether the test executable was built under a sanitizer, asked at run time so that a test file
// needs no preprocessor conditional (a test file with one compiles alone, Note [Test batches]).
namespace wick::test {

/// True when built with AddressSanitizer, ThreadSanitizer or MemorySanitizer (GCC or Clang).
bool sanitizer_build();

}  // namespace wick::test
