#include "live/etcd/diff.hpp"

#include <utility>  // before Asio (Boost 1.74)

#include <algorithm>
#include <boost/asio.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "harness/sim_client.hpp"
#include "live/ddmin.hpp"
#include "live/etcd/gateway.hpp"
#include "live/etcd/http.hpp"
#include "live/servers.hpp"
#include "lockalgos/coordination_common.hpp"
#include "sim/servers/etcd/server.hpp"
#include "sim/rng.hpp"

namespace locksim::live::etcd::diff {

using Kind = Step::Kind;

namespace {

// Where a step may not run (see diff.hpp): within kMargin before a lease's
// expiry, and until kRevokeLoop + kMargin after it.
constexpr Duration kMargin = Duration::ms(250);
constexpr Duration kRevokeLoop = Duration::ms(500);  // lease/lessor.go:621 (v3.4.23)
// A real step that runs later than this after its planned time voids the run.
constexpr Duration kSlip = Duration::ms(100);
// The time a command takes, in the plan: a write waits for etcd's WAL to be
// synced (10-20 ms on this machine), and the next step is planned after it.
constexpr Duration kTick = Duration::ms(40);
// Both sides' election timeout: etcd's default, 1 s; the shortest lease is then 2 s.
constexpr Duration kElection = Duration::s(1);
constexpr const char* kPrefix = "/lock/";
constexpr std::array<const char*, 3> kKeys = {"/lock/a", "/lock/b", "/lock/c"};
// The id a lease never granted goes by, on both sides (neither has it).
constexpr std::int64_t kUnknownLease = 1;
constexpr int kRuns = 3;  // a sequence voided this often is not compared

struct LeaseClock {
  Duration ttl;
  Duration expires;  // from the sequence's start
};

// The leases a sequence has granted, as time passes: what schedule() and the generator agree on.
struct Timeline {
  std::vector<LeaseClock> leases;
  Duration now = Duration::zero();
  Duration barrier = Duration::zero();  // after a keepalive awaiting its revoke: nothing before this

  static Duration granted(std::int64_t ttl_s) { return max(Duration::s(ttl_s), EtcdServer::min_lease_ttl(kElection)); }
  Duration window_end(const LeaseClock& l) const { return l.expires + kRevokeLoop + kMargin; }
  // Whether `s` may run at `now`; a keepalive awaiting its revoke moves the barrier.
  bool admits(const Step& s) {
    if (now < barrier) return false;
    for (std::size_t i = 0; i < leases.size(); ++i) {
      const LeaseClock& l = leases[i];
      if (now < l.expires - kMargin || now > window_end(l)) continue;
      const bool awaiting_revoke = s.kind == Kind::KeepAlive && s.lease == static_cast<int>(i) && now >= l.expires + kMargin;
      if (!awaiting_revoke) return false;
      barrier = max(barrier, window_end(l));
    }
    return true;
  }
  void apply(const Step& s) {
    if (s.kind == Kind::Grant) leases.push_back({granted(s.ttl_s), now + granted(s.ttl_s)});
    if (s.kind == Kind::KeepAlive && s.lease >= 0 && s.lease < static_cast<int>(leases.size())) {
      LeaseClock& l = leases[static_cast<std::size_t>(s.lease)];
      if (now < l.expires - kMargin) l.expires = now + l.ttl;  // renewed
    }
  }
  // Runs `s`: its planned time, or nullopt if it may not run then.
  std::optional<Duration> step(const Step& s) {
    now = now + s.wait;
    if (!admits(s)) return std::nullopt;
    apply(s);
    const Duration at = now;
    if (s.kind != Kind::Wait) now = now + kTick;
    return at;
  }
};

}  // namespace

std::optional<std::vector<Duration>> schedule(const Sequence& seq) {
  Timeline t;
  std::vector<Duration> at;
  for (const Step& s : seq) {
    const auto when = t.step(s);
    if (!when) return std::nullopt;
    at.push_back(*when);
  }
  return at;
}

// --- Generating -------------------------------------------------------------

namespace {

struct Gen {
  Rng rng;
  Sequence seq;
  Timeline time;

  int leases() const { return static_cast<int>(time.leases.size()); }
  std::string key() { return kKeys[rng.below(kKeys.size())]; }
  int some_lease() {
    if (leases() == 0 || rng.chance(0.06)) return leases();  // one never granted
    return static_cast<int>(rng.below(static_cast<std::uint64_t>(leases())));
  }
  Duration wait() {
    if (rng.chance(0.5)) return Duration::ms(rng.between(100, 600));
    return Duration::ms(rng.between(600, 3500));
  }
  Step command();
  // Appends `s`, with a wait before it when it may not run now: the
  // shortest that takes it past every window it falls in.
  void append(Step s);
  // A keepalive of a lease that is about to expire, timed to find it
  // expired and awaiting its revoke.
  bool keepalive_awaiting_revoke();
};

Step Gen::command() {
  Step s;
  const std::uint64_t what = rng.below(100);
  if (what < 14 && leases() < 4) {
    s.kind = Kind::Grant;
    const std::uint64_t t = rng.below(10);
    s.ttl_s = t < 4 ? 1 : t < 6 ? 2 : rng.between(3, 5);  // 1 s: raised to the shortest, 2 s
  } else if (what < 32) {
    s.kind = Kind::KeepAlive;
    s.lease = some_lease();
  } else if (what < 54) {
    s.kind = Kind::Put;
    s.key = key();
    s.lease = some_lease();
  } else if (what < 68) {
    s.kind = Kind::Range;
    s.key = rng.chance(0.8) ? std::string(kPrefix) : key();
  } else if (what < 78) {
    s.kind = Kind::Watch;
    s.pick = static_cast<int>(rng.below(3));
  } else if (what < 90) {
    s.kind = Kind::Delete;
    s.key = key();
  } else {
    s.kind = Kind::Wait;
    s.wait = wait();
  }
  return s;
}

void Gen::append(Step s) {
  Step w;  // a wait before it, if it may not run now
  w.kind = Kind::Wait;
  for (int attempt = 0; attempt < 8; ++attempt) {
    Timeline t = time;
    if ((w.wait.is_zero() || t.step(w)) && t.step(s)) {
      if (!w.wait.is_zero()) seq.push_back(w);
      seq.push_back(s);
      time = t;
      return;
    }
    // Past the barrier, or the earliest window that ends after the time tried.
    const Duration tried = time.now + w.wait;
    std::optional<Duration> past;
    if (time.barrier > tried) past = time.barrier;
    for (const LeaseClock& l : time.leases)
      if (const Duration end = time.window_end(l); !past && end >= tried) past = end;
      else if (end >= tried && end < *past) past = end;
    if (!past) return;  // nowhere it could run: left out
    w.wait = *past - time.now + Duration::ms(rng.between(20, 120));
  }
}

bool Gen::keepalive_awaiting_revoke() {
  for (std::size_t i = 0; i < time.leases.size(); ++i) {
    const LeaseClock& l = time.leases[i];
    const Duration at = l.expires + kMargin + Duration::ms(rng.between(0, 250));
    if (at <= time.now) continue;
    Step k;  // a pause, then the keepalive: no look at the watches within the window
    k.kind = Kind::KeepAlive;
    k.lease = static_cast<int>(i);
    k.wait = at - time.now;
    Timeline t = time;
    if (!t.step(k)) continue;
    time = t;
    seq.push_back(k);
    return true;
  }
  return false;
}

}  // namespace

Sequence generate(std::uint64_t seed, std::uint64_t index) {
  Gen g{Rng(seed).fork("diff-etcd " + std::to_string(index)), {}, {}};
  const auto n = static_cast<int>(g.rng.between(4, 14));
  for (int i = 0; i < n; ++i) {
    if (g.rng.chance(0.08) && g.keepalive_awaiting_revoke()) continue;
    g.append(g.command());
  }
  Step settle;  // a last look at the watches
  settle.kind = Kind::Wait;
  settle.wait = Duration::ms(300);
  g.append(settle);
  return g.seq;
}

// --- Both sides -------------------------------------------------------------

namespace {

// The request a command step sends: its lease by the side's own ids, a
// watch from the revision the last range was answered at.
coord::Request request_of(const Step& s, const std::vector<std::int64_t>& leases, std::int64_t range_revision,
                          const std::string& watched) {
  const auto lease = [&](int n) {
    return n >= 0 && n < static_cast<int>(leases.size()) ? leases[static_cast<std::size_t>(n)] : kUnknownLease;
  };
  coord::Request r;
  switch (s.kind) {
    case Kind::Grant:
      r = coord_request(coord::Op::LeaseGrant);
      r.ttl = Duration::s(s.ttl_s);
      break;
    case Kind::KeepAlive: r = coord_request(coord::Op::KeepAlive, "", lease(s.lease)); break;
    case Kind::Put:
      r = coord_request(coord::Op::PutIfAbsent, s.key, lease(s.lease));
      r.data = kPrefix;
      break;
    case Kind::Range: r = coord_request(coord::Op::Range, s.key); break;
    case Kind::Watch: r = coord_request(coord::Op::WatchDelete, watched, range_revision); break;
    case Kind::Delete: r = coord_request(coord::Op::DeleteKey, s.key); break;
    case Kind::Wait: break;
  }
  return r;
}

Outcome outcome_of(const Step& s, const coord::Reply& r, std::int64_t revision) {
  Outcome o;
  o.ok = r.ok;
  o.error = r.error;
  if (!r.ok) return o;
  switch (s.kind) {
    case Kind::Grant:
    case Kind::KeepAlive: o.ttl = r.ttl; break;  // a keepalive's header is filled before it renews
    case Kind::Put:
      o.id = r.id;
      o.nodes = r.nodes;
      o.revision = revision;
      break;
    case Kind::Range:
      o.nodes = r.nodes;
      o.revision = revision;
      break;
    case Kind::Delete:
      o.id = r.id;
      o.revision = revision;
      break;
    case Kind::Watch: o.revision = revision; break;
    case Kind::Wait: break;
  }
  return o;
}

// The key a watch step watches: one the last range found, by its pick.
std::optional<std::string> watched(const Step& s, const std::vector<coord::Node>& last_range) {
  if (last_range.empty()) return std::nullopt;
  return last_range[static_cast<std::size_t>(s.pick) % last_range.size()].path;
}

struct Probe final : Process {
  Probe(World& w) : Process(w, "client", ProcessRole::Client, {}) {}
  void on_message(Message& m) override {
    if (const auto* n = std::get_if<coord::Notify>(&m.body))
      for (auto& [path, fired] : watches)
        if (path == n->path) fired = true;
  }
  std::vector<std::pair<std::string, bool>> watches;  // each watch's key, and whether it fired
};

std::vector<int> fired_of(const std::vector<std::pair<std::string, bool>>& watches) {
  std::vector<int> out;
  for (std::size_t i = 0; i < watches.size(); ++i)
    if (watches[i].second) out.push_back(static_cast<int>(i));
  return out;
}

Task<void> play(Probe& self, EtcdServer& etcd, const Sequence& seq, const std::vector<Duration>& at, Outcomes& out) {
  SimClientEnv env(self);
  std::vector<std::int64_t> leases;
  std::vector<coord::Node> last_range;
  std::int64_t range_revision = 0;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const Step& s = seq[i];
    const Instant when = Instant::zero() + at[i];
    if (self.mono_now() < when) co_await self.sleep(when - self.mono_now());
    if (s.kind == Kind::Wait) {
      Outcome o;
      o.fired = fired_of(self.watches);
      out.push_back(std::move(o));
      continue;
    }
    std::string key;
    if (s.kind == Kind::Watch) {
      const auto w = watched(s, last_range);
      if (!w) {
        out.push_back({.skipped = true});
        continue;
      }
      key = *w;
      self.watches.emplace_back(key, false);
    }
    const auto reply = co_await env.call_coord(etcd.id(), request_of(s, leases, range_revision, key), Duration::zero());
    Outcome o = outcome_of(s, *reply, etcd.revision());
    if (s.kind == Kind::Grant && reply->ok) leases.push_back(reply->id);
    if (s.kind == Kind::Range && reply->ok) {
      last_range = reply->nodes;
      range_revision = etcd.revision();
    }
    out.push_back(std::move(o));
  }
}

}  // namespace

Outcomes run_model(const Sequence& seq, std::int64_t revision) {
  const auto at = schedule(seq);
  if (!at) throw Error("a sequence that cannot be scheduled");
  World w(1);
  w.network().configure({DurationRange::fixed(Duration::zero()), 0.0, true});
  auto& etcd = w.add<EtcdServer>("etcd", ClockSpec{}, revision + 1, kElection);
  auto& probe = w.add<Probe>();
  Outcomes out;
  probe.spawn(play(probe, etcd, seq, *at, out));
  w.run_until(Instant::zero() + (at->empty() ? Duration::zero() : at->back()) + Duration::s(1));
  return out;
}

// --- The real server --------------------------------------------------------

namespace asio = boost::asio;

struct RealEtcd::Impl {
  Supervisor sup;
  std::uint16_t port = 0;
  asio::io_context io;
  std::shared_ptr<HttpConnection> conn;
  std::vector<std::int64_t> granted;  // every lease granted since the last reset
  std::vector<std::shared_ptr<HttpConnection>> streams;

  Impl() { port = sup.start_etcd("etcd", {.election_timeout = kElection}); }
  ~Impl() {
    if (conn) conn->close();
    for (auto& s : streams) s->close();
  }
  Endpoint at_() const { return {"127.0.0.1", port}; }

  // Runs the context (the watches' streams) until real time `t`.
  void turn_until(RealClock::time_point t) {
    asio::steady_timer timer(io, t);
    bool due = false;
    timer.async_wait([&](const boost::system::error_code&) { due = true; });
    while (!due) {
      io.restart();
      io.run_one();
    }
  }
  HttpResponse exchange(const HttpCall& call) {
    if (!conn || !conn->idle()) conn = HttpConnection::open(io, at_());
    std::optional<HttpResponse> res;
    bool done = false;
    conn->post(call, [&](std::optional<HttpResponse> r) {
      res = std::move(r);
      done = true;
    });
    const Deadline deadline(Duration::s(10));
    while (!done && !deadline.passed()) {
      io.restart();
      io.run_for(std::chrono::milliseconds(10));
    }
    if (!done || !res) {
      const std::string why = done ? conn->error() : "no answer in 10 s";
      conn->close();
      throw Error("etcd did not answer " + call.target + " " + call.body + " (" + why + ")");
    }
    return *res;
  }
  Answer ask(const coord::Request& r) {
    const HttpResponse res = exchange(call_of(r));
    return answer_of(r, res.status, res.body);
  }
  std::int64_t reset();
  void play(const Sequence& seq, const std::vector<Duration>& at, Run& run);
  // The last lines of etcd's log, for a run etcd did not answer.
  std::string log_tail() const {
    std::ifstream in(sup.nodes().front().dir / "etcd.log");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) {
      lines.push_back(std::move(l));
      if (lines.size() > 5) lines.erase(lines.begin());
    }
    std::string out = "; etcd's log ends:";
    for (const std::string& l : lines) out += "\n      " + l;
    return out;
  }
};

// Revokes every lease the last sequence granted, deletes the lock prefix,
// closes its watches; the store's revision then.
std::int64_t RealEtcd::Impl::reset() {
  for (auto& s : streams) s->close();
  streams.clear();
  for (std::int64_t id : granted) exchange({"/v3/lease/revoke", nlohmann::json{{"ID", std::to_string(id)}}.dump()});
  granted.clear();
  exchange({"/v3/kv/deleterange",
            nlohmann::json{{"key", base64(kPrefix)}, {"range_end", base64(prefix_end(kPrefix))}}.dump()});
  return ask(coord_request(coord::Op::Range, kPrefix)).revision;
}

RealEtcd::RealEtcd() : impl_(std::make_unique<Impl>()) {}
RealEtcd::~RealEtcd() = default;
std::uint16_t RealEtcd::port() const { return impl_->port; }

void RealEtcd::Impl::play(const Sequence& seq, const std::vector<Duration>& at, Run& run) {
  std::vector<std::int64_t> leases;
  std::vector<coord::Node> last_range;
  std::int64_t range_revision = 0;
  auto fired = std::make_shared<std::vector<bool>>();
  const RealClock::time_point start = RealClock::now();
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const Step& s = seq[i];
    const RealClock::time_point when = start + real(at[i]);
    turn_until(when);
    if (!run.voided && RealClock::now() > when + real(kSlip)) {
      run.voided = true;
      run.why = "step " + std::to_string(i) + " (" + describe(s) + ") ran " +
                format_duration(Duration::ns(std::chrono::duration_cast<std::chrono::nanoseconds>(RealClock::now() - when).count())) +
                " after its planned time";
    }
    if (s.kind == Kind::Wait) {
      Outcome o;
      for (std::size_t w = 0; w < fired->size(); ++w)
        if ((*fired)[w]) o.fired.push_back(static_cast<int>(w));
      run.outcomes.push_back(std::move(o));
      continue;
    }
    if (s.kind == Kind::Watch) {
      const auto key = watched(s, last_range);
      if (!key) {
        run.outcomes.push_back({.skipped = true});
        continue;
      }
      const coord::Request req = request_of(s, leases, range_revision, *key);
      const std::size_t index = fired->size();
      fired->push_back(false);
      auto stream = HttpConnection::open(io, at_());
      auto created = std::make_shared<std::optional<std::string>>();
      auto ended = std::make_shared<bool>(false);
      stream->stream(call_of(req),
                     [created, fired, index, key = *key](std::string_view line) {
                       if (!*created) {
                         *created = std::string(line);
                         return;
                       }
                       try {
                         for (const WatchEvent& ev : watch_message_of(line).events)
                           if (ev.deleted && ev.key == key) (*fired)[index] = true;
                       } catch (const Error&) {
                       }
                     },
                     [ended] { *ended = true; });
      streams.push_back(stream);
      const Deadline deadline(Duration::s(10));
      while (!*created && !*ended && !deadline.passed()) {
        io.restart();
        io.run_for(std::chrono::milliseconds(5));
      }
      if (!*created) throw Error("diff-etcd: etcd did not create a watch of " + *key);
      const Answer a = answer_of(req, 200, **created);
      run.outcomes.push_back(outcome_of(s, a.reply, a.revision));
      continue;
    }
    const Answer a = ask(request_of(s, leases, range_revision, {}));
    run.outcomes.push_back(outcome_of(s, a.reply, a.revision));
    if (s.kind == Kind::Grant && a.reply.ok) {
      leases.push_back(a.reply.id);
      granted.push_back(a.reply.id);
    }
    if (s.kind == Kind::Range && a.reply.ok) {
      last_range = a.reply.nodes;
      range_revision = a.revision;
    }
  }
}

RealEtcd::Run RealEtcd::run(const Sequence& seq) {
  Impl& m = *impl_;
  const auto at = schedule(seq);
  if (!at) throw Error("a sequence that cannot be scheduled");
  Run run;
  try {
    run.revision = m.reset();
    m.play(seq, *at, run);
  } catch (const Error& e) {
    // etcd did not answer: this run says nothing; the next one starts afresh.
    run.voided = true;
    run.why = e.what() + m.log_tail();
    if (m.conn) m.conn->close();
    m.conn.reset();
  }
  return run;
}

// --- Comparing, shrinking, telling ------------------------------------------

bool same(const Outcome& a, const Outcome& b) {
  const auto node_same = [](const coord::Node& x, const coord::Node& y) { return x.path == y.path && x.revision == y.revision; };
  return a.skipped == b.skipped && a.ok == b.ok && a.error == b.error && a.id == b.id && a.ttl == b.ttl &&
         a.revision == b.revision && a.fired == b.fired &&
         std::equal(a.nodes.begin(), a.nodes.end(), b.nodes.begin(), b.nodes.end(), node_same);
}

std::optional<std::size_t> first_difference(const Outcomes& model, const Outcomes& real) {
  const std::size_t n = std::min(model.size(), real.size());
  for (std::size_t i = 0; i < n; ++i)
    if (!same(model[i], real[i])) return i;
  if (model.size() != real.size()) return n;
  return std::nullopt;
}

std::string describe(const Step& s) {
  switch (s.kind) {
    case Kind::Grant: return "grant " + std::to_string(s.ttl_s) + "s";
    case Kind::KeepAlive:
      return (s.wait.is_zero() ? "" : "after " + format_duration(s.wait) + ", ") + "keepalive lease " + std::to_string(s.lease);
    case Kind::Put: return "txn put-if-absent " + s.key + " lease " + std::to_string(s.lease);
    case Kind::Range: return "range " + s.key;
    case Kind::Watch: return "watch-delete key #" + std::to_string(s.pick) + " of the last range, from its revision";
    case Kind::Delete: return "delete " + s.key;
    case Kind::Wait: return "wait " + format_duration(s.wait);
  }
  return "?";
}

std::string describe(const Outcome& o) {
  if (o.skipped) return "(no key to watch)";
  std::string out;
  if (!o.ok) return "error " + o.error;
  if (!o.fired.empty() || (o.ttl.is_zero() && o.nodes.empty() && o.id == 0 && !o.revision)) {
    out = "fired:";
    for (int w : o.fired) out += " #" + std::to_string(w);
    return o.fired.empty() ? "fired: none" : out;
  }
  out = "ok";
  if (!o.ttl.is_zero()) out += " ttl " + format_duration(o.ttl);
  if (o.id) out += " id " + std::to_string(o.id);
  for (const coord::Node& n : o.nodes) out += " " + n.path + "@" + std::to_string(n.revision);
  if (o.revision) out += " rev " + std::to_string(*o.revision);
  return out;
}

namespace {

// Delta debugging over the steps, as diff-redis shrinks (live/ddmin.hpp):
// a shortest sequence, by removing steps, for which `fails` still holds; a
// candidate whose leases no longer schedule (schedule()) is not one.
Sequence shrink(Sequence seq, const std::function<bool(const Sequence&)>& fails) {
  return ddmin<Step>(std::move(seq), [&](const Sequence& s) { return schedule(s).has_value() && fails(s); });
}

// The gateway call a command step makes, for the transcript: a lease as
// <L0> (the ID the first grant answered), a watch's key and revision as
// <KEY> and <REV> (what the last range answered).
std::string curl_of(const Step& s, std::uint16_t port) {
  constexpr std::int64_t kMark = 4242424242;
  coord::Request r = request_of(s, {}, s.kind == Kind::Watch ? kMark : 0, "\x01");
  if (s.kind == Kind::KeepAlive || s.kind == Kind::Put) r.id = kMark;
  const HttpCall call = call_of(r);
  std::string body = call.body;
  const auto put = [&](const std::string& what, const std::string& with) {
    if (const auto p = body.find(what); p != std::string::npos) body.replace(p, what.size(), with);
  };
  put(std::to_string(kMark), s.kind == Kind::Watch ? "<REV>" : "<L" + std::to_string(s.lease) + ">");
  put(base64("\x01"), "<KEY in base64>");
  return std::string("curl -s") + (call.stream ? " -N" : "") + " -X POST http://127.0.0.1:" + std::to_string(port) +
         call.target + " -d '" + body + "'";
}

}  // namespace

void print_case(std::ostream& out, const Sequence& seq, const Outcomes& model, const Outcomes& real, std::uint16_t port) {
  const std::optional<std::size_t> diff = first_difference(model, real);
  const auto at = schedule(seq);
  out << "  steps (model | etcd):\n";
  for (std::size_t i = 0; i < seq.size(); ++i) {
    out << "    " << (at ? format_duration((*at)[i]) : std::string("?")) << "  " << describe(seq[i]) << "  ->  "
        << (i < model.size() ? describe(model[i]) : "-") << " | " << (i < real.size() ? describe(real[i]) : "-")
        << (diff && *diff == i ? "   <-- differ" : "") << "\n";
  }
  out << "  curl transcript (L0, L1, ...: the IDs the grants answer; KEY: the key the last range found):\n";
  for (const Step& s : seq) {
    if (!s.wait.is_zero()) out << "    sleep " << s.wait.count_ns() / 1e9 << "\n";
    if (s.kind != Kind::Wait) out << "    " << curl_of(s, port) << "\n";
  }
}

Summary run(const RunOptions& o, std::ostream& out) {
  RealEtcd real;
  Summary sum;
  // The real side, made again while a run is voided; nullopt if each was.
  std::string why;
  const auto real_run = [&](const Sequence& seq) -> std::optional<RealEtcd::Run> {
    for (int i = 0; i < kRuns; ++i) {
      RealEtcd::Run r = real.run(seq);
      if (!r.voided) return r;
      ++sum.reruns;
      why = r.why;
    }
    return std::nullopt;
  };
  for (std::uint64_t i = 0; i < o.sequences; ++i) {
    const Sequence seq = generate(o.seed, i);
    const auto r = real_run(seq);
    ++sum.sequences;
    if (!r) {
      ++sum.void_sequences;
      out << "VOID: seed " << o.seed << ", sequence " << i << ": each of " << kRuns
          << " runs was voided; the last because " << why << "\n";
      continue;
    }
    const Outcomes model = run_model(seq, r->revision);
    sum.steps += model.size();
    if (!first_difference(model, r->outcomes)) continue;
    ++sum.mismatches;
    if (sum.mismatches > o.max_reported) {
      out << "MISMATCH: seed " << o.seed << ", sequence " << i << " (not shrunk: over the limit)\n";
      continue;
    }
    const auto fails = [&](const Sequence& s) {
      const auto again = real_run(s);
      return again && first_difference(run_model(s, again->revision), again->outcomes).has_value();
    };
    const Sequence small = shrink(seq, fails);
    const auto shown = real_run(small);
    out << "MISMATCH: seed " << o.seed << ", sequence " << i << ": " << seq.size() << " steps, shrunk to " << small.size()
        << "\n  reproduce: locksim diff-etcd --seed " << o.seed << " --sequences " << i + 1 << "\n";
    if (shown) print_case(out, small, run_model(small, shown->revision), shown->outcomes, real.port());
  }
  return sum;
}

}  // namespace locksim::live::etcd::diff
