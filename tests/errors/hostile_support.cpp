// Shared by the hostile-input tests (hostile_support.h).
#include "hostile_support.h"

#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <typeinfo>

#if defined(__SANITIZE_ADDRESS__)
#define WICK_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WICK_TEST_ASAN 1
#endif
#endif

namespace wick::test::hostile {

using Catch::Matchers::Contains;

std::string class_of(const Error& e) {
  if (dynamic_cast<const OutOfMemoryError*>(&e)) return "OutOfMemoryError";
  if (dynamic_cast<const BackendError*>(&e)) return "BackendError";
  if (dynamic_cast<const ValueError*>(&e)) return "ValueError";
  if (dynamic_cast<const TypeError*>(&e)) return "TypeError";
  if (dynamic_cast<const IndexError*>(&e)) return "IndexError";
  if (dynamic_cast<const NotImplementedError*>(&e)) return "NotImplementedError";
  if (dynamic_cast<const StateError*>(&e)) return "StateError";
  if (dynamic_cast<const FormatError*>(&e)) return "FormatError";
  if (dynamic_cast<const IOError*>(&e)) return "IOError";
  if (dynamic_cast<const DeviceUnavailable*>(&e)) return "DeviceUnavailable";
  return "Error";
}

void check_rows(const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    INFO("row: " << r.what << " (expects " << r.expected << ")");
    bool threw = false;
    try {
      r.call();
    } catch (const Error& e) {
      threw = true;
      INFO("message: " << e.what());
      CHECK(class_of(e) == r.expected);
      for (const auto& w : r.words) CHECK_THAT(e.what(), Contains(w));
      CHECK(std::string(e.what()).size() < 1500);  // no bad value is quoted at length
    } catch (const std::exception& e) {
      FAIL("not a wick::Error: " << typeid(e).name() << ": " << e.what());
    }
    CHECK(threw);
  }
}

std::string safetensors_image(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

namespace {
long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}
}  // namespace

Bounded run_bounded(const std::function<void()>& fn, const std::string& expected) {
  std::fflush(nullptr);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const long parent_rss = rss_kib();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
#ifndef WICK_TEST_ASAN
    std::ifstream statm("/proc/self/statm");
    long pages = 0;
    statm >> pages;
    const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (rlim_t{64} << 20);
    struct rlimit rl {
      limit, limit
    };
    ::setrlimit(RLIMIT_AS, &rl);
#endif
    ::alarm(10);
    int code = 4;
    std::string msg;
    try {
      fn();
    } catch (const Error& e) {
      msg = class_of(e) + ": " + e.what();
      code = class_of(e) == expected ? 0 : 1;
    } catch (const std::bad_alloc&) {
      code = 2;
    } catch (...) {
      code = 3;
    }
    (void)!::write(fds[1], msg.data(), msg.size());
    ::_exit(code);
  }
  ::close(fds[1]);
  Bounded b;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) b.message.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  struct rusage ru {};
  REQUIRE(::wait4(pid, &status, 0, &ru) == pid);
  b.exited = WIFEXITED(status);
  b.code = b.exited ? WEXITSTATUS(status) : -WTERMSIG(status);
  b.cpu_seconds = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                  static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  b.extra_rss_mib = static_cast<double>(ru.ru_maxrss - parent_rss) / 1024.0;
  return b;
}

}  // namespace wick::test::hostile
