// The fingerprint comparison (Note [Collective fingerprints], distributed/src/fingerprint.h), in
// one process: what is compared, what is informational, and how a tag mismatch reads.
#include "fingerprint.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "wick/wick.h"

using namespace wick;
using distributed::CollectiveTag;
using distributed::detail::CollectiveKind;
using distributed::detail::compare_fingerprints;
using distributed::detail::describe;
using distributed::detail::Fingerprint;
using distributed::detail::make_fingerprint;

namespace {

Fingerprint bucket(int64_t sequence, CollectiveTag tag) {
  return make_fingerprint(CollectiveKind::AllReduce, sequence, zeros({8}, kFloat64), 0, tag);
}

}  // namespace

TEST_CASE("fingerprint: the sequence number and caller_waiting are informational, never compared", "[fingerprint]") {
  // The k-th exchange of every rank pairs with the k-th of the others, so the sequence numbers
  // always agree there; comparing them checked nothing.
  Fingerprint a = bucket(5, {3, 1}), b = bucket(6, {3, 1});
  b.caller_waiting = 1;
  CHECK(compare_fingerprints({a, b}).empty());
  CHECK(describe(a) == "all_reduce(sum) #5 [iteration 3, bucket 1] float64 [8] on cpu");
  CHECK(describe(bucket(2, {})) == "all_reduce(sum) #2 float64 [8] on cpu");
  CHECK(describe(bucket(2, {4, -1})) == "all_reduce(sum) #2 [iteration 4, used-parameter map] float64 [8] on cpu");
}

TEST_CASE("fingerprint: tags that differ fail the call, naming each rank's iteration", "[fingerprint]") {
  const std::string msg = compare_fingerprints({bucket(9, {2, 0}), bucket(9, {3, 0}), bucket(9, {2, 0})});
  CHECK_THAT(msg, Catch::Contains("rank 0: all_reduce(sum) #9 [iteration 2, bucket 0]"));
  CHECK_THAT(msg, Catch::Contains("rank 1: all_reduce(sum) #9 [iteration 3, bucket 0]"));
  CHECK_THAT(msg, Catch::Contains("out of step"));
  CHECK_FALSE(compare_fingerprints({bucket(1, {2, 0}), bucket(1, {2, 1})}).empty());
  // A tagged call against an untagged one (a collective of the program's own) fails too, without
  // the hint about iterations.
  const std::string mixed = compare_fingerprints({bucket(1, {2, 0}), bucket(1, {})});
  CHECK_THAT(mixed, Catch::Contains("do not match"));
  CHECK_THAT(mixed, !Catch::Contains("out of step"));
}
