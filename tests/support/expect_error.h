#pragma once
// Asserting that a call throws a typed wick::Error whose message holds given words.
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

namespace wick::test {

/// Runs `f`, which must throw E whose message holds every one of `parts`: one CHECK_THAT per part,
/// then CHECK that it threw (a call that returns fails that CHECK and the test goes on).
template <class E>
void check_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  using Catch::Matchers::Contains;
  bool thrown = false;
  try {
    f();
  } catch (const E& e) {
    thrown = true;
    for (const std::string& p : parts) CHECK_THAT(e.what(), Contains(p));
  }
  CHECK(thrown);
}

/// Runs `call`, which must throw E whose message holds every one of `words`: one CHECK per word,
/// the message as INFO; a call that returns FAILs the test case ("no error").
template <class E>
void expect_error(const std::function<void()>& call, const std::vector<std::string>& words) {
  try {
    call();
    FAIL("no error");
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const std::string& w : words) {
      INFO(msg);
      CHECK(msg.find(w) != std::string::npos);
    }
  }
}

}  // namespace wick::test
