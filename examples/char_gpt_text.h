#pragma once
// The character-level GPT demo's text (examples/char_gpt.cpp): fortunes read from files that are
// treated as hostile, a train/validation split by fortune, a character vocabulary, the unigram
// baseline and random training windows. docs/training.md ("The language-model demo").
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/core/error.h"

namespace char_gpt {

/// Where `make demo-gpt` finds its text (Debian's `fortunes` package).
inline constexpr const char* kFortunesDir = "/usr/share/games/fortunes";
/// Files larger than this are refused: the demo reads each file whole.
inline constexpr std::uintmax_t kMaxFileBytes = 64u << 20;

/// One file's text reduced to what the model sees: overstrikes ("_\bA", "A\bA": underline and
/// bold on a printer) keep only the last character, tabs become spaces, carriage returns and
/// other control characters and every non-ASCII byte are dropped, so the vocabulary is printable
/// ASCII plus newline. Throws wick::FormatError naming `what` when the bytes do not look like
/// text (a NUL byte, or more than 5% control bytes other than newline, tab, CR, backspace, FF).
inline std::string clean_text(const std::string& bytes, const std::string& what) {
  size_t control = 0;
  for (unsigned char c : bytes) {
    if (c == 0) throw wick::FormatError(fmt::format("{}: not a text file (it holds a NUL byte)", what));
    if (c < 32 && c != '\n' && c != '\t' && c != '\r' && c != '\b' && c != '\f') ++control;
  }
  if (control * 20 > bytes.size())
    throw wick::FormatError(
        fmt::format("{}: not a text file ({} of {} bytes are control characters)", what, control, bytes.size()));
  std::string out;
  out.reserve(bytes.size());
  for (unsigned char c : bytes) {
    if (c == '\b') {
      if (!out.empty() && out.back() != '\n') out.pop_back();
    } else if (c == '\t') {
      out.push_back(' ');
    } else if (c == '\n' || (c >= 32 && c < 127)) {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

/// The fortunes of one cleaned text: pieces separated by lines that hold only "%" (fortune's
/// strfile format); a text without such lines is one fortune. Empty pieces are dropped and
/// each fortune ends with a newline.
inline std::vector<std::string> split_fortunes(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const size_t stop = end == std::string::npos ? text.size() : end;
    const std::string line = text.substr(pos, stop - pos);
    if (line == "%") {
      if (!current.empty()) out.push_back(std::move(current));
      current.clear();
    } else {
      current += line;
      current += '\n';
    }
    pos = stop + 1;
  }
  if (!current.empty()) out.push_back(std::move(current));
  out.erase(std::remove_if(out.begin(), out.end(),
                           [](const std::string& f) { return f.find_first_not_of(" \n") == std::string::npos; }),
            out.end());
  return out;
}

/// Reads one regular file whole. wick::IOError when it cannot be opened or read, or is larger
/// than kMaxFileBytes.
inline std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw wick::IOError(fmt::format("{}: cannot read: {}", path.string(), ec.message()));
  if (size > kMaxFileBytes)
    throw wick::IOError(fmt::format("{}: {} bytes is more than the {} this demo reads from one file", path.string(),
                                    size, kMaxFileBytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw wick::IOError(fmt::format("{}: cannot open for reading", path.string()));
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (in.gcount() != static_cast<std::streamsize>(size))
    throw wick::IOError(fmt::format("{}: read {} of {} bytes", path.string(), in.gcount(), size));
  return bytes;
}

/// The fortunes of a corpus and what happened to each file.
struct Corpus {
  std::vector<std::string> fortunes;  ///< in file-name order, then file order
  std::vector<std::string> files;     ///< the files read
  std::vector<std::string> skipped;   ///< "path: reason" for each file left out
};

/// Reads `path`: a plain-text file, or a directory whose regular files are read in name order.
/// In a directory, strfile's index files (*.dat), the UTF-8 copies (*.u8), symbolic links,
/// hidden files and subdirectories are not read, and a file that cannot be read, is empty or is
/// not text is skipped (listed in `skipped`). A single file given by name must be readable text
/// (wick::IOError or wick::FormatError otherwise). Throws wick::IOError when `path` does not
/// exist and wick::FormatError when no fortune at all was found.
inline Corpus load_corpus(const std::string& path) {
  namespace fs = std::filesystem;
  Corpus corpus;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st))
    throw wick::IOError(
        fmt::format("{}: no such file or directory (install Debian's fortunes with `sudo apt-get install fortunes`, or "
                    "point --data at a text file or a directory of them)",
                    path));
  auto add = [&](const fs::path& file) {
    for (auto& f : split_fortunes(clean_text(read_file(file), file.string()))) corpus.fortunes.push_back(std::move(f));
    corpus.files.push_back(file.string());
  };
  if (fs::is_directory(st)) {
    std::vector<fs::path> files;
    for (fs::directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
         it.increment(ec)) {
      const fs::path p = it->path();
      const std::string name = p.filename().string();
      if (name.empty() || name[0] == '.' || p.extension() == ".dat" || p.extension() == ".u8") continue;
      std::error_code link_ec;
      if (fs::is_symlink(fs::symlink_status(p, link_ec)) || !fs::is_regular_file(fs::symlink_status(p, link_ec)))
        continue;
      files.push_back(p);
    }
    if (ec) throw wick::IOError(fmt::format("{}: cannot list the directory: {}", path, ec.message()));
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      const size_t before = corpus.fortunes.size();
      try {
        add(f);
      } catch (const wick::IOError& e) {
        corpus.skipped.push_back(e.what());
        continue;
      } catch (const wick::FormatError& e) {
        corpus.skipped.push_back(e.what());
        continue;
      }
      if (corpus.fortunes.size() == before) {
        corpus.files.pop_back();
        corpus.skipped.push_back(fmt::format("{}: no text", f.string()));
      }
    }
  } else {
    add(path);
  }
  if (corpus.fortunes.empty())
    throw wick::FormatError(fmt::format("{}: no text found ({} file(s) skipped)", path, corpus.skipped.size()));
  return corpus;
}

/// Every tenth fortune (the 10th, 20th, ...) is validation text, the rest training text: a split
/// by fortune (no fortune is in both) that needs no random numbers and spreads over every file.
/// Fortunes are joined as in the files, each followed by a "%" line.
struct Split {
  std::string train, validation;
};
inline Split split_train_validation(const std::vector<std::string>& fortunes) {
  Split s;
  for (size_t i = 0; i < fortunes.size(); ++i) (i % 10 == 9 ? s.validation : s.train) += fortunes[i] + "%\n";
  return s;
}

/// At most the first 64 characters of `s` (then "..."), for quoting file contents in a message.
inline std::string brief(const std::string& s) { return s.size() <= 64 ? s : s.substr(0, 64) + "..."; }

/// The characters of the training text, sorted; token i is chars[i].
struct Vocabulary {
  std::string chars;
  std::array<int16_t, 256> index{};  ///< byte -> token, -1 when absent

  Vocabulary() { index.fill(-1); }
  explicit Vocabulary(const std::string& chars_in) : chars(chars_in) {
    index.fill(-1);
    for (size_t i = 0; i < chars.size(); ++i) index[static_cast<unsigned char>(chars[i])] = static_cast<int16_t>(i);
  }
  /// The sorted set of bytes in `text`.
  static Vocabulary of(const std::string& text) {
    std::array<bool, 256> seen{};
    for (unsigned char c : text) seen[c] = true;
    std::string chars;
    for (int c = 0; c < 256; ++c)
      if (seen[c]) chars.push_back(static_cast<char>(c));
    return Vocabulary(chars);
  }
  int64_t size() const { return static_cast<int64_t>(chars.size()); }
  bool contains(char c) const { return index[static_cast<unsigned char>(c)] >= 0; }
  /// The tokens of `text`; characters outside the vocabulary are dropped and counted in `dropped`.
  std::vector<int64_t> encode(const std::string& text, size_t* dropped = nullptr) const {
    std::vector<int64_t> out;
    out.reserve(text.size());
    size_t n = 0;
    for (unsigned char c : text) {
      if (index[c] >= 0)
        out.push_back(index[c]);
      else
        ++n;
    }
    if (dropped) *dropped = n;
    return out;
  }
  /// As the checkpoint stores it: the byte values, comma-separated ("10,32,33").
  std::string serialize() const {
    std::string s;
    for (unsigned char c : chars) s += (s.empty() ? "" : ",") + std::to_string(static_cast<int>(c));
    return s;
  }
  /// The inverse of serialize; wick::FormatError for anything else (not numbers, out of range,
  /// repeated or unsorted bytes, empty).
  static Vocabulary parse(const std::string& s) {
    std::string chars;
    size_t pos = 0;
    while (pos <= s.size()) {
      size_t comma = s.find(',', pos);
      const std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (item.empty() || item.size() > 3 || item.find_first_not_of("0123456789") != std::string::npos)
        throw wick::FormatError(fmt::format("vocabulary '{}': '{}' is not a byte value", brief(s), brief(item)));
      const int v = std::stoi(item);
      if (v > 255 || (!chars.empty() && v <= static_cast<unsigned char>(chars.back())))
        throw wick::FormatError(
            fmt::format("vocabulary '{}': byte values must be sorted, distinct and < 256", brief(s)));
      chars.push_back(static_cast<char>(v));
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    return Vocabulary(chars);
  }
};

/// Cross-entropy in nats of the training text's character frequencies on the validation tokens:
/// what a model that ignores context scores. Every validation token is in the vocabulary, which
/// comes from the training text, so every frequency is positive.
inline double unigram_baseline(const std::vector<int64_t>& train, const std::vector<int64_t>& validation,
                               int64_t vocab) {
  std::vector<double> count(static_cast<size_t>(vocab), 0.0);
  for (int64_t t : train) count[static_cast<size_t>(t)] += 1;
  double nll = 0;
  const double total = static_cast<double>(train.size());
  for (int64_t t : validation) nll -= std::log(count[static_cast<size_t>(t)] / total);
  return nll / static_cast<double>(validation.size());
}

/// A batch of windows: inputs [batch, block] and targets (the inputs shifted by one) as int64.
struct Batch {
  wick::Tensor inputs, targets;
};

/// `count` windows of `block` tokens starting at `starts`.
inline Batch windows_at(const std::vector<int64_t>& tokens, const std::vector<int64_t>& starts, int64_t block) {
  const auto rows = static_cast<int64_t>(starts.size());
  std::vector<int64_t> x(static_cast<size_t>(rows * block)), y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const auto s = static_cast<size_t>(starts[static_cast<size_t>(r)]);
    std::copy_n(tokens.begin() + static_cast<std::ptrdiff_t>(s), block, x.begin() + r * block);
    std::copy_n(tokens.begin() + static_cast<std::ptrdiff_t>(s) + 1, block, y.begin() + r * block);
  }
  return {wick::tensor(x, {rows, block}), wick::tensor(y, {rows, block})};
}

/// Random training windows. Batch `step` of a run seeded with `seed` is the same whatever came
/// before it, so a run resumed from a checkpoint sees exactly the batches an uninterrupted run
/// would have seen.
inline Batch random_windows(const std::vector<int64_t>& tokens, int64_t batch, int64_t block, uint64_t seed,
                            int64_t step) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(step),
                    static_cast<uint32_t>(static_cast<uint64_t>(step) >> 32)};
  std::mt19937_64 rng(seq);
  const auto range = static_cast<uint64_t>(static_cast<int64_t>(tokens.size()) - block);  // starts in [0, range)
  std::vector<int64_t> starts(static_cast<size_t>(batch));
  for (auto& s : starts) s = static_cast<int64_t>(rng() % range);
  return windows_at(tokens, starts, block);
}

/// The validation windows: non-overlapping, evenly spaced over the whole text, at most `max`.
inline std::vector<int64_t> validation_starts(size_t tokens, int64_t block, int64_t max) {
  const int64_t fit = (static_cast<int64_t>(tokens) - 1) / block;
  const int64_t n = std::min(fit, max);
  std::vector<int64_t> starts;
  for (int64_t i = 0; i < n; ++i) starts.push_back(i * fit / n * block);
  return starts;
}

}  // namespace char_gpt
