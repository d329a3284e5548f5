#include <utility>  // before any Asio header (Boost 1.74 with g++ 12)

#include "live/zookeeper/diff.hpp"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <ostream>
#include <thread>

#include "live/ddmin.hpp"
#include "live/servers.hpp"
#include "live/zookeeper/blocking_session.hpp"
#include "live/zookeeper/coord_session.hpp"
#include "live/zookeeper/live_service.hpp"
#include "sim/rng.hpp"
#include "sim/world.hpp"
#include "sim/servers/zookeeper/server.hpp"

namespace locksim::live::zkdiff {

using coord::Op;
using namespace zk;

namespace {

std::string client_name(int slot) { return "client" + std::to_string(slot); }

// --- Generating -------------------------------------------------------------

// An op leaves in [tick/2, tick/2 + kMargin) of a tick and is heard within
// some milliseconds; the deadline it sets is that instant plus the session's
// negotiated timeout. Timeouts whose remainder in the tick would put that
// deadline near a boundary are not drawn: such runs would be ambiguous
// (ambiguous()) and run again.
bool clear_of_boundaries(Duration asked) {
  const Duration negotiated = std::clamp(asked, kTick * 2, kTick * 20);
  const Duration rest = Duration::ns(negotiated.count_ns() % kTick.count_ns());
  const Duration heard_by = kTick / 2 + kMargin + Duration::ms(15);
  return rest >= kTick / 2 + Duration::ms(5) || rest + heard_by < kTick;
}

struct Gen {
  Rng rng;
  std::array<bool, kSlots> connected{};
  int created = 0;  // creates drawn so far (some may fail: a target may name one that never was)

  Duration timeout() {
    for (;;) {
      Duration t;
      switch (rng.below(5)) {
        case 0: t = Duration::ms(rng.between(1, 199)); break;        // under the minimum, 2 ticks
        case 1:
        case 2: t = Duration::ms(rng.between(200, 700)); break;      // short: expires within the sequence
        case 3: t = Duration::ms(rng.between(700, 2000)); break;
        default: t = Duration::ms(rng.between(2001, 6000)); break;   // over the maximum, 20 ticks
      }
      if (clear_of_boundaries(t)) return t;
    }
  }

  Step next() {
    Step s;
    s.slot = static_cast<int>(rng.below(kSlots));
    const std::uint64_t what = rng.below(100);
    if (what < 18) {
      s.kind = Step::Kind::Wait;
      s.ticks = rng.chance(0.8) ? static_cast<int>(rng.between(0, 6)) : static_cast<int>(rng.between(7, 25));
      return s;
    }
    if (!connected[s.slot] ? rng.chance(0.85) : what < 24) {
      s.op = Op::Connect;
      s.ttl = timeout();
      connected[s.slot] = true;
      return s;
    }
    auto target = [&] { return created > 0 && rng.chance(0.85) ? static_cast<int>(rng.below(created)) : -1; };
    if (what < 46) {
      s.op = Op::Create;
      ++created;
    } else if (what < 60) {
      s.op = Op::GetChildren;
      s.watch = rng.chance(0.5);
    } else if (what < 75) {
      s.op = Op::Exists;
      s.watch = rng.chance(0.6);
      s.target = target();
    } else if (what < 87) {
      s.op = Op::Delete;
      s.target = target();
    } else if (what < 96) {
      s.op = Op::Ping;
    } else {
      s.op = Op::CloseSession;
    }
    return s;
  }
};

// --- The model ----------------------------------------------------------------

// A client of the model's server: each op a call it sends now; the
// notifications it gets, kept.
struct Probe final : Process, ReplySink {
  Probe(World& w, std::string name) : Process(w, std::move(name), ProcessRole::Client, {}) {}
  std::optional<std::optional<coord::Reply>> answer;
  std::vector<coord::Notify> notified;
  std::vector<Duration> notified_at;
  void on_reply(std::uint32_t, Payload* p) override {
    std::optional<coord::Reply> r;
    if (p)
      if (auto* c = std::get_if<coord::Reply>(p)) r = std::move(*c);
    answer.emplace(std::move(r));
  }

 protected:
  void on_message(Message& m) override {
    if (auto* n = std::get_if<coord::Notify>(&m.body)) {
      notified.push_back(*n);
      notified_at.push_back(world().now() - Instant::zero());
    }
  }
};

// The real side's clock: sleeps and waits turn the context (so that packets are read meanwhile).
void turn_until_time(boost::asio::io_context& io, RealClock::time_point t) {
  while (RealClock::now() < t) {
    io.restart();
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(t - RealClock::now());
    io.run_one_for(std::clamp<std::chrono::microseconds>(left, std::chrono::microseconds(0), std::chrono::milliseconds(5)));
  }
}

}  // namespace

Sequence generate(std::uint64_t seed, std::uint64_t index) {
  Gen g{Rng(seed).fork("diff-zookeeper " + std::to_string(index))};
  const auto n = static_cast<std::size_t>(g.rng.between(5, 25));
  Sequence seq;
  // Client 0 opens a session first: a sequence of nothing but refusals tells little.
  Step first;
  first.op = Op::Connect;
  first.ttl = g.timeout();
  g.connected[0] = true;
  seq.push_back(first);
  while (seq.size() < n) seq.push_back(g.next());
  return seq;
}

coord::Request request_of(const Step& s, const std::string& parent, const std::vector<std::string>& created,
                          std::int64_t session) {
  coord::Request r;
  r.op = s.op;
  // A sequence's connect is a new handle (a new session: Curator after LOST),
  // never the recipe's reconnect naming its session, which the server model
  // now tells apart (a Connect with an id reattaches): the live transport's
  // reattach sends no SetWatches, where ClientCnxn.primeConnection does.
  r.id = s.op == Op::Connect ? 0 : session;
  r.watch = s.watch;
  switch (s.op) {
    case Op::Connect: r.ttl = s.ttl; break;
    case Op::Create:
      r.path = parent;
      r.data = "n" + std::to_string(s.slot) + "-";
      break;
    case Op::GetChildren: r.path = parent; break;
    case Op::Exists:
    case Op::Delete:
      r.path = s.target >= 0 && static_cast<std::size_t>(s.target) < created.size()
                   ? created[static_cast<std::size_t>(s.target)]
                   : parent + "/never-" + std::to_string(s.target);
      break;
    default: break;
  }
  return r;
}

Outcome run_model(const Sequence& seq, const std::string& parent, std::int64_t first_zxid, const Outcome& real) {
  World w(1);
  w.network().configure({DurationRange::fixed(Duration::zero()), 0.0, true});
  auto& zk = w.add<ZooKeeperServer>("zk", ClockSpec{}, kTick, first_zxid);
  std::array<Probe*, kSlots> probes{};
  for (int i = 0; i < kSlots; ++i) probes[static_cast<std::size_t>(i)] = &w.add<Probe>(client_name(i));
  std::array<std::int64_t, kSlots> session{};
  std::vector<std::string> created;
  Outcome out;
  for (const Step& s : seq) {
    if (s.kind == Step::Kind::Wait) continue;
    const Instant t = Instant::zero() + real.sent.at(out.replies.size());
    w.run_until(t);
    Probe& p = *probes.at(static_cast<std::size_t>(s.slot));
    p.answer.reset();
    p.start_call(zk.id(), Payload(request_of(s, parent, created, session[s.slot])), Duration::zero(), p, 0);
    w.run_until(t);
    std::optional<coord::Reply> r = p.answer ? *p.answer : std::nullopt;
    if (r && r->ok && s.op == Op::Connect) session[s.slot] = r->id;
    if (r && r->ok && s.op == Op::Create) created.push_back(r->path);
    out.replies.push_back(std::move(r));
  }
  w.run_until(Instant::zero() + real.end);
  for (std::size_t i = 0; i < kSlots; ++i) {
    out.notified[i] = probes[i]->notified;
    out.notified_at[i] = probes[i]->notified_at;
  }
  return out;
}

namespace {

// ExpiryQueue.roundToNextInterval, in the server's whole milliseconds.
std::int64_t boundary_after(Duration t) {
  const std::int64_t ms = t.count_ns() / 1'000'000, tick = kTick.whole_ms();
  return (ms / tick + 1) * tick;
}

}  // namespace

namespace {

// A session as the ops leave it, replayed at the real run's times.
struct Life {
  int slot = 0;
  Duration timeout;
  std::int64_t expires_ms = 0;        // a boundary: the last deadline it was given
  std::optional<Duration> closed;     // by its client's closeSession
  std::optional<Duration> replaced;   // when its client opened another (the connection it lived in closed)
  Duration replaced_by;               // when that other one had been answered: the old connection gone for sure
};

// The sessions of a run, replayed: an op on a live session sets its deadline
// to the instant it was heard plus its timeout, rounded up to the next tick.
// nullopt: some op's deadline rounds to one boundary or another depending on
// when in its window the server heard it. `windows`: each op's.
std::optional<std::vector<Life>> replay(const Sequence& seq, const Outcome& model, const Outcome& real,
                                        std::vector<std::pair<Duration, Duration>>& windows) {
  std::vector<Life> lives;
  std::array<int, kSlots> current;
  current.fill(-1);
  const auto alive = [](const Life& x, Duration t) { return !x.closed && x.expires_ms * 1'000'000 > t.count_ns(); };
  std::size_t i = 0;
  for (const Step& s : seq) {
    if (s.kind != Step::Kind::Op) continue;
    const Duration from = real.sent.at(i) - Duration::ms(1), to = real.answered.at(i) + Duration::ms(1);
    windows.emplace_back(from, to);
    const auto& r = model.replies.at(i++);
    const auto deadline = [&](Duration timeout) -> std::optional<std::int64_t> {
      const std::int64_t a = boundary_after(from + timeout), b = boundary_after(to + timeout);
      if (a != b) return std::nullopt;
      return a;
    };
    if (s.op == Op::Connect) {
      if (current[s.slot] >= 0) {
        lives[static_cast<std::size_t>(current[s.slot])].replaced = from;
        lives[static_cast<std::size_t>(current[s.slot])].replaced_by = to;
      }
      current[s.slot] = -1;
      if (!r || !r->ok) continue;
      const auto d = deadline(r->ttl);
      if (!d) return std::nullopt;
      lives.push_back({s.slot, r->ttl, *d, std::nullopt, std::nullopt, Duration::zero()});
      current[s.slot] = static_cast<int>(lives.size() - 1);
      continue;
    }
    if (current[s.slot] < 0) continue;
    Life& x = lives[static_cast<std::size_t>(current[s.slot])];
    if (!alive(x, from)) continue;
    const auto d = deadline(x.timeout);
    if (!d) return std::nullopt;
    x.expires_ms = *d;
    if (s.op == Op::CloseSession) x.closed = from;
  }
  return lives;
}

}  // namespace

// An op is clear when its window holds no expiry (an expiry could come before
// or after the op) and the deadline it sets rounds up to the same boundary
// from both ends of its window.
bool ambiguous(const Sequence& seq, const Outcome& model, const Outcome& real) {
  std::vector<std::pair<Duration, Duration>> windows;
  const auto lives = replay(seq, model, real, windows);
  if (!lives) return true;
  windows.emplace_back(real.end - Duration::ms(5), real.end + Duration::ms(5));
  for (const Life& x : *lives) {
    if (x.closed) continue;
    const Duration at = Duration::ms(x.expires_ms);
    for (const auto& [from, to] : windows)
      if (from <= at && at <= to) return true;
  }
  return false;
}

Outcome without_expiry_races(const Sequence& seq, const Outcome& model, const Outcome& real, Outcome o) {
  std::vector<std::pair<Duration, Duration>> windows;
  const auto lives = replay(seq, model, real, windows);
  if (!lives) return o;
  for (std::size_t c = 0; c < kSlots; ++c) {
    if (o.notified_at[c].size() != o.notified[c].size()) continue;
    std::vector<coord::Notify> kept;
    std::vector<Duration> kept_at;
    for (std::size_t k = 0; k < o.notified[c].size(); ++k) {
      const Duration t = o.notified_at[c][k];
      const bool race = std::any_of(lives->begin(), lives->end(), [&](const Life& x) {
        const Duration expired = Duration::ms(x.expires_ms);
        return static_cast<std::size_t>(x.slot) == c && !x.closed && expired <= t && (!x.replaced || t < *x.replaced);
      });
      if (race) continue;
      kept.push_back(o.notified[c][k]);
      kept_at.push_back(t);
    }
    o.notified[c] = std::move(kept);
    o.notified_at[c] = std::move(kept_at);
  }
  return o;
}

Outcome without_replacement_races(const Sequence& seq, const Outcome& model, const Outcome& real, Outcome o) {
  std::vector<std::pair<Duration, Duration>> windows;
  const auto lives = replay(seq, model, real, windows);
  if (!lives) return o;
  for (std::size_t c = 0; c < kSlots; ++c) {
    if (o.notified_at[c].size() != o.notified[c].size() || model.notified_at[c].size() != model.notified[c].size())
      continue;
    // What the model delivered to slot c within the race before a replacement, and when that was.
    // Matched on either side up to the new session's answer: the real one may
    // be read while the connect is on its way.
    std::vector<std::pair<std::string, Duration>> racing;  // what + path, the new session's answer
    for (std::size_t k = 0; k < model.notified[c].size(); ++k) {
      const Duration t = model.notified_at[c][k];
      for (const Life& x : *lives)
        // Up to the instant the connect was sent (`replaced` is that less a
        // millisecond; seed 7, sequence 1364: a watch fired 0.8 ms before the
        // connect): after it the old connection is closed, and what the model
        // fires is the new session's (sequences 325, 375, 407 of the next run).
        if (static_cast<std::size_t>(x.slot) == c && x.replaced && t <= *x.replaced + Duration::ms(1) &&
            t + kReplaceRace > *x.replaced)
          racing.emplace_back(model.notified[c][k].what + " " + model.notified[c][k].path, x.replaced_by);
    }
    if (racing.empty()) continue;
    std::vector<coord::Notify> kept;
    std::vector<Duration> kept_at;
    for (std::size_t k = 0; k < o.notified[c].size(); ++k) {
      const std::string key = o.notified[c][k].what + " " + o.notified[c][k].path;
      const Duration t = o.notified_at[c][k];
      const auto it = std::find_if(racing.begin(), racing.end(), [&](const auto& r) { return r.first == key && t <= r.second; });
      if (it != racing.end()) {
        racing.erase(it);
        continue;
      }
      kept.push_back(o.notified[c][k]);
      kept_at.push_back(t);
    }
    o.notified[c] = std::move(kept);
    o.notified_at[c] = std::move(kept_at);
  }
  return o;
}

// --- The real server --------------------------------------------------------------

struct RealZooKeeper::Impl {
  Supervisor sup;
  boost::asio::io_context io;
  Endpoint server;
  std::uint64_t runs = 0;
  // Every session a run opened, to close before the next run: one left to
  // expire would take a zxid in the middle of the next.
  std::vector<std::pair<std::int64_t, std::string>> opened;

  explicit Impl(const std::filesystem::path& keep) : sup(SupervisorOptions{.keep = keep}) {
    ZooKeeperServerOptions o;
    o.tick_time = kTick;
    sup.start_zookeeper("zk", o);
    server = {"127.0.0.1", sup.port("zk")};
  }

  // A control session's handshake, tried up to three times: on a loaded
  // machine the server has closed a connection before answering its
  // handshake (once in 700 sequences at load 4-7 on two cores). That is the
  // harness's connection, not a reply under comparison, so it is opened
  // again; a fourth failure ends the diff as before.
  template <class... Args>
  BlockingSession control_session(Args&&... args) {
    for (int attempt = 1;; ++attempt) {
      try {
        return BlockingSession(io, server, std::forward<Args>(args)...);
      } catch (const Timeout&) {
        throw;
      } catch (const Error&) {
        if (attempt == 3) throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(100 * attempt));
      }
    }
  }

  // The last run's sessions closed, the run's parent made; the zxid after the set-up's last.
  std::int64_t prepare(const std::string& parent) {
    BlockingSession control = control_session(kTick * 20);
    for (const auto& [id, passwd] : opened) {
      BlockingSession again = control_session(kTick * 20, Duration::s(10), id, passwd, control.last_zxid());
      if (again.valid()) again.close_session();
    }
    opened.clear();
    const Response made = control.request(Request{OpCode::Create, parent});
    if (made.header.err != 0) throw Error("diff-zookeeper: cannot create " + parent + ": " + err_name(made.header.err));
    const Response closed = control.close_session();
    return closed.header.zxid + 1;
  }
};

RealZooKeeper::RealZooKeeper(const std::filesystem::path& keep) : impl_(std::make_unique<Impl>(keep)) {}
RealZooKeeper::~RealZooKeeper() {
  try {
    impl_->prepare("/end");  // closes what the last run left open
  } catch (const Error&) {
    // The server goes with the supervisor anyway.
  }
}

std::uint16_t RealZooKeeper::port() const { return impl_->server.port; }

Outcome RealZooKeeper::run(const Sequence& seq, std::string& parent, std::int64_t& first_zxid) {
  Impl& m = *impl_;
  parent = "/d" + std::to_string(++m.runs);
  first_zxid = m.prepare(parent);
  Outcome out;
  // The run's time 0: a tick boundary of the server's, a moment from now.
  const auto start = zk::tick_boundary_after(RealClock::now() + std::chrono::milliseconds(20), kTick);
  const auto since_start = [&] {
    return Duration::ns(std::chrono::duration_cast<std::chrono::nanoseconds>(RealClock::now() - start).count());
  };
  std::array<std::unique_ptr<CoordSession>, kSlots> slots;
  for (int i = 0; i < kSlots; ++i) {
    CoordSession::Options o;
    o.address = [&m](ProcId) { return m.server; };
    o.opened = [&m](std::int64_t id, const std::string& passwd) { m.opened.emplace_back(id, passwd); };
    auto& slot = slots[static_cast<std::size_t>(i)];
    slot = std::make_unique<CoordSession>(m.io, std::move(o));
    slot->on_notify = [&out, i, &since_start](ProcId, coord::Notify n) {
      out.notified[static_cast<std::size_t>(i)].push_back(std::move(n));
      out.notified_at[static_cast<std::size_t>(i)].push_back(since_start());
    };
  }
  std::array<std::int64_t, kSlots> session{};
  std::vector<std::string> created;
  // An op leaves in the first kMargin of the second half of a tick, at its
  // aim or, when those before it ran over, in the next such window: the model
  // takes the instant it left, whatever it is.
  const auto window_from = [&](RealClock::time_point t) {
    const std::int64_t tick = kTick.count_ns(), half = tick / 2;
    const std::int64_t phase = std::chrono::duration_cast<std::chrono::nanoseconds>(t - start).count() % tick;
    if (phase >= half && phase < half + kMargin.count_ns()) return t;
    return t + std::chrono::nanoseconds(phase < half ? half - phase : tick - phase + half);
  };
  auto aim = start + real(kTick / 2);
  for (const Step& s : seq) {
    if (s.kind == Step::Kind::Wait) {
      aim += real(kTick * s.ticks);
      continue;
    }
    turn_until_time(m.io, window_from(std::max(aim, RealClock::now())));
    auto answer = std::make_shared<std::optional<std::optional<coord::Reply>>>();
    out.sent.push_back(since_start());
    slots[static_cast<std::size_t>(s.slot)]->call(kNoProc, request_of(s, parent, created, session[s.slot]),
                                                  [answer](std::optional<coord::Reply> r) { answer->emplace(std::move(r)); });
    BlockingSession::turn_until(m.io, [&] { return answer->has_value(); }, Duration::s(5));
    out.answered.push_back(since_start());
    std::optional<coord::Reply> r = answer->has_value() ? **answer : std::nullopt;
    if (r && r->ok && s.op == Op::Connect) session[s.slot] = r->id;
    if (r && r->ok && s.op == Op::Create) created.push_back(r->path);
    out.replies.push_back(std::move(r));
  }
  // The notifications the last ops caused come within milliseconds.
  out.end = since_start() + kTick / 4;
  turn_until_time(m.io, start + real(out.end));
  return out;
}

// --- Comparing ---------------------------------------------------------------------

std::string canonical(const coord::Reply& r, Op op, const std::vector<std::int64_t>& sessions) {
  if (!r.ok) return r.error;
  switch (op) {
    case Op::Connect: {
      const auto it = std::find(sessions.begin(), sessions.end(), r.id);
      const std::string which = it == sessions.end() ? "?" : std::to_string(it - sessions.begin() + 1);
      return "session #" + which + ", timeout " + format_duration(r.ttl);
    }
    case Op::Create: return r.path + " czxid " + std::to_string(r.id);
    case Op::GetChildren: {
      std::string out = "[";
      for (std::size_t i = 0; i < r.nodes.size(); ++i)
        out += (i ? ", " : "") + r.nodes[i].path + " czxid " + std::to_string(r.nodes[i].revision);
      return out + "]";
    }
    default: return "ok";
  }
}

namespace {

// The session ids the outcome's Connects got, in order: their ordinals.
std::vector<std::int64_t> sessions_of(const Sequence& seq, const Outcome& o) {
  std::vector<std::int64_t> out;
  std::size_t i = 0;
  for (const Step& s : seq) {
    if (s.kind != Step::Kind::Op) continue;
    const auto& r = o.replies.at(i++);
    if (s.op == Op::Connect && r && r->ok) out.push_back(r->id);
  }
  return out;
}

std::string reply_text(const std::optional<coord::Reply>& r, Op op, const std::vector<std::int64_t>& sessions) {
  return r ? canonical(*r, op, sessions) : "(no answer)";
}

std::string notifications_text(const std::vector<coord::Notify>& ns) {
  std::string out = "[";
  for (std::size_t i = 0; i < ns.size(); ++i) out += (i ? ", " : "") + ns[i].what + " " + ns[i].path;
  return out + "]";
}

}  // namespace

std::optional<std::string> first_difference(const Sequence& seq, const Outcome& model, const Outcome& real) {
  const auto ms = sessions_of(seq, model), rs = sessions_of(seq, real);
  std::size_t i = 0;
  for (const Step& s : seq) {
    if (s.kind != Step::Kind::Op) continue;
    const std::string a = reply_text(model.replies.at(i), s.op, ms), b = reply_text(real.replies.at(i), s.op, rs);
    if (a != b) return "op " + std::to_string(i + 1) + " (" + describe(s) + "): " + a + " | " + b;
    ++i;
  }
  for (std::size_t c = 0; c < kSlots; ++c) {
    const std::string a = notifications_text(model.notified[c]), b = notifications_text(real.notified[c]);
    if (a != b) return client_name(static_cast<int>(c)) + "'s notifications: " + a + " | " + b;
  }
  return std::nullopt;
}

std::string describe(const Step& s) {
  if (s.kind == Step::Kind::Wait) return "wait " + std::to_string(s.ticks) + " ticks";
  std::string out = client_name(s.slot) + " ";
  const auto target = [&] { return s.target >= 0 ? "node #" + std::to_string(s.target + 1) : std::string("a node never created"); };
  switch (s.op) {
    case Op::Connect: return out + "connect, asking for " + format_duration(s.ttl);
    case Op::Create: return out + "create n" + std::to_string(s.slot) + "- EPHEMERAL_SEQUENTIAL";
    case Op::GetChildren: return out + "getChildren" + (s.watch ? " watch" : "");
    case Op::Exists: return out + "exists (getData) " + target() + (s.watch ? " watch" : "");
    case Op::Delete: return out + "delete " + target();
    case Op::Ping: return out + "ping";
    case Op::CloseSession: return out + "closeSession";
    default: return out + "?";
  }
}

void print_case(std::ostream& out, const Sequence& seq, const Outcome& model, const Outcome& real) {
  const auto ms = sessions_of(seq, model), rs = sessions_of(seq, real);
  out << "  steps (model reply | zookeeper reply), at the times the real run sent them (tick "
      << format_duration(kTick) << ", from a tick boundary):\n";
  std::size_t i = 0;
  for (const Step& s : seq) {
    if (s.kind == Step::Kind::Wait) {
      out << "    " << describe(s) << "\n";
      continue;
    }
    const std::string a = reply_text(model.replies.at(i), s.op, ms), b = reply_text(real.replies.at(i), s.op, rs);
    out << "    at " << format_duration(real.sent.at(i)) << ": " << describe(s) << "  ->  " << a << " | " << b
        << (a != b ? "   <-- differ" : "") << "\n";
    ++i;
  }
  for (std::size_t c = 0; c < kSlots; ++c)
    out << "    " << client_name(static_cast<int>(c)) << " was notified: " << notifications_text(model.notified[c])
        << " | " << notifications_text(real.notified[c]) << "\n";
}

// --- Running ------------------------------------------------------------------------

namespace {

// The model and the real run, the real one repeated while its timing is
// ambiguous (at most three times); nullopt if always.
std::optional<std::pair<Outcome, Outcome>> both(RealZooKeeper& real, const Sequence& seq, Summary& sum) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string parent;
    std::int64_t first_zxid = 0;
    Outcome r = real.run(seq, parent, first_zxid);
    Outcome m = run_model(seq, parent, first_zxid, r);
    if (ambiguous(seq, m, r)) {
      ++sum.rerun;
      continue;
    }
    Outcome model = without_replacement_races(seq, m, r, without_expiry_races(seq, m, r, m));
    Outcome actual = without_replacement_races(seq, m, r, without_expiry_races(seq, m, r, r));
    return std::pair{std::move(model), std::move(actual)};
  }
  return std::nullopt;
}

void report_mismatch(std::ostream& out, RealZooKeeper& real, const RunOptions& o, std::uint64_t index,
                     const Sequence& seq, const std::string& found, Summary& sum) {
  const auto fails = [&](const Sequence& s) {
    const auto outcomes = both(real, s, sum);
    return outcomes && first_difference(s, outcomes->first, outcomes->second).has_value();
  };
  const Sequence small = ddmin<Step>(seq, fails);
  out << "MISMATCH: seed " << o.seed << ", sequence " << index << ": " << seq.size() << " steps, shrunk to "
      << small.size() << "\n";
  out << "  reproduce: locksim diff-zookeeper --seed " << o.seed << " --from " << index << " --sequences 1\n";
  out << "  as found: " << found << "\n";
  if (const auto outcomes = both(real, small, sum)) {
    if (const auto d = first_difference(small, outcomes->first, outcomes->second)) out << "  first: " << *d << "\n";
    else out << "  the shrunk sequence agreed when run once more: the difference depends on the real run's timing\n";
    print_case(out, small, outcomes->first, outcomes->second);
  }
}

}  // namespace

Summary run(const RunOptions& o, std::ostream& out) {
  RealZooKeeper real(o.keep);
  Summary sum;
  for (std::uint64_t i = o.from; i < o.from + o.sequences; ++i) {
    const Sequence seq = generate(o.seed, i);
    const auto outcomes = both(real, seq, sum);
    if (!outcomes) {
      ++sum.skipped;
      out << "AMBIGUOUS: seed " << o.seed << ", sequence " << i
          << ": three runs had an op within a millisecond of a tick decision; not compared\n";
      continue;
    }
    ++sum.sequences;
    sum.ops += outcomes->first.replies.size();
    const auto found = first_difference(seq, outcomes->first, outcomes->second);
    if (!found) continue;
    ++sum.mismatches;
    if (sum.mismatches <= o.max_reported) report_mismatch(out, real, o, i, seq, *found, sum);
    else out << "MISMATCH: seed " << o.seed << ", sequence " << i << " (not shrunk: over the limit)\n";
  }
  return sum;
}

}  // namespace locksim::live::zkdiff
