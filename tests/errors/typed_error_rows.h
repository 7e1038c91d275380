#pragma once
// The table machinery of the typed-error tests (tests/errors/error_types*_test.cpp, Note [Typed
// errors]): a row is a bad input with the exact class it must raise, checked against every other
// class of the taxonomy and for words its message must contain. Each error_types*_test.cpp file
// adds its tables to row_tables() at static initialisation, so a test can count them all.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "hostile_support.h"
#include "support/temp_dir.h"

namespace wick::test::typed_errors {

/// The class's name ("ValueError", ...), for messages.
template <class E>
constexpr const char* name_of() {
  if constexpr (std::is_same_v<E, ValueError>)
    return "ValueError";
  else if constexpr (std::is_same_v<E, TypeError>)
    return "TypeError";
  else if constexpr (std::is_same_v<E, IndexError>)
    return "IndexError";
  else if constexpr (std::is_same_v<E, NotImplementedError>)
    return "NotImplementedError";
  else if constexpr (std::is_same_v<E, StateError>)
    return "StateError";
  else if constexpr (std::is_same_v<E, FormatError>)
    return "FormatError";
  else if constexpr (std::is_same_v<E, IOError>)
    return "IOError";
  else if constexpr (std::is_same_v<E, DeviceUnavailable>)
    return "DeviceUnavailable";
  else if constexpr (std::is_same_v<E, BackendError>)
    return "BackendError";
  else if constexpr (std::is_same_v<E, OutOfMemoryError>)
    return "OutOfMemoryError";
  else
    static_assert(sizeof(E) == 0, "name_of: not a class of the taxonomy");
}

// True when what `fn` throws is caught by `catch (const S&)`.
template <class S>
inline bool caught_as(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const S&) {
    return true;
  } catch (...) {
    return false;
  }
  return false;
}

// No class of the taxonomy other than E and its bases catches what `fn` throws.
template <class E, class... S>
inline void check_no_sibling_catches(const std::function<void()>& fn) {
  (
      [=] {
        if constexpr (!std::is_base_of_v<S, E>) {
          INFO("a catch (const " << name_of<S>() << "&) must not catch it");
          CHECK_FALSE(caught_as<S>(fn));
        }
      }(),
      ...);
}

// One bad input: what it is, the call, and the check of its error.
struct Row {
  std::string what;
  std::function<void()> call;
  std::function<void(const Row&)> check;
};

/// A row whose call must raise exactly E, with a message containing every one of `words`.
template <class E>
inline Row row(std::string what, std::function<void()> call, std::vector<std::string> words) {
  return {std::move(what), std::move(call), [words = std::move(words)](const Row& r) {
            INFO("row: " << r.what << " (expects " << name_of<E>() << ")");
            REQUIRE_THROWS_AS(r.call(), E);
            check_no_sibling_catches<E, ValueError, TypeError, IndexError, NotImplementedError, StateError, FormatError,
                                     IOError, DeviceUnavailable, BackendError, OutOfMemoryError>(r.call);
            try {
              r.call();
            } catch (const Error& e) {
              INFO("message: " << e.what());
              CHECK(hostile::class_of(e) == name_of<E>());
              for (const auto& w : words) CHECK_THAT(e.what(), Catch::Matchers::Contains(w));
            }
          }};
}

inline void check_rows(const std::vector<Row>& rows) {
  for (const Row& r : rows) r.check(r);
}

inline Device cpu(int i) { return Device(DeviceType::CPU, i); }
inline TensorOptions f32(Device d = Device("cpu:0")) { return TensorOptions(kFloat32).device(d); }
inline TensorOptions f64(Device d = Device("cpu:0")) { return TensorOptions(kFloat64).device(d); }
inline TensorOptions i64() { return TensorOptions(kInt64); }

// A module whose forward returns a Value of another kind than a Tensor.
struct ReturnsInt : nn::Cloneable<ReturnsInt> {
  int64_t forward(const Tensor&) { return 3; }
};

/// The row tables by name, each built for a temporary directory (the file rows write there).
using RowTable = std::function<std::vector<Row>(const TempDir&)>;
inline std::map<std::string, RowTable>& row_tables() {
  static std::map<std::string, RowTable> tables;
  return tables;
}
/// Adds `tables`; returns true (for a namespace-scope `const bool` initialiser).
inline bool add_row_tables(const std::map<std::string, RowTable>& tables) {
  for (const auto& [name, t] : tables) row_tables().emplace(name, t);
  return true;
}

}  // namespace wick::test::typed_errors
