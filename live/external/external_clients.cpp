#include <utility>  // before Asio (Boost 1.74)

#include "live/external/external_clients.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "harness/faults.hpp"
#include "live/clock_control.hpp"
#include "live/external/adapter_process.hpp"
#include "live/external/protocol.hpp"
#include "live/external/redis_observer.hpp"
#include "live/external/storage_server.hpp"
#include "live/servers.hpp"
#include "lockalgos/libraries.hpp"

#include <sys/wait.h>

#include <thread>

extern char** environ;

namespace locksim::live::external {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

// How long an adapter may take to load its library and say hello (Python
// importing grpc, on a loaded machine), and to stop itself at its anchor.
constexpr Duration kHelloWithin = Duration::s(30);
constexpr Duration kStopWithin = Duration::s(2);

// [lock] keys every scenario has: told to the adapter in their own fields.
bool common_lock_key(std::string_view key) {
  return key == "library" || key == "algorithm" || key == "flavour" || key == "ttl" || key == "fencing" || key == "key";
}

bool is_client(const Scenario& s, const std::string& name) {
  return std::any_of(s.clients.begin(), s.clients.end(), [&](const ClientConfig& c) { return c.name == name; });
}

// The scenario's [[client]] check as written ("exists"), or "" for none.
std::string check_written(std::string_view library, LibraryCheck check) {
  if (const LibraryInfo* l = find_library(library))
    for (const LibraryCheckInfo& c : l->checks)
      if (c.check == check) return std::string(c.name);
  return {};
}

std::string library_version(std::string_view id) {
  const auto at = id.rfind('@');
  return at == std::string_view::npos ? std::string() : std::string(id.substr(at + 1));
}

}  // namespace

std::optional<std::string> external_unsupported(const Scenario& s) {
  const AdapterInfo* a = find_adapter(s.lock.library);
  if (!a) return "no adapter runs " + s.lock.library + " live yet (live/external/adapters.cpp lists those that do)";
  return std::nullopt;
}

struct ExternalClients::Client {
  ProcId id = kNoProc;
  const ClientConfig* config = nullptr;
  Rng rng;
  std::unique_ptr<AdapterProcess> process;
  std::unique_ptr<ClockControl> clock;  // when its clocks move
  std::string version;                  // its library's, as its hello says
  bool hello = false, ready = false, started = false, done = false, crashed = false, paused = false;
  int rounds_sent = 0;
  std::map<std::string, int> seen;                 // adapter event name -> how many so far
  std::vector<std::pair<StopAt, Duration>> stops;  // pauses it stops itself for
  std::vector<std::unique_ptr<asio::steady_timer>> timers;

  explicit Client(Rng r) : rng(std::move(r)) {}
  const std::string& name() const { return config->name; }
};

ExternalClients::ExternalClients(LiveHub& hub, Setup setup) : hub_(hub), setup_(std::move(setup)) {
  storage_ = std::make_unique<StorageServer>(hub_, setup_.storage, [this](ProcId p, const std::string& why) {
    fail(client(p), "the " + std::string(setup_.adapter.library) + " adapter broke the storage protocol: " + why);
  });
  const Scenario& s = setup_.scenario;
  for (std::size_t i = 0; i < s.clients.size(); ++i) {
    auto c = std::make_unique<Client>(setup_.rngs.at(i));
    c->id = setup_.clients.at(i);
    c->config = &s.clients[i];
    for (const FaultSpec& f : s.faults)
      if (anchored(f) && f.target == c->name())
        c->stops.push_back({StopAt{f.on_event, f.on_occurrence}, *f.duration});
    clients_.push_back(std::move(c));
  }
  if (setup_.adapter.service == Service::Redis)
    for (std::size_t i = 0; i < setup_.nodes.size(); ++i) {
      const ProcId n = setup_.nodes[i];
      keys_[n] = std::make_unique<NodeKeys>(hub_, n, server_key(setup_.adapter, s.lock.key), setup_.shimmed_nodes.count(n) > 0);
    }
}

ExternalClients::~ExternalClients() {
  for (auto& c : clients_) {
    c->timers.clear();
    c->process.reset();  // killed, then continued: it never runs again
  }
  observers_.clear();
  storage_.reset();
}

ExternalClients::Client& ExternalClients::client(ProcId p) {
  for (auto& c : clients_)
    if (c->id == p) return *c;
  throw Error("no external client " + std::to_string(p));
}

void ExternalClients::note(const Client& c, Ev kind, TraceEvent&& e) { note_now(hub_, c.id, kind, std::move(e)); }

std::uint16_t ExternalClients::upstream(ProcId client, ProcId node, std::uint16_t node_port) {
  auto& ids = ids_[{client, node}];
  if (!ids) ids = std::make_unique<LinkIds>();
  auto& o = observers_[{client, node}];
  if (!o) o = std::make_unique<RedisObserver>(hub_, client, *keys_.at(node), Endpoint{"127.0.0.1", node_port}, *ids);
  return o->port();
}

void ExternalClients::attach(ProcId client, ProcId node, Proxy& proxy) {
  proxy_ports_[{client, node}] = proxy.port();
  auto& ids = ids_[{client, node}];
  if (!ids) ids = std::make_unique<LinkIds>();
  if (setup_.adapter.service != Service::Redis) return;  // RESP only, so far
  proxy.set_tap([this, client, node](std::uint64_t connection, Direction d, Proxy::Seen seen, std::string_view bytes) {
    tapped(client, node, connection, d, seen, bytes);
  });
}

// The client's side of its messages to a node, from its proxy's tap: a
// request Sent as it arrives at the proxy, a reply Delivered as the proxy
// writes it, each with the id the node's side has (LinkIds).
void ExternalClients::tapped(ProcId client, ProcId node, std::uint64_t connection, Direction d, Proxy::Seen seen,
                             std::string_view bytes) {
  LinkIds::Queues& q = ids_.at({client, node})->connections[connection];
  const bool detailed = hub_.trace().detailed();
  if (d == Direction::ToServer) {
    if (seen == Proxy::Seen::Arrived) {
      const std::uint64_t id = hub_.next_message();
      q.arrived.push_back(id);
      if (recording_)
        note_now(hub_, client, Ev::Sent, {.peer = node, .value = static_cast<std::int64_t>(id), .content = fnv1a64(bytes),
                                          .detail = detailed ? request_text(bytes) : ""});
    } else if (!q.arrived.empty()) {
      if (seen == Proxy::Seen::Forwarded) q.to_server.push_back(q.arrived.front());
      if (seen == Proxy::Seen::Forwarded) q.arrived.pop_front();
      else q.arrived.pop_back();  // dropped as it arrived
    }
    return;
  }
  if (seen == Proxy::Seen::Arrived) return;
  std::uint64_t id = 0;
  if (!q.to_client.empty()) {
    id = q.to_client.front();
    q.to_client.pop_front();
  }
  if (seen == Proxy::Seen::Forwarded && recording_ && id != 0)
    note_now(hub_, client, Ev::Delivered, {.peer = node, .value = static_cast<std::int64_t>(id), .content = fnv1a64(bytes),
                                           .detail = detailed ? reply_text(bytes) : ""});
}

// --- Start ------------------------------------------------------------------------

void ExternalClients::start_adapters() {
  const Scenario& s = setup_.scenario;
  const Command command = adapter_command(setup_.adapter);
  for (auto& cp : clients_) {
    Client& c = *cp;
    const bool clock_moves = !c.config->clock.offset.is_zero() || c.config->clock.drift_ppb != 0 ||
                             c.config->clock.wall_drift_ppb != 0 ||
                             std::any_of(s.faults.begin(), s.faults.end(), [&](const FaultSpec& f) {
                               return (f.kind == FaultKind::ClockJump || f.kind == FaultKind::ClockDrift) && f.target == c.name();
                             });
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
      const std::string_view entry(*e);
      if (entry.rfind("LOCKSIM_CLOCK_FILE=", 0) == 0 || entry.rfind("LD_PRELOAD=", 0) == 0) continue;
      env.emplace_back(entry);
    }
    if (clock_moves) {
      c.clock = std::make_unique<ClockControl>(setup_.dir / (c.name() + ".clock"));
      const ClockSpec& spec = c.config->clock;
      if (!spec.offset.is_zero()) c.clock->step(spec.offset);
      if (spec.drift_ppb + spec.wall_drift_ppb != 0) c.clock->set_drift_ppb(spec.drift_ppb + spec.wall_drift_ppb);
      if (spec.drift_ppb != 0) c.clock->set_mono_drift_ppb(spec.drift_ppb);
      env.push_back("LD_PRELOAD=" + clockshim_path().string());
      env.push_back(c.clock->env_entry());
    }
    Client* self = &c;
    c.process = std::make_unique<AdapterProcess>(
        hub_.io(), command, env, setup_.dir / (c.name() + ".stderr"),
        AdapterProcess::Handlers{[this, self](std::string line) { on_line(*self, line); },
                                 [this, self] { on_ended(*self); }});
  }
  // Their hellos, then their jobs and their ready (connected to their
  // servers), while the run's context turns: nothing else is on it yet but
  // the proxies and the observers, which record nothing before the run.
  wait_for([](const Client& c) { return c.hello; }, "say hello");
  for (auto& c : clients_) c->process->send(encode(job_for(*c)));
  wait_for([](const Client& c) { return c.ready; }, "connect to its servers");
}

// Turns the context until `done` holds for every client (bounded: kHelloWithin).
void ExternalClients::wait_for(const std::function<bool(const Client&)>& done, const std::string& what) {
  const Deadline deadline(kHelloWithin);
  for (;;) {
    rethrow();
    if (std::all_of(clients_.begin(), clients_.end(), [&](const auto& c) { return done(*c); })) break;
    if (deadline.passed())
      for (const auto& c : clients_)
        if (!done(*c))
          throw ExternalClientError(c->name() + ": the " + std::string(setup_.adapter.library) + " adapter did not " + what +
                                    " within " + format_duration(kHelloWithin) + " (" +
                                    adapter_folder(setup_.adapter).string() + "); is the machine very loaded?");
    hub_.io().restart();
    hub_.io().run_for(std::chrono::milliseconds(10));
  }
  hub_.io().restart();
}

JobMessage ExternalClients::job_for(const Client& c) {
  const Scenario& s = setup_.scenario;
  JobMessage m;
  m.client = c.name();
  m.library = s.lock.library;
  for (ProcId n : setup_.nodes) m.servers.push_back({hub_.trace().name(n), Endpoint{"127.0.0.1", proxy_ports_.at({c.id, n})}});
  m.storage = Endpoint{"127.0.0.1", storage_->port_for(c.id)};
  m.key = s.lock.key;
  if (s.lock.ttl) m.ttl_ms = s.lock.ttl->whole_ms();
  m.fencing = std::string(fencing_name(s.lock.fencing));
  m.job = std::string(job_name(c.config->job));
  m.check_before_write = c.config->check_before_write;
  m.using_routine = c.config->library.using_routine;
  m.check = check_written(s.lock.library, c.config->library.check);
  m.fenced_reads = s.storage.fenced_reads;
  m.storage_timeout_ms = c.config->storage_timeout.whole_ms();
  for (const LockConfig::Written& w : s.lock.written)
    if (!common_lock_key(w.key))
      if (auto o = option_for_adapter(w.key, w.text)) m.options.push_back(std::move(*o));
  for (const auto& [stop, d] : c.stops) m.stop_at.push_back(stop);
  return m;
}

void ExternalClients::start_jobs() {
  recording_ = true;
  for (auto& [node, keys] : keys_) keys->record();
  for (auto& cp : clients_) {
    Client& c = *cp;
    const Instant start = Instant::zero() + c.config->start.draw(c.rng);
    auto timer = std::make_unique<asio::steady_timer>(hub_.io(), hub_.clock().real_at(start));
    timer->async_wait([this, &c](const error_code& ec) {
      if (ec || c.crashed) return;
      note(c, Ev::Started, {});
      c.started = true;
      send_round(c);
    });
    c.timers.push_back(std::move(timer));
  }
}

// The next round's drawn durations (as the simulator's job draws them,
// harness/job.cpp), or the end.
void ExternalClients::send_round(Client& c) {
  const ClientConfig& cfg = *c.config;
  if (cfg.repeat != kForever && c.rounds_sent >= cfg.repeat) {
    c.process->send(encode_end());
    return;
  }
  RoundMessage r;
  if (c.rounds_sent > 0) r.think_ms = cfg.think.draw(c.rng).whole_ms();
  if (cfg.job == JobKind::Hold) r.hold_ms = cfg.hold.draw(c.rng).whole_ms();
  else r.work_ms = cfg.work.draw(c.rng).whole_ms();
  ++c.rounds_sent;
  c.process->send(encode(r));
}

// --- What an adapter says ------------------------------------------------------------

void ExternalClients::on_line(Client& c, const std::string& line) {
  if (failure_) return;
  AdapterEvent e;
  try {
    e = parse_event(line);
  } catch (const Error& err) {
    return fail(c, "the " + std::string(setup_.adapter.library) + " adapter broke the protocol on its stdout: " + err.what() +
                       " (live/README.md: an adapter prints protocol lines only)");
  }
  on_event(c, e);
}

void ExternalClients::on_event(Client& c, const AdapterEvent& e) {
  const std::string library(setup_.adapter.library);
  switch (e.ev) {
    case AdapterEv::Hello: {
      const std::string want = library_version(library);
      if (e.version != want)
        return fail(c, "the " + library + " adapter loaded " + e.library + " " + e.version + ", not " + want +
                           ": run scripts/install-deps (" + std::string(setup_.adapter.install) + ")");
      c.hello = true;
      c.version = e.version;
      return;
    }
    case AdapterEv::Error:
      if (!e.missing.empty())
        return fail(c, library + " is not installed (" + adapter_folder(setup_.adapter).string() + " cannot load " + e.missing + "): run scripts/install-deps (" +
                           std::string(setup_.adapter.install) + ")");
      return fail(c, "the " + library + " adapter failed: " + e.detail);
    case AdapterEv::Ready:
      c.ready = true;
      return;
    case AdapterEv::RoundDone:
      if (c.started) send_round(c);
      return;
    default: break;
  }
  if (!c.started) return fail(c, "the " + library + " adapter said \"" + e.name + "\" before its job began");
  const std::optional<Ev> kind = trace_kind(e.ev);
  TraceEvent t{.value = e.value.value_or(0), .token = e.token.value_or(-1), .detail = e.detail};
  if (e.ev == AdapterEv::Acquired) {
    t.key = e.lock_value;
    // Until when it believes it holds the lock (the library's own deadline,
    // as ms left), on its clock as the run reads it; -1: it keeps none.
    t.value = e.value ? (hub_.clock().now() + Duration::ms(*e.value)).ns() : -1;
    for (const auto& [node, keys] : keys_)  // where the servers say it holds it (the simulator's "where")
      if (keys->holder() == c.id) t.detail += (t.detail.empty() ? "" : ",") + hub_.trace().name(node);
    // None does (a belief the servers no longer back: a reply that came
    // after the key expired): the nodes it asked, which the library counted.
    // ZooKeeper's one node, whose watcher states the holder itself.
    if (t.detail.empty())
      for (ProcId node : setup_.nodes) t.detail += (t.detail.empty() ? "" : ",") + hub_.trace().name(node);
  }
  if (e.ev == AdapterEv::Notified) {
    const std::optional<LibrarySignal> signal = library_signal(e.signal);
    if (!signal) return fail(c, "the " + library + " adapter notified an unknown signal \"" + e.signal + "\"");
    t.value = static_cast<std::int64_t>(*signal);
  }
  if (e.ev == AdapterEv::Done) c.done = true;
  note(c, *kind, std::move(t));
  // A pause anchored on this event: the adapter stops itself right after its line.
  const int seen = ++c.seen[e.name];
  for (const auto& [stop, d] : c.stops)
    if (stop.event == e.name && stop.occurrence == seen) pause(c, d, true);
}

void ExternalClients::on_ended(Client& c) {
  if (c.crashed || failure_) return;
  // Give the kernel a moment to make it a zombie, then say how it ended.
  std::optional<int> status;
  const Deadline deadline(Duration::s(2));
  while (!(status = c.process->try_reap()) && !deadline.passed()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::string how = status ? exit_text(*status) : "closed its stdout";
  const std::string library(setup_.adapter.library);
  if (c.done && status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) return;
  const std::string last = c.process->last_error_line();
  const std::string said = last.empty() ? "" : " (" + last + ")";
  if (!c.hello)
    return fail(c, "the " + library + " adapter " + how + " before it said hello" + said + ": run scripts/install-deps (" +
                       std::string(setup_.adapter.install) + ")");
  fail(c, "the " + library + " adapter " + how + " during its job" + said);
}

void ExternalClients::fail(const Client& c, const std::string& what) {
  if (failure_) return;
  failure_ = c.name() + ": " + what;
  hub_.io().stop();
}

void ExternalClients::rethrow() const {
  if (failure_) throw ExternalClientError(*failure_);
}

bool ExternalClients::finished() const {
  return std::all_of(clients_.begin(), clients_.end(), [](const auto& c) { return (c->done || c->crashed) && !c->paused; });
}

// --- Faults ----------------------------------------------------------------------------

bool ExternalClients::has(const std::string& name) const {
  return std::any_of(clients_.begin(), clients_.end(), [&](const auto& c) { return c->name() == name; });
}

ExternalClients::Client* ExternalClients::live_client(const std::string& name) {
  for (auto& c : clients_)
    if (c->name() == name) return c->crashed ? nullptr : c.get();
  return nullptr;
}

bool ExternalClients::anchored(const FaultSpec& f) const {
  return f.kind == FaultKind::Pause && !f.at && f.after.is_zero() && f.on_process == f.target &&
         is_client(setup_.scenario, f.target);
}

void ExternalClients::pause(const std::string& name, Duration d) {
  if (Client* c = live_client(name)) pause(*c, d, false);
}

void ExternalClients::crash(const std::string& name) {
  if (Client* c = live_client(name)) crash(*c);
}

void ExternalClients::clock_jump(const std::string& name, Duration by) {
  Client* c = live_client(name);
  if (!c) return;
  if (c->clock) c->clock->step(by);
  note(*c, Ev::ClockJumped, {.value = by.count_ns(), .detail = (by >= Duration::zero() ? "+" : "") + format_duration(by)});
}

void ExternalClients::clock_drift(const std::string& name, std::int64_t ppb) {
  Client* c = live_client(name);
  if (!c) return;
  if (c->clock) {
    c->clock->set_drift_ppb(ppb + c->config->clock.wall_drift_ppb);
    c->clock->set_mono_drift_ppb(ppb);
  }
  note(*c, Ev::ClockDrift, {.value = ppb});
}

// A pause: SIGSTOP (or the adapter's own, `itself`), noted once it is
// stopped; SIGCONT after `d`.
void ExternalClients::pause(Client& c, Duration d, bool itself) {
  if (c.paused || !c.process->running()) return;
  c.paused = true;
  if (!itself) c.process->stop();
  when_stopped(c, d, Deadline(kStopWithin));
}

void ExternalClients::when_stopped(Client& c, Duration d, const Deadline& deadline) {
  if (c.crashed) return;
  if (!c.process->stopped()) {
    if (deadline.passed())
      return fail(c, "the " + std::string(setup_.adapter.library) + " adapter did not stop within " +
                         format_duration(kStopWithin) + " at its pause");
    auto timer = std::make_unique<asio::steady_timer>(hub_.io(), std::chrono::milliseconds(1));
    timer->async_wait([this, &c, d, deadline](const error_code& ec) {
      if (!ec) when_stopped(c, d, deadline);
    });
    c.timers.push_back(std::move(timer));
    return;
  }
  note(c, Ev::Paused, {.value = d.count_ns(), .detail = format_duration(d)});
  auto timer = std::make_unique<asio::steady_timer>(hub_.io(), real(hub_.clock().real(d)));
  timer->async_wait([this, &c](const error_code& ec) {
    if (ec || c.crashed) return;
    c.paused = false;
    note(c, Ev::Resumed, {});
    c.process->resume();
  });
  c.timers.push_back(std::move(timer));
}

void ExternalClients::crash(Client& c) {
  c.crashed = true;
  c.paused = false;
  note(c, Ev::Crashed, {});
  c.process->kill();
  storage_->drop_connections(c.id);
}

// --- The nodes -------------------------------------------------------------------------

void ExternalClients::node_expired(ProcId node, const std::string& key) {
  const auto it = keys_.find(node);
  if (it != keys_.end() && it->second->key() == key) it->second->expired();
}

void ExternalClients::node_crashed(ProcId node) {
  for (auto& [link, o] : observers_)
    if (link.second == node) o->sever();
}

void ExternalClients::node_restarted(ProcId node, bool lost_data) {
  const auto it = keys_.find(node);
  if (lost_data && it != keys_.end()) it->second->forget();
}

}  // namespace locksim::live::external
