#pragma once
// Parsing untrusted JSON with a depth limit, and quoting bad values briefly (Note [Loader limits]
// in wick/nn/loader_limits.h). Internal to nn/.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "wick/nn/loader_limits.h"

namespace wick::serialize::detail {

/// Refuses (wick::FormatError "<what>: ...") JSON text that nests deeper than kMaxJsonDepth
/// (counted on the bytes, so nothing is allocated per level), holds a NUL byte (nlohmann's lexer
/// would stop reading there) or starts with a UTF-8 byte-order mark (which it would skip).
void check_json_text(std::string_view text, const std::string& what);

/// Parses `text` as JSON. Throws wick::FormatError "<what>: ..." when it is not valid JSON, nests
/// deeper than kMaxJsonDepth, fails check_json_text or names a key twice in one object (refused
/// as the parse reaches it; an object's keys go in without a linear search, so the parse takes
/// time linear in the text); OutOfMemoryError when the parse runs out of memory.
/// Never recurses on the input's depth.
nlohmann::ordered_json parse_json_limited(std::string_view text, const std::string& what);

/// At most kMaxQuotedChars characters of `v` as JSON text, "..." appended when cut. Bounded in
/// time and memory by the budget, whatever the size of `v`.
std::string json_preview(const nlohmann::ordered_json& v);

/// At most `max` characters of `s`, "..." appended when cut.
std::string quote_prefix(std::string_view s, size_t max);

/// The first kMaxListedItems of `items`, each cut to `max_chars` (and put in double quotes when
/// `quote`), joined by `sep`, then "<sep>and N more": a message listing what a file holds stays
/// short whatever the file.
std::string brief_join(const std::vector<std::string>& items, std::string_view sep, bool quote,
                       size_t max_chars = kMaxQuotedChars);

}  // namespace wick::serialize::detail
