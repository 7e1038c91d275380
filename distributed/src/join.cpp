#include "wick/distributed/join.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "host_collectives.h"
#include "wick/core/error.h"

namespace wick::distributed {

namespace {

// The exchange's layout (Note [Join context]): [active, terminate, one-hot of the notifying
// joinable, the notifier's payload].
constexpr size_t kActive = 0;
constexpr size_t kTerminate = 1;
constexpr size_t kFixed = 2;

/// The payload of `size` numbers in a summed exchange over `count` joinables.
std::vector<int64_t> payload_of(const std::vector<int64_t>& sums, size_t count, size_t size) {
  const auto first = sums.begin() + static_cast<std::ptrdiff_t>(kFixed + count);
  return std::vector<int64_t>(first, first + static_cast<std::ptrdiff_t>(size));
}

}  // namespace

Joinable::~Joinable() {
  if (join_ != nullptr) join_->forget(this);
}

JoinNotification Joinable::notify_join_context(std::span<const int64_t> payload) {
  if (join_ == nullptr || !join_->options().enable)
    return {join_process_group().size(), std::vector<int64_t>(payload.begin(), payload.end())};
  return join_->notify(*this, payload);
}

bool Joinable::join_enabled() const { return join_ != nullptr && join_->options().enable; }

Join::Join(std::vector<Joinable*> joinables, JoinOptions options)
    : joinables_(std::move(joinables)), options_(options) {
  WICK_CHECK(!joinables_.empty(),
             "Join: no joinables; pass the DistributedDataParallel modules, "
             "ZeroRedundancyOptimizers or other Joinables whose collectives a joined rank shadows");
  for (size_t i = 0; i < joinables_.size(); ++i) {
    Joinable* j = joinables_[i];
    WICK_CHECK(j != nullptr, "Join: joinable {} of {} is null", i, joinables_.size());
    for (size_t k = 0; k < i; ++k)
      WICK_CHECK(joinables_[k] != j, "Join: the {} at position {} is also at position {}; list each joinable once",
                 j->join_name(), i, k);
    WICK_CHECK_STATE(j->join_ == nullptr,
                     "Join: the {} at position {} is already in a Join (or its enable_join()); end that one first "
                     "(join(), or destroy it)",
                     j->join_name(), i);
    WICK_CHECK(&j->join_process_group() == &joinables_[0]->join_process_group(),
               "Join: the {} at position {} runs on another process group than the {} at position 0; one Join "
               "shadows the collectives of one group (PyTorch's rule as well)",
               j->join_name(), i, joinables_[0]->join_name());
    j->join_check(options_);
  }
  for (Joinable* j : joinables_) {
    j->join_ = this;
    j->join_started(options_);
  }
}

Join::~Join() {
  if (!ended_) end();
}

void Join::end() {
  ended_ = true;
  for (Joinable* j : joinables_) {
    j->join_ = nullptr;
    j->join_ended();
  }
}

void Join::forget(Joinable* who) { std::erase(joinables_, who); }

size_t Join::payload_width() const {
  size_t width = 0;
  for (const Joinable* j : joinables_) width = std::max(width, j->join_payload_size());
  return width;
}

JoinNotification Join::notify(Joinable& who, std::span<const int64_t> payload) {
  WICK_CHECK(payload.size() == who.join_payload_size(),
             "Join: the {} notified {} numbers, but its join_payload_size() is {}", who.join_name(), payload.size(),
             who.join_payload_size());
  const size_t index = static_cast<size_t>(std::find(joinables_.begin(), joinables_.end(), &who) - joinables_.begin());
  const size_t count = joinables_.size();
  std::vector<int64_t> mine(kFixed + count + payload_width(), 0);
  mine[kActive] = 1;
  mine[kFixed + index] = 1;
  std::copy(payload.begin(), payload.end(), mine.begin() + static_cast<std::ptrdiff_t>(kFixed + count));
  ProcessGroup& group = who.join_process_group();
  const std::vector<int64_t> sums = detail::sum_on_cpu(group, mine);
  WICK_CHECK_STATE(sums[kTerminate] == 0,
                   "Join: {} rank(s) ran out of data under throw_on_early_termination, so every rank stops here (rank "
                   "{}, at a notification of its {}); catch this error on every rank to go on past the uneven inputs",
                   sums[kTerminate], group.rank(), who.join_name());
  WICK_CHECK_STATE(sums[kFixed + index] == sums[kActive],
                   "Join: the {} ranks still training notified different joinables at the same point (rank {}: its "
                   "{}, like {} of them); every rank must run the same sequence of forwards and steps",
                   sums[kActive], group.rank(), who.join_name(), sums[kFixed + index]);
  return {sums[kActive], payload_of(sums, count, payload.size())};
}

void Join::join() {
  WICK_CHECK_STATE(!ended_, "Join::join: this Join has ended already (join() runs once per Join)");
  if (!options_.enable || joinables_.empty()) {
    end();
    return;
  }
  ProcessGroup& group = joinables_[0]->join_process_group();
  const size_t count = joinables_.size();
  bool last_joiner = true;
  try {
    for (;;) {
      std::vector<int64_t> mine(kFixed + count + payload_width(), 0);
      if (options_.throw_on_early_termination) mine[kTerminate] = 1;
      const std::vector<int64_t> sums = detail::sum_on_cpu(group, mine);
      if (sums[kActive] == 0) break;  // every rank has joined
      last_joiner = false;
      WICK_CHECK_STATE(!options_.throw_on_early_termination,
                       "Join::join: rank {} ran out of data while {} rank(s) still train, and the Join was made with "
                       "throw_on_early_termination: every rank raises at this point",
                       group.rank(), sums[kActive]);
      size_t notifier = count;
      for (size_t j = 0; j < count; ++j)
        if (sums[kFixed + j] == sums[kActive]) notifier = j;
      WICK_CHECK_STATE(notifier < count,
                       "Join::join: the {} ranks still training notified different joinables at the same point; every "
                       "rank must run the same sequence of forwards and steps",
                       sums[kActive]);
      Joinable& j = *joinables_[notifier];
      j.join_main_hook({sums[kActive], payload_of(sums, count, j.join_payload_size())});
    }
    // The highest of the ranks whose first exchange found every rank joined (PyTorch's
    // is_last_joiner and _find_common_rank).
    const std::vector<int> last = detail::flagged_ranks(group, last_joiner);
    const int source = last.empty() ? 0 : last.back();
    for (Joinable* j : joinables_) j->join_post_hook(source);
  } catch (...) {
    end();
    throw;
  }
  end();
}

}  // namespace wick::distributed
