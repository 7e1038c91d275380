// Depth-limited JSON parsing and brief quoting (Note [Loader limits]).
#include "json_limits.h"

#include <fmt/format.h>

#include "wick/core/error.h"
#include "wick/nn/loader_limits.h"

namespace wick::serialize::detail {

using ordered_json = nlohmann::ordered_json;

ordered_json parse_json_limited(std::string_view text, const std::string& what, const KeyCallback& on_key) {
  bool too_deep = false;
  // depth is the number of enclosing containers; a container starting at depth d is at level d + 1.
  ordered_json::parser_callback_t cb = [&](int depth, ordered_json::parse_event_t ev, ordered_json& parsed) {
    using E = ordered_json::parse_event_t;
    if ((ev == E::object_start || ev == E::array_start) && depth >= kMaxJsonDepth) {
      too_deep = true;
      return false;  // discard: nothing below is kept, the parser itself is iterative
    }
    if (ev == E::key && on_key && parsed.is_string() && !too_deep) on_key(depth, parsed.get_ref<const std::string&>());
    return true;
  };
  ordered_json j;
  try {
    j = ordered_json::parse(text.begin(), text.end(), cb);
  } catch (const ordered_json::exception& e) {
    WICK_FAIL_T(FormatError, "{}: not valid JSON ({})", what, quote_prefix(e.what(), 4 * kMaxQuotedChars));
  }
  WICK_CHECK_FORMAT(!too_deep, "{}: the JSON nests arrays or objects deeper than the limit of {} levels", what,
                    kMaxJsonDepth);
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

}  // namespace wick::serialize::detail
