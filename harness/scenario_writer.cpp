#include "harness/scenario_writer.hpp"

#include <fmt/format.h>

#include "harness/faults/kind.hpp"
#include "lockalgos/libraries.hpp"

namespace locksim {

namespace {

// A TOML basic string.
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        // Control characters and DEL as escapes: the loader refuses them raw.
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else out += c;
    }
  }
  return out + "\"";
}

// A multi-line basic string, for `about`.
std::string block(const std::string& s) {
  std::string body;
  for (char c : s) {
    if (c == '\\') body += "\\\\";
    else if (c == '"') body += "\\\"";
    else if ((static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') || c == 0x7F)
      body += fmt::format("\\u{:04x}", static_cast<int>(c));  // the loader refuses them raw
    else body += c;
  }
  return "\"\"\"\n" + body + (body.empty() || body.back() != '\n' ? "\n" : "") + "\"\"\"";
}

std::string dur(Duration d) { return quote(format_duration(d)); }
std::string range(const DurationRange& r) { return quote(format_range(r)); }
std::string count(int n) { return n == kForever ? quote("forever") : std::to_string(n); }

// Parts per million, from billionths: whole when it is.
std::string ppm_text(std::int64_t ppb) {
  return ppb % 1000 == 0 ? std::to_string(ppb / 1000) : fmt::format("{}", static_cast<double>(ppb) / 1000.0);
}

std::string clock(const ClockSpec& c) {
  const std::string wall = c.wall_drift_ppb == 0 ? "" : ", wall_drift_ppm = " + ppm_text(c.wall_drift_ppb);
  return fmt::format("{{ offset = {}, drift_ppm = {}{} }}", dur(c.offset), ppm_text(c.drift_ppb), wall);
}

std::string names(const std::vector<std::string>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + quote(v[i]);
  return s + "]";
}

}  // namespace

std::string to_toml(const Scenario& s) {
  std::string out;
  auto line = [&](const std::string& key, const std::string& value) { out += key + " = " + value + "\n"; };

  line("title", quote(s.title));
  line("source", quote(s.source));
  out += "about = " + block(s.about) + "\n";
  line("seed", std::to_string(s.seed));
  line("duration", dur(s.duration));

  // [lock] as the file wrote it (set_lock_option edits the text).
  out += "\n[lock]\n";
  for (const LockConfig::Written& w : s.lock.written) line(w.key, w.text);

  out += "\n[network]\n";
  line("delay", range(s.network.delay));
  if (s.network.loss > 0) line("loss", fmt::format("{}", s.network.loss));
  if (!s.network.fifo) line("fifo", "false");

  for (const NodeConfig& n : s.nodes) {
    out += "\n[[node]]\n";
    line("name", quote(n.name));
    line("clock", clock(n.clock));
    if (n.persistence == Persistence::AofAlways) line("persistence", quote("aof-always"));
    if (n.persistence == Persistence::AofEverysec) line("persistence", quote("aof-everysec"));
    if (!n.restart_delay.is_zero()) line("restart_delay", dur(n.restart_delay));
    if (!n.replica_of.empty()) {
      line("replica_of", quote(n.replica_of));
      line("replication_lag", range(n.replication_lag));
      if (!n.expiry_as_pxat) line("expiry_propagation", quote("px"));
      if (n.replica_priority != 100) line("replica_priority", std::to_string(n.replica_priority));
    }
  }
  if (s.sentinel.present) {
    out += "\n[sentinel]\n";
    line("name", quote(s.sentinel.name));
    if (s.sentinel.sentinels != 1) line("sentinels", std::to_string(s.sentinel.sentinels));
    if (s.sentinel.quorum) line("quorum", std::to_string(*s.sentinel.quorum));
    line("down_after", dur(s.sentinel.down_after));
    line("failover_timeout", dur(s.sentinel.failover_timeout));
    line("ping_period", dur(s.sentinel.ping_period));
    line("clock", clock(s.sentinel.clock));
  }
  out += "\n[storage]\n";
  line("name", quote(s.storage.name));
  line("initial", std::to_string(s.storage.initial));
  line("clock", clock(s.storage.clock));
  if (s.storage.fenced_reads) line("fenced_reads", "true");

  for (const ClientConfig& c : s.clients) {
    out += "\n[[client]]\n";
    line("name", quote(c.name));
    line("start", range(c.start));
    line("job", quote(std::string(job_name(c.job))));
    if (c.job == JobKind::Hold) {
      line("hold", range(c.hold));
    } else {
      line("work", range(c.work));
      if (c.check_before_write) line("check_before_write", "true");
      if (!c.storage_timeout.is_zero()) line("storage_timeout", dur(c.storage_timeout));
    }
    line("repeat", count(c.repeat));
    if (!(c.think.is_fixed() && c.think.lo.is_zero())) line("think", range(c.think));
    line("clock", clock(c.clock));
    // A library scenario's own keys, named as the library's table names them.
    if (c.library.using_routine) {
      line("using", "true");
    } else if (const LibraryInfo* lib = find_library(s.lock.library)) {
      for (const LibraryCheckInfo& k : lib->checks)
        if (k.check == c.library.check) line("check", quote(std::string(k.name)));
    }
  }

  for (const FaultSpec& f : s.faults) {
    out += "\n[[fault]]\n";
    if (f.at) {
      line("at", dur(*f.at));
    } else {
      line("on", quote(f.on_process + " " + f.on_event + (f.on_occurrence != 1 ? "#" + std::to_string(f.on_occurrence) : "")));
      if (!f.after.is_zero()) line("after", dur(f.after));
    }
    line("kind", quote(std::string(fault_kind_name(f.kind))));
    FaultWriter w(out);
    fault_kind(f.kind).write(w, f);
  }

  if (s.expect.present) {
    out += "\n[expect]\n";
    std::vector<std::string> kinds;
    for (ViolationKind k : s.expect.violations) kinds.emplace_back(violation_name(k));
    line("violations", names(kinds));
    if (s.expect.liveness_window) line("liveness_window", dur(*s.expect.liveness_window));
  }
  return out;
}

void FaultWriter::raw(std::string_view key, const std::string& toml) { out_ += std::string(key) + " = " + toml + "\n"; }
void FaultWriter::string(std::string_view key, const std::string& value) { raw(key, quote(value)); }
void FaultWriter::duration(std::string_view key, Duration d) { raw(key, dur(d)); }
void FaultWriter::ppm(std::string_view key, std::int64_t ppb) { raw(key, ppm_text(ppb)); }
void FaultWriter::groups(std::string_view key, const std::vector<std::vector<std::string>>& groups) {
  std::string g = "[";
  for (std::size_t i = 0; i < groups.size(); ++i) g += (i ? ", " : "") + names(groups[i]);
  raw(key, g + "]");
}

}  // namespace locksim
