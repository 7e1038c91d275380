// Depth-limited JSON parsing and brief quoting (Note [Loader limits]).
#include "json_limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "wick/core/error.h"
#include "wick/nn/loader_limits.h"

namespace wick::serialize::detail {

using ordered_json = nlohmann::ordered_json;

namespace {
// The deepest nesting of arrays and objects in `text`, counted on the raw bytes (strings and
// their escapes skipped) and stopping early past `limit`, so that nothing is allocated per level
// before the limit is known to hold.
int nesting_depth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) break;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}
}  // namespace

ordered_json parse_json_limited(std::string_view text, const std::string& what) {
  // nlohmann's parser keeps a stack entry per level, so a 100 MB header of '[' would cost over a
  // GiB before any callback could refuse it: the depth is checked on the bytes first.
  WICK_CHECK_FORMAT(nesting_depth(text, kMaxJsonDepth) <= kMaxJsonDepth,
                    "{}: the JSON nests arrays or objects deeper than the limit of {} levels", what, kMaxJsonDepth);
  bool too_deep = false;
  // The keys of each object being parsed: nlohmann keeps the last of repeated keys silently, so
  // two readers could disagree on what the file says; a repeated key is refused at any depth.
  std::vector<std::set<std::string>> open_objects;
  std::string repeated;
  // depth is the number of enclosing containers; a container starting at depth d is at level d + 1.
  ordered_json::parser_callback_t cb = [&](int depth, ordered_json::parse_event_t ev, ordered_json& parsed) {
    using E = ordered_json::parse_event_t;
    if ((ev == E::object_start || ev == E::array_start) && depth >= kMaxJsonDepth) {
      too_deep = true;  // cannot happen after the byte check; kept as a second guard
      return false;
    }
    if (ev == E::object_start) open_objects.emplace_back();
    if (ev == E::object_end && !open_objects.empty()) open_objects.pop_back();
    if (ev == E::key && parsed.is_string() && !open_objects.empty() && repeated.empty() &&
        !open_objects.back().insert(parsed.get_ref<const std::string&>()).second)
      repeated = parsed.get_ref<const std::string&>();
    return true;
  };
  ordered_json j;
  try {
    j = ordered_json::parse(text.begin(), text.end(), cb);
  } catch (const ordered_json::exception& e) {
    WICK_FAIL_T(FormatError, "{}: not valid JSON ({})", what, quote_prefix(e.what(), 4 * kMaxQuotedChars));
  } catch (const std::bad_alloc&) {
    WICK_FAIL_T(OutOfMemoryError, "{}: out of memory parsing {} bytes of JSON", what, text.size());
  }
  WICK_CHECK_FORMAT(!too_deep, "{}: the JSON nests arrays or objects deeper than the limit of {} levels", what,
                    kMaxJsonDepth);
  WICK_CHECK_FORMAT(repeated.empty(), "{}: the JSON names the key \"{}\" more than once in one object", what,
                    quote_prefix(repeated, kMaxQuotedChars));
  return j;
}

namespace {
// A cut may split a UTF-8 sequence: dump it with replacement characters instead of throwing.
std::string dump_lenient(const ordered_json& v) {
  return v.dump(-1, ' ', /*ensure_ascii=*/false, ordered_json::error_handler_t::replace);
}

// Appends v's JSON text to out until out holds more than `budget` characters. Recursion is
// bounded by the parse depth limit and by the budget (each level appends at least one char).
void preview_into(const ordered_json& v, std::string& out, size_t budget) {
  if (out.size() > budget) return;
  if (v.is_object()) {
    out += '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() <= budget; ++it) {
      if (!first) out += ',';
      first = false;
      out += dump_lenient(ordered_json(std::string(std::string_view(it.key()).substr(0, budget + 1))));
      out += ':';
      preview_into(it.value(), out, budget);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() <= budget; ++it) {
      if (!first) out += ',';
      first = false;
      preview_into(*it, out, budget);
    }
    out += ']';
  } else if (v.is_string()) {
    out += dump_lenient(
        ordered_json(std::string(std::string_view(v.get_ref<const std::string&>()).substr(0, budget + 1))));
  } else {
    out += dump_lenient(v);
  }
}
}  // namespace

std::string json_preview(const ordered_json& v) {
  std::string out;
  preview_into(v, out, kMaxQuotedChars);
  if (out.size() > kMaxQuotedChars) {
    out.resize(kMaxQuotedChars);
    out += "...";
  }
  return out;
}

std::string quote_prefix(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  return std::string(s.substr(0, max)) + "...";
}

std::string brief_join(const std::vector<std::string>& items, std::string_view sep, bool quote, size_t max_chars) {
  std::string out;
  const size_t shown = std::min(items.size(), kMaxListedItems);
  for (size_t i = 0; i < shown; ++i) {
    if (i) out += sep;
    const std::string item = quote_prefix(items[i], max_chars);
    out += quote ? "\"" + item + "\"" : item;
  }
  if (items.size() > shown) out += fmt::format("{}and {} more", sep, items.size() - shown);
  return out;
}

}  // namespace wick::serialize::detail
