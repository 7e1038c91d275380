#pragma once
// Pictures of training, shared by both demos (examples/fashion_mnist.cpp, examples/char_gpt.cpp).
//
// A demo adds points to named series ("train loss" per step window, "validation loss" and
// "validation accuracy" per epoch) and calls write(prefix) after every epoch, which writes
//   PREFIX.csv  every point, one per line: series,step,value (long format, with a header)
//   PREFIX.gp   a gnuplot script that draws PREFIX.csv into PREFIX.png (losses on the left axis,
//               accuracies, series whose name holds "accuracy", on the right)
// and plot(prefix) runs gnuplot on the script when `gnuplot` is on PATH (Debian's gnuplot-nox:
// the pngcairo terminal when built in, else png). The points also travel in the checkpoint
// (to_csv / from_csv), so a resumed run draws its whole history.
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "wick/core/error.h"

extern char** environ;

namespace demo {

/// One point of a curve.
struct CurvePoint {
  std::string series;
  int64_t step = 0;
  double value = 0;
};

/// The path of `program` found on PATH, or nothing.
inline std::optional<std::string> find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

/// The curves of one training run.
class TrainingCurves {
 public:
  /// `title` heads the picture; `x_label` names the step axis.
  TrainingCurves(std::string title, std::string x_label) : title_(std::move(title)), x_label_(std::move(x_label)) {}

  /// Adds a point. Series names must not hold ',' or '"' or a newline (wick::ValueError).
  void add(const std::string& series, int64_t step, double value) {
    if (series.empty() || series.find_first_of(",\"\n'") != std::string::npos)
      throw wick::ValueError(fmt::format("TrainingCurves::add: bad series name '{}'", series));
    points_.push_back({series, step, value});
  }
  const std::vector<CurvePoint>& points() const { return points_; }
  /// Drops the points after `step` (a resumed run replaces what came after its checkpoint).
  void truncate_after(int64_t step) {
    std::erase_if(points_, [step](const CurvePoint& p) { return p.step > step; });
  }

  /// "series,step,value\n" then one line per point (values with 17 significant digits), grouped
  /// by series (in the order each first appeared) so that gnuplot draws each as one line.
  std::string to_csv() const {
    std::string s = "series,step,value\n";
    for (const auto& name : series_names())
      for (const auto& p : points_)
        if (p.series == name) s += fmt::format("{},{},{:.17g}\n", p.series, p.step, p.value);
    return s;
  }
  /// The series' names in the order each first appeared.
  std::vector<std::string> series_names() const {
    std::vector<std::string> names;
    for (const auto& p : points_)
      if (std::find(names.begin(), names.end(), p.series) == names.end()) names.push_back(p.series);
    return names;
  }
  /// Replaces the points with those of to_csv's text; wick::FormatError naming the line when it
  /// is not such text (the points are unchanged then).
  void from_csv(const std::string& csv) {
    std::vector<CurvePoint> points;
    std::stringstream in(csv);
    std::string line;
    int64_t n = 0;
    while (std::getline(in, line)) {
      if (++n == 1) {
        if (line != "series,step,value")
          throw wick::FormatError("training curves: the header is not series,step,value");
        continue;
      }
      if (line.empty()) continue;
      const size_t c1 = line.find(','), c2 = c1 == std::string::npos ? c1 : line.find(',', c1 + 1);
      CurvePoint p;
      bool ok = c1 != std::string::npos && c2 != std::string::npos && c1 > 0;
      if (ok) {
        p.series = line.substr(0, c1);
        const std::string step = line.substr(c1 + 1, c2 - c1 - 1), value = line.substr(c2 + 1);
        char* end = nullptr;
        p.step = std::strtoll(step.c_str(), &end, 10);
        ok = !step.empty() && *end == '\0';
        p.value = std::strtod(value.c_str(), &end);
        ok = ok && !value.empty() && *end == '\0';
      }
      if (!ok) throw wick::FormatError(fmt::format("training curves: line {} is not series,step,value: '{}'", n, line));
      points.push_back(std::move(p));
    }
    points_ = std::move(points);
  }

  /// Writes PREFIX.csv and PREFIX.gp (see the top of this file). wick::IOError when either
  /// cannot be written.
  void write(const std::string& prefix) const {
    write_file(prefix + ".csv", to_csv());
    write_file(prefix + ".gp", gnuplot_script(prefix));
  }

  /// Runs gnuplot on PREFIX.gp when it is on PATH and returns one line for the user: the PNG's
  /// path, or how to draw it (gnuplot missing or failing).
  std::string plot(const std::string& prefix) const {
    const auto gnuplot = find_on_path("gnuplot");
    if (!gnuplot)
      return fmt::format(
          "curves: {0}.csv (gnuplot not found: `sudo apt-get install gnuplot-nox`, then `gnuplot {0}.gp` draws "
          "{0}.png)",
          prefix);
    const std::string script = prefix + ".gp", log = prefix + ".gp.log";
    char* argv[] = {const_cast<char*>("gnuplot"), const_cast<char*>(script.c_str()), nullptr};
    // gnuplot's own messages (warnings such as an empty axis range) go to PREFIX.gp.log.
    posix_spawn_file_actions_t files;
    ::posix_spawn_file_actions_init(&files);
    ::posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid = 0;
    int status = 0;
    const bool drawn = ::posix_spawn(&pid, gnuplot->c_str(), &files, nullptr, argv, environ) == 0 &&
                       ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    ::posix_spawn_file_actions_destroy(&files);
    if (!drawn) return fmt::format("curves: {0}.csv (`gnuplot {0}.gp` failed: see {1})", prefix, log);
    return fmt::format("curves: {0}.png (data {0}.csv)", prefix);
  }

 private:
  static void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw wick::IOError(fmt::format("cannot write {}", path));
  }
  // A gnuplot single-quoted string: '' stands for '.
  static std::string quoted(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
    return q + "'";
  }
  std::string gnuplot_script(const std::string& prefix) const {
    const std::vector<std::string> series = series_names();
    std::string s = fmt::format(
        "# Draws {0}.csv (written by the demo) into {0}.png: gnuplot {0}.gp\n"
        "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {{ set terminal pngcairo noenhanced size 960,540 }} "
        "else {{ set terminal png noenhanced size 960,540 }}\n"
        "set output {1}\n"
        "set datafile separator ','\n"
        "set key autotitle columnhead\n"
        "set title {2}\n"
        "set xlabel {3}\n"
        "set ylabel 'loss'\n"
        "set grid\n"
        "set key top right\n",
        prefix, quoted(prefix + ".png"), quoted(title_), quoted(x_label_));
    bool accuracy = false;
    std::string plots;
    for (const auto& name : series) {
      const bool is_accuracy = name.find("accuracy") != std::string::npos;
      accuracy = accuracy || is_accuracy;
      const bool per_epoch = name.find("train") == std::string::npos;
      if (!plots.empty()) plots += ", \\\n     ";
      plots += fmt::format("{} using 2:(strcol(1) eq {} ? $3 : NaN) with {} title {}{}", quoted(prefix + ".csv"),
                           quoted(name), per_epoch ? "linespoints pointtype 7" : "lines", quoted(name),
                           is_accuracy ? " axes x1y2" : "");
    }
    if (accuracy) s += "set y2label 'accuracy'\nset y2tics\nset ytics nomirror\n";
    s += "set datafile missing NaN\n";
    return s + (plots.empty() ? "" : "plot " + plots + "\n");
  }

  std::string title_, x_label_;
  std::vector<CurvePoint> points_;
};

}  // namespace demo
