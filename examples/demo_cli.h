#pragma once
// Command-line pieces shared by both demos (examples/fashion_mnist.cpp, examples/char_gpt.cpp),
// on CLI11 (Debian's libcli11-dev, header-only).
#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "wick/core/device.h"
#include "wick/core/error.h"

namespace demo {

/// "cpu:0,cpu:1" -> the devices; wick::ValueError naming the item that is not a device.
inline std::vector<wick::Device> parse_devices(const std::string& list) {
  std::vector<wick::Device> devices;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    devices.emplace_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return devices;
}

/// A CLI11 check for a --devices value: the message of parse_devices' error, or nothing.
inline CLI::Validator device_list_validator() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        try {
          parse_devices(value);
          return {};
        } catch (const wick::Error& e) {
          return e.what();
        }
      },
      "LIST");
}

/// What both demos share: --help shows each default and is wide enough for the option names,
/// and an option given twice takes its last value (as the hand-written parsers did).
inline void set_up(CLI::App& app) {
  app.get_formatter()->column_width(30);
  app.option_defaults()->always_capture_default()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

/// Breaks `text` into lines of at most `width` characters at spaces (a longer word keeps its line).
inline std::string wrap(const std::string& text, size_t width) {
  std::string out, line, word;
  auto flush_word = [&] {
    if (word.empty()) return;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    word.clear();
  };
  for (char c : text) {
    if (c == ' ')
      flush_word();
    else
      word.push_back(c);
  }
  flush_word();
  return out + line;
}

/// Wraps the description of every option of `app` (call after adding them) and of the app to
/// fit 110 columns, as the hand-written --help did: CLI11 indents the lines after a newline.
inline void wrap_help(CLI::App& app) {
  constexpr size_t kWidth = 110, kColumn = 30;
  for (CLI::Option* opt : app.get_options()) opt->description(wrap(opt->get_description(), kWidth - kColumn));
  app.description(wrap(app.get_description(), kWidth));
}

/// Parses argv. Returns nothing when the program should go on, else the exit code: 0 after
/// printing --help, non-zero after printing what was wrong (on stderr, with a pointer to --help).
inline std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  wrap_help(app);
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
}

}  // namespace demo
