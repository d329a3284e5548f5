#include "live/clock_control.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "live/clockshim/clock_page.h"

namespace locksim::live {

namespace {

// The real clocks: what the shim's raw syscalls read (locksim itself is never shimmed).
std::int64_t real_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
std::int64_t real_wall_ns() { return real_ns(CLOCK_REALTIME); }
std::int64_t real_mono_ns() { return real_ns(CLOCK_MONOTONIC); }

std::int64_t drift_gained(std::int64_t real, std::int64_t anchor, std::int64_t ppb) {
  return static_cast<std::int64_t>(static_cast<__int128>(real - anchor) * ppb / 1'000'000'000);
}

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path) {
  throw Error("clock page " + path.string() + ": " + what + ": " + std::strerror(errno));
}

}  // namespace

ClockControl::ClockControl(std::filesystem::path path) : path_(std::move(path)) {
  const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fail("cannot create", path_);
  // A whole page: the shim maps the struct, and a mapping beyond the file's end would SIGBUS.
  const long size = sysconf(_SC_PAGESIZE);
  if (::ftruncate(fd, size) != 0) {
    ::close(fd);
    fail("cannot size", path_);
  }
  void* mapped = ::mmap(nullptr, sizeof(locksim_clock_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) fail("cannot map", path_);
  page_ = static_cast<locksim_clock_page*>(mapped);
  write(0, real_wall_ns(), 0);
  write_mono(0, real_mono_ns(), 0);
  // The magic last: a reader that sees it sees initialised fields.
  __atomic_store_n(&page_->magic, LOCKSIM_CLOCK_MAGIC, __ATOMIC_RELEASE);
}

ClockControl::ClockControl(ClockControl&& other) noexcept
    : path_(std::move(other.path_)), page_(std::exchange(other.page_, nullptr)) {}

ClockControl::~ClockControl() {
  if (page_) ::munmap(page_, sizeof(locksim_clock_page));
}

void ClockControl::write(std::int64_t offset_ns, std::int64_t anchor_ns, std::int64_t drift_ppb) {
  // The seqlock's writer side: odd while the fields change.
  const std::uint64_t seq = __atomic_load_n(&page_->seq, __ATOMIC_RELAXED);
  __atomic_store_n(&page_->seq, seq + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&page_->offset_ns, offset_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&page_->anchor_ns, anchor_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&page_->drift_ppb, drift_ppb, __ATOMIC_RELAXED);
  __atomic_store_n(&page_->seq, seq + 2, __ATOMIC_RELEASE);
}

void ClockControl::write_mono(std::int64_t offset_ns, std::int64_t anchor_ns, std::int64_t drift_ppb) {
  const std::uint64_t seq = __atomic_load_n(&page_->seq, __ATOMIC_RELAXED);
  __atomic_store_n(&page_->seq, seq + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&page_->mono_offset_ns, offset_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&page_->mono_anchor_ns, anchor_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&page_->mono_drift_ppb, drift_ppb, __ATOMIC_RELAXED);
  __atomic_store_n(&page_->seq, seq + 2, __ATOMIC_RELEASE);
}

void ClockControl::step(Duration by) {
  write(page_->offset_ns + by.count_ns(), page_->anchor_ns, page_->drift_ppb);
}

void ClockControl::set_drift_ppb(std::int64_t ppb) {
  // Fold what the old drift gained into the offset and count the new one from now:
  // the wall clock changes rate here, it does not jump.
  const std::int64_t now = real_wall_ns();
  write(page_->offset_ns + drift_gained(now, page_->anchor_ns, page_->drift_ppb), now, ppb);
}

Duration ClockControl::offset_now() const {
  return Duration::ns(page_->offset_ns + drift_gained(real_wall_ns(), page_->anchor_ns, page_->drift_ppb));
}

std::int64_t ClockControl::drift_ppb() const { return page_->drift_ppb; }

void ClockControl::step_mono(Duration by) {
  write_mono(page_->mono_offset_ns + by.count_ns(), page_->mono_anchor_ns, page_->mono_drift_ppb);
}

void ClockControl::set_mono_drift_ppb(std::int64_t ppb) {
  const std::int64_t now = real_mono_ns();
  write_mono(page_->mono_offset_ns + drift_gained(now, page_->mono_anchor_ns, page_->mono_drift_ppb), now, ppb);
}

Duration ClockControl::mono_offset_now() const {
  return Duration::ns(page_->mono_offset_ns + drift_gained(real_mono_ns(), page_->mono_anchor_ns, page_->mono_drift_ppb));
}

std::int64_t ClockControl::mono_drift_ppb() const { return page_->mono_drift_ppb; }

std::string ClockControl::env_entry() const { return std::string(LOCKSIM_CLOCK_FILE_ENV) + "=" + path_.string(); }

std::filesystem::path clockshim_path() {
  if (const char* env = std::getenv("LOCKSIM_CLOCKSHIM"); env && *env) return env;
  return LOCKSIM_CLOCKSHIM_BUILT;
}

}  // namespace locksim::live
