#pragma once
// The contract every in-place method is checked against (tests/autograd/tensor_methods_*_test.cpp).
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cstdint>

namespace wick::test {

/// Applies `write` to a clone t of `self` and checks the in-place contract: it returns t itself,
/// bumps t's version exactly once, and leaves t equal, bit for bit, to `want`.
template <class Write>
void check_inplace_write(const char* name, const Tensor& self, Write&& write, const Tensor& want) {
  INFO(name);
  Tensor t = self.clone();
  const uint32_t v = t.version();
  Tensor& r = write(t);
  CHECK(&r == &t);
  CHECK(t.version() == v + 1);
  CHECK(t.equal(want));
}

}  // namespace wick::test
