#include "live/external/protocol.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

namespace locksim::live::external {

namespace {

using json = nlohmann::json;

std::string line_of(const json& j) { return j.dump() + "\n"; }

json endpoint(const Endpoint& e) { return {{"host", e.host}, {"port", e.port}}; }

struct EventName {
  AdapterEv ev;
  std::string_view name;
};

// The adapters' event names: the trace's (sim/trace.cpp event_name) where
// there is one, so that `on = "client1 read"` reads the same both ways.
constexpr std::array<EventName, 20> kEvents{{
    {AdapterEv::Hello, "hello"},
    {AdapterEv::Ready, "ready"},
    {AdapterEv::Acquiring, "acquiring"},
    {AdapterEv::Acquired, "acquired"},
    {AdapterEv::AcquireFailed, "acquire-failed"},
    {AdapterEv::AttemptFailed, "attempt-failed"},
    {AdapterEv::Claiming, "claiming"},
    {AdapterEv::Read, "read"},
    {AdapterEv::Checked, "checked"},
    {AdapterEv::Lost, "lost"},
    {AdapterEv::Notified, "notified"},
    {AdapterEv::Writing, "writing"},
    {AdapterEv::Wrote, "wrote"},
    {AdapterEv::WriteRejected, "write-rejected"},
    {AdapterEv::Releasing, "releasing"},
    {AdapterEv::Released, "released"},
    {AdapterEv::ReleaseFailed, "release-failed"},
    {AdapterEv::RoundDone, "round-done"},
    {AdapterEv::Done, "done"},
    {AdapterEv::Error, "error"},
}};

// An optional integer field; throws when present and not an integer.
std::optional<std::int64_t> integer(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) throw Error(std::string("\"") + key + "\" is not an integer: " + it->dump());
  return it->get<std::int64_t>();
}

// An optional string field ("" when absent); throws when present and not a string.
std::string text(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_string()) throw Error(std::string("\"") + key + "\" is not a string: " + it->dump());
  return it->get<std::string>();
}

json parse_object(std::string_view line) {
  json j = json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    const std::string shown(line.substr(0, 80));
    throw Error("not a JSON object: '" + shown + (line.size() > 80 ? "…'" : "'"));
  }
  return j;
}

}  // namespace

std::string encode(const JobMessage& m) {
  json servers = json::array();
  for (const NamedEndpoint& s : m.servers) {
    json e = endpoint(s.at);
    e["name"] = s.name;
    servers.push_back(std::move(e));
  }
  json options = json::object();
  for (const auto& [key, value] : m.options) options[key] = json::parse(value);
  json stops = json::array();
  for (const StopAt& s : m.stop_at) stops.push_back({{"event", s.event}, {"occurrence", s.occurrence}});
  json j = {{"msg", "job"},
            {"client", m.client},
            {"library", m.library},
            {"servers", std::move(servers)},
            {"storage", endpoint(m.storage)},
            {"key", m.key},
            {"ttl_ms", m.ttl_ms ? json(*m.ttl_ms) : json()},
            {"fencing", m.fencing},
            {"job", m.job},
            {"check_before_write", m.check_before_write},
            {"fenced_reads", m.fenced_reads},
            {"using", m.using_routine},
            {"check", m.check},
            {"storage_timeout_ms", m.storage_timeout_ms},
            {"options", std::move(options)},
            {"stop_at", std::move(stops)}};
  return line_of(j);
}

std::string encode(const RoundMessage& m) {
  return line_of({{"msg", "round"}, {"think_ms", m.think_ms}, {"work_ms", m.work_ms}, {"hold_ms", m.hold_ms}});
}

std::string encode_end() { return line_of({{"msg", "end"}}); }

std::string_view adapter_event_name(AdapterEv ev) {
  for (const EventName& e : kEvents)
    if (e.ev == ev) return e.name;
  return "?";
}

AdapterEvent parse_event(std::string_view line) {
  const json j = parse_object(line);
  const std::string name = text(j, "ev");
  if (name.empty()) throw Error("no \"ev\" in '" + std::string(line.substr(0, 80)) + "'");
  AdapterEvent e;
  const auto known = std::find_if(kEvents.begin(), kEvents.end(), [&](const EventName& n) { return n.name == name; });
  if (known == kEvents.end()) throw Error("unknown event \"" + name + "\"");
  e.ev = known->ev;
  e.name = name;
  e.value = integer(j, "value");
  e.token = integer(j, "token");
  e.lock_value = text(j, "lock_value");
  e.signal = text(j, "signal");
  e.library = text(j, "library");
  e.version = text(j, "version");
  e.missing = text(j, "missing");
  e.detail = text(j, "detail");
  if (e.ev == AdapterEv::Notified && e.signal.empty()) throw Error("\"notified\" without a \"signal\"");
  if (e.ev == AdapterEv::Hello && (e.library.empty() || e.version.empty()))
    throw Error("\"hello\" without its \"library\" and \"version\"");
  return e;
}

std::optional<Ev> trace_kind(AdapterEv ev) {
  switch (ev) {
    case AdapterEv::Acquiring: return Ev::Acquiring;
    case AdapterEv::Acquired: return Ev::Acquired;
    case AdapterEv::AcquireFailed: return Ev::AcquireFailed;
    case AdapterEv::AttemptFailed: return Ev::AttemptFailed;
    case AdapterEv::Claiming: return Ev::Claiming;
    case AdapterEv::Read: return Ev::Read;
    case AdapterEv::Checked: return Ev::Checked;
    case AdapterEv::Lost: return Ev::Lost;
    case AdapterEv::Notified: return Ev::Notified;
    case AdapterEv::Writing: return Ev::Writing;
    case AdapterEv::Wrote: return Ev::Wrote;
    case AdapterEv::WriteRejected: return Ev::WriteRejected;
    case AdapterEv::Releasing: return Ev::Releasing;
    case AdapterEv::Released: return Ev::Released;
    case AdapterEv::ReleaseFailed: return Ev::ReleaseFailed;
    case AdapterEv::Done: return Ev::JobDone;
    case AdapterEv::Hello:
    case AdapterEv::Ready:
    case AdapterEv::RoundDone:
    case AdapterEv::Error: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<LibrarySignal> library_signal(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, LibrarySignal>, 5> kSignals{{
      {"suspended", LibrarySignal::Suspended},
      {"reconnected", LibrarySignal::Reconnected},
      {"session-lost", LibrarySignal::SessionLost},
      {"lock-lost", LibrarySignal::LockLost},
      {"lease-lost", LibrarySignal::LeaseLost},
  }};
  for (const auto& [n, s] : kSignals)
    if (n == name) return s;
  return std::nullopt;
}

storage::Request parse_storage_request(std::string_view line) {
  const json j = parse_object(line);
  const std::string op = text(j, "op");
  storage::Request r;
  if (op == "read") r.op = storage::Request::Op::Read;
  else if (op == "write") r.op = storage::Request::Op::Write;
  else if (op == "claim") r.op = storage::Request::Op::Claim;
  else throw Error("unknown storage op \"" + op + "\" (read, write, claim)");
  if (r.op == storage::Request::Op::Write) {
    const std::optional<std::int64_t> value = integer(j, "value");
    if (!value) throw Error("a write without its \"value\"");
    r.value = *value;
  }
  r.token = integer(j, "token").value_or(-1);
  if (r.token < -1) throw Error("token " + std::to_string(r.token) + " (a token is 0 or more, -1 for none)");
  r.owner = text(j, "owner");
  return r;
}

std::string encode_storage_reply(const storage::Reply& r) {
  json j = {{"ok", r.accepted}, {"value", r.value}};
  if (!r.reason.empty()) j["reason"] = r.reason;
  return line_of(j);
}

std::optional<std::pair<std::string, std::string>> option_for_adapter(std::string_view key, std::string_view toml_text) {
  const json v = json::parse(toml_text.begin(), toml_text.end(), nullptr, false);
  if (v.is_discarded()) return std::nullopt;  // not a JSON scalar either (a TOML table, a literal string)
  if (v.is_string()) {
    if (const std::optional<Duration> d = parse_duration(v.get<std::string>()))
      return std::pair{std::string(key) + "_ms", std::to_string(d->whole_ms())};
    return std::pair{std::string(key), v.dump()};
  }
  if (v.is_number() || v.is_boolean()) return std::pair{std::string(key), v.dump()};
  return std::nullopt;
}

}  // namespace locksim::live::external
