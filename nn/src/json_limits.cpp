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

namespace {
// Builds the value nlohmann's SAX parser reports, as its own DOM parser would, but:
// - a key goes into its object by appending (each open object keeps a set of its keys, so a
//   repeated key is found in O(log n)): ordered_json's own insert searches the object
//   linearly, and nlohmann's callback parser rescans the parent after every object closes, so
//   N sibling objects cost O(N^2) (a 10 MB header of {} objects took minutes);
// - a container deeper than kMaxJsonDepth or a repeated key stops the parse at once.
class LimitedDomBuilder final : public nlohmann::json_sax<ordered_json> {
 public:
  LimitedDomBuilder(ordered_json& root, const std::string& what) : root_(root), what_(what) {}

  bool null() override { return scalar(nullptr); }
  bool boolean(bool v) override { return scalar(v); }
  bool number_integer(number_integer_t v) override { return scalar(v); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(v); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(v); }
  bool string(string_t& v) override { return scalar(std::move(v)); }
  bool binary(binary_t&) override { return scalar(nullptr); }  // JSON text has no binary values
  bool start_object(std::size_t) override {
    open(put_value(ordered_json::object()));
    keys_.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    WICK_CHECK_FORMAT(keys_.back().insert(k).second, "{}: the JSON names the key \"{}\" more than once in one object",
                      what_, quote_prefix(k, kMaxQuotedChars));
    // Appended to the object's entries directly: the set above already refused a repeat.
    auto& entries = static_cast<std::vector<std::pair<const std::string, ordered_json>>&>(
        *stack_.back()->get_ptr<ordered_json::object_t*>());
    entries.emplace_back(std::move(k), nullptr);
    slot_ = &entries.back().second;
    return true;
  }
  bool end_object() override {
    keys_.pop_back();
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    open(put_value(ordered_json::array()));
    return true;
  }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    WICK_FAIL_T(FormatError, "{}: not valid JSON ({})", what_, quote_prefix(e.what(), 4 * kMaxQuotedChars));
  }

 private:
  // Stores v where the parse stands (the root, the array's end, or the slot of the last key) and
  // returns where it went.
  ordered_json* put_value(ordered_json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    ordered_json* top = stack_.back();
    if (top->is_array()) {
      auto& items = *top->get_ptr<ordered_json::array_t*>();
      items.push_back(std::move(v));
      return &items.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  template <class V>
  bool scalar(V&& v) {
    put_value(ordered_json(std::forward<V>(v)));
    return true;
  }
  void open(ordered_json* container) {
    WICK_CHECK_FORMAT(static_cast<int>(stack_.size()) < kMaxJsonDepth,
                      "{}: the JSON nests arrays or objects deeper than the limit of {} levels", what_, kMaxJsonDepth);
    stack_.push_back(container);
  }

  ordered_json& root_;
  const std::string& what_;
  std::vector<ordered_json*> stack_;         // the open containers, outermost first
  std::vector<std::set<std::string>> keys_;  // the keys of each open object
  ordered_json* slot_ = nullptr;             // where the value of the last key goes
};
}  // namespace

void check_json_text(std::string_view text, const std::string& what) {
  // nlohmann's parser keeps a stack entry per level, so a 100 MB header of '[' would cost over a
  // GiB before a handler could refuse it: the depth is checked on the bytes first.
  WICK_CHECK_FORMAT(nesting_depth(text, kMaxJsonDepth) <= kMaxJsonDepth,
                    "{}: the JSON nests arrays or objects deeper than the limit of {} levels", what, kMaxJsonDepth);
  // nlohmann's lexer ends the input at a NUL byte, so anything after one would go unread ...
  const size_t nul = text.find('\0');
  WICK_CHECK_FORMAT(nul == std::string_view::npos, "{}: a NUL byte at offset {}; JSON text holds none", what, nul);
  // ... and skips a UTF-8 byte-order mark, which JSON text must not start with (RFC 8259).
  WICK_CHECK_FORMAT(!text.starts_with("\xEF\xBB\xBF"), "{}: the JSON starts with a UTF-8 byte-order mark", what);
}

ordered_json parse_json_limited(std::string_view text, const std::string& what) {
  check_json_text(text, what);
  ordered_json j;
  LimitedDomBuilder builder(j, what);
  try {
    ordered_json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const ordered_json::exception& e) {
    WICK_FAIL_T(FormatError, "{}: not valid JSON ({})", what, quote_prefix(e.what(), 4 * kMaxQuotedChars));
  } catch (const std::bad_alloc&) {
    WICK_FAIL_T(OutOfMemoryError, "{}: out of memory parsing {} bytes of JSON", what, text.size());
  }
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
