#include "cli/output_file.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "harness/scenario.hpp"

namespace locksim {

namespace {

// The temporaries the handler removes. A signal handler can only reach
// static storage, and may call only async-signal-safe functions (unlink,
// signal, raise): fixed buffers, claimed and released with atomics.
constexpr int kSlots = 32;
constexpr std::size_t kPathMax = 4096;
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<bool> ready{false};
  char path[kPathMax] = {};
};
std::array<Slot, kSlots> slots;

extern "C" void remove_temporaries(int sig) {
  for (Slot& s : slots)
    if (s.ready.load()) ::unlink(s.path);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

int claim(const std::string& tmp) {
  if (tmp.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (slots[i].used.compare_exchange_strong(expected, true)) {
      std::memcpy(slots[i].path, tmp.c_str(), tmp.size() + 1);
      slots[i].ready.store(true);
      return i;
    }
  }
  return -1;  // more files open at once than slots: still written whole, not cleaned on interrupt
}

void release(int i) {
  if (i < 0) return;
  slots[i].ready.store(false);
  slots[i].used.store(false);
}

}  // namespace

void install_output_cleanup() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction sa {};
    sa.sa_handler = remove_temporaries;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  static std::atomic<unsigned> serial{0};
  const std::size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  tmp_ = dir + "." + base + ".locksim-" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
  slot_ = claim(tmp_);  // before the file exists: an interrupt in between removes nothing, harmlessly
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    release(slot_);
    throw ScenarioError(path_ + ": cannot write there");
  }
}

OutputFile::~OutputFile() {
  if (committed_) return;
  out_.close();
  std::remove(tmp_.c_str());
  release(slot_);
}

void OutputFile::commit() {
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  if (!written || out_.fail() || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    std::remove(tmp_.c_str());
    release(slot_);
    committed_ = true;
    throw ScenarioError(path_ + ": cannot write there");
  }
  release(slot_);
  committed_ = true;
}

void write_whole(const std::string& path, const std::string& text) {
  OutputFile f(path);
  f.stream() << text;
  f.commit();
}

namespace {
const char kPngHow[] = "a PNG needs rsvg-convert: apt-get install librsvg2-bin, or scripts/install-deps; or ask for PATH.svg";
}  // namespace

void require_png_renderer(const std::string& png) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (std::size_t at = 0; at <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', at), dirs.size());
    const std::string dir = end > at ? dirs.substr(at, end - at) : ".";
    if (access((dir + "/rsvg-convert").c_str(), X_OK) == 0) return;
    at = end + 1;
  }
  throw ScenarioError(png + ": rsvg-convert is not on PATH (" + kPngHow + ")");
}

void write_png(const std::string& svg, const std::string& png) {
  const std::string tmp = png + ".svg";
  write_whole(tmp, svg);
  OutputFile out(png);  // rsvg-convert writes its temporary; commit renames it over PATH
  const std::string target = out.temporary_path();
  const char* argv[] = {"rsvg-convert", "-b", "white", "-o", target.c_str(), tmp.c_str(), nullptr};
  pid_t pid = 0;
  int status = -1;
  const bool ran = posix_spawnp(&pid, "rsvg-convert", nullptr, nullptr, const_cast<char* const*>(argv), environ) == 0 &&
                   waitpid(pid, &status, 0) == pid;
  std::filesystem::remove(tmp);
  if (!ran || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw ScenarioError(png + ": rsvg-convert could not render it (" + kPngHow + ")");
  out.commit();
}

}  // namespace locksim
