#pragma once
// Parsing untrusted JSON with a depth limit, and quoting bad values briefly (Note [Loader limits]
// in wick/nn/loader_limits.h). Internal to nn/.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace wick::serialize::detail {

/// Called for every object key as it is parsed: its nesting depth (1 for the top level) and text.
using KeyCallback = std::function<void(int depth, const std::string& key)>;

/// Parses `text` as JSON. Throws wick::FormatError "<what>: ..." when it is not valid JSON or
/// nests deeper than kMaxJsonDepth; never recurses on the input's depth (the deep part is
/// discarded by the parser callback, so no value deeper than the limit is ever built).
nlohmann::ordered_json parse_json_limited(std::string_view text, const std::string& what,
                                          const KeyCallback& on_key = {});

/// At most kMaxQuotedChars characters of `v` as JSON text, "..." appended when cut. Bounded in
/// time and memory by the budget, whatever the size of `v`.
std::string json_preview(const nlohmann::ordered_json& v);

/// At most `max` characters of `s`, "..." appended when cut.
std::string quote_prefix(std::string_view s, size_t max);

}  // namespace wick::serialize::detail
