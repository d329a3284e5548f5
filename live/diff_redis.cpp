#include "live/diff_redis.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <thread>

#include "live/blocking_client.hpp"
#include "live/ddmin.hpp"
#include "live/resp.hpp"
#include "live/servers.hpp"
#include "sim/servers/redis/node.hpp"
#include "sim/rng.hpp"

namespace locksim::live::diff {

using redis::Op;
using redis::Reply;
using redis::Request;

namespace {

constexpr std::array<const char*, 2> kNodeNames = {"r1", "r2"};
// How long the model's world runs, wall clocks held, for replication to catch
// up before a step in replication mode (the real side asks the master to WAIT).
constexpr Duration kCatchUp = Duration::ms(50);
// The model's active expiry has no timer of its own: a cycle period no sequence reaches.
constexpr Duration kNoActiveExpiry = Duration::s(100'000'000);
// How long an ActiveExpire step lets the real server's cycle run: several
// serverCron passes at hz 100 (server.c:1012, databasesCron).
constexpr Duration kActiveExpireWindow = Duration::ms(60);

Instant whole_ms(Instant t) { return Instant::from_ns(t.ns() / 1'000'000 * 1'000'000); }

// --- Generating -------------------------------------------------------------

// A duration in whole multiples of 100 us (see base_wall()).
Duration tenths_of_ms(Rng& rng, std::int64_t lo, std::int64_t hi) { return Duration::us(100 * rng.between(lo, hi)); }

struct Gen {
  Rng rng;
  bool replica;
  // Who follows whom, as the steps so far leave it (REPLICAOF always succeeds).
  std::array<int, 2> master_of{-1, 0};

  template <class T, std::size_t N>
  const T& pick(const std::array<T, N>& a) { return a[rng.below(N)]; }
  std::string string_key() { return pick(std::array<const char*, 2>{"k1", "k2"}); }
  std::string value() { return pick(std::array<const char*, 3>{"a", "b", "12"}); }
  // A TTL: mostly short (ms to a few s), so that sleeps and steps cross it.
  Duration ttl() {
    if (rng.chance(0.7)) return Duration::ms(rng.between(1, 3'000));
    return Duration::ms(rng.between(1, 60'000));
  }
  Duration sleep() {
    if (rng.chance(0.5)) return tenths_of_ms(rng, 1, 50);  // up to 5 ms: the millisecond edges
    return tenths_of_ms(rng, 1, 40'000);                    // up to 4 s
  }
  Duration clock_step() {
    const Duration by = rng.chance(0.5) ? tenths_of_ms(rng, 1, 100) : tenths_of_ms(rng, 1, 400'000);
    return rng.chance(0.3) ? Duration::zero() - by : by;
  }
  Step set_step();
  Step command();
  std::optional<Step> topology();
  Step next();
};

Step Gen::set_step() {
  Step s;
  s.req.op = Op::Set;
  s.req.key = string_key();
  s.req.value = value();
  s.req.nx = rng.chance(0.5);
  switch (rng.below(4)) {
    case 0: break;  // no expiry
    case 1: s.req.px = ttl(); break;
    case 2:
      s.req.px = Duration::s(rng.between(1, 40));
      s.as_ex = true;
      break;
    default:  // PXAT: from a little in the past to a minute ahead
      s.pxat_from_now = Duration::ms(rng.between(-2'000, 60'000));
      break;
  }
  return s;
}

Step Gen::command() {
  Step s;
  Request& r = s.req;
  const std::uint64_t what = rng.below(100);
  if (what < 22) return set_step();
  r.key = string_key();
  r.value = value();
  if (what < 25) r.op = Op::SetNx;
  else if (what < 37) r.op = Op::Get;
  else if (what < 41) r.op = Op::Del;
  else if (what < 44) r.op = Op::Exists;
  else if (what < 48) r.op = Op::Incr;
  else if (what < 55) r.op = Op::CompareAndDelete;
  else if (what < 62) r.op = Op::CompareAndPexpire;
  else if (what < 68) r.op = Op::AcquireWithToken;
  else if (what < 80) r.op = Op::Pttl;
  else if (what < 85) r.op = Op::RedissonTryLock;
  else if (what < 88) r.op = Op::RedissonTryLockFenced;
  else if (what < 92) r.op = Op::RedissonUnlock;
  else {
    // The counter and Redisson's lock (a hash in Redis) get only the ops meant for them.
    r.op = pick(std::array<Op, 4>{Op::Pttl, Op::Exists, Op::Del, Op::Get});
    r.key = "tok";
    if (r.op != Op::Get && rng.chance(0.5)) r.key = "rl";
    return s;
  }
  if (r.op == Op::Incr && rng.chance(0.4)) r.key = "tok";
  if (r.op == Op::CompareAndPexpire || r.op == Op::AcquireWithToken) r.px = ttl();
  if (r.op == Op::AcquireWithToken) r.token_key = "tok";
  if (r.op == Op::RedissonTryLock || r.op == Op::RedissonTryLockFenced || r.op == Op::RedissonUnlock) {
    r.key = "rl";
    if (r.op != Op::RedissonUnlock && rng.chance(0.85)) r.px = ttl();  // else: no lease (PERSIST)
    if (r.op == Op::RedissonTryLockFenced) r.token_key = "tok";
  }
  return s;
}

// REPLICAOF NO ONE, or REPLICAOF the other node when that one is a master.
std::optional<Step> Gen::topology() {
  Step s;
  s.node = static_cast<int>(rng.below(2));
  const int other = 1 - s.node;
  if (master_of[s.node] >= 0 && rng.chance(0.6)) {
    s.req.op = Op::ReplicaOfNoOne;
    master_of[s.node] = -1;
    return s;
  }
  if (master_of[other] >= 0) return std::nullopt;  // the other is a replica: no loops
  s.req.op = Op::ReplicaOf;
  s.req.key = kNodeNames[other];
  master_of[s.node] = other;
  return s;
}

Step Gen::next() {
  const std::uint64_t what = rng.below(100);
  if (what < 12) {
    Step s;
    s.kind = Step::Kind::Sleep;
    s.by = sleep();
    return s;
  }
  if (what == 18 && rng.chance(0.3)) {  // rare: each costs real time
    Step s;
    s.kind = Step::Kind::ActiveExpire;
    s.node = replica ? static_cast<int>(rng.below(2)) : 0;
    return s;
  }
  if (what < 18) {
    Step s;
    s.kind = Step::Kind::ClockStep;
    s.node = replica ? static_cast<int>(rng.below(2)) : 0;
    s.by = clock_step();
    return s;
  }
  if (replica && what < 22)
    if (auto s = topology()) return *s;
  Step s = command();
  if (replica) s.node = rng.chance(0.4) ? 1 : 0;
  return s;
}

// The request a step sends, its expiry made absolute against the node's wall clock now.
Request request_of(const Step& s, Instant node_wall) {
  Request r = s.req;
  if (s.pxat_from_now) r.pxat = whole_ms(node_wall) + *s.pxat_from_now;
  return r;
}

// Whether a sequence's REPLICAOFs leave the two nodes following each other
// (a shrunk sequence can): such a sequence is not run.
bool loops(const Sequence& seq) {
  std::array<int, 2> master_of{-1, 0};
  for (const Step& s : seq) {
    if (s.kind != Step::Kind::Command) continue;
    if (s.req.op == Op::ReplicaOfNoOne) master_of[s.node] = -1;
    if (s.req.op == Op::ReplicaOf) master_of[s.node] = s.req.key == kNodeNames[0] ? 0 : 1;
    if (master_of[0] == 1 && master_of[1] == 0) return true;
    if (master_of[s.node] == s.node) return true;
  }
  return false;
}

}  // namespace

Instant base_wall() { return Instant::from_ns(1'800'000'000'000LL * 1'000'000 + 250'000); }

Sequence generate(std::uint64_t seed, std::uint64_t index, const Options& options) {
  Gen g{Rng(seed).fork("diff-redis " + std::to_string(index)), options.replica};
  const auto n = static_cast<std::size_t>(g.rng.between(4, 30));
  Sequence seq;
  for (std::size_t i = 0; i < n; ++i) seq.push_back(g.next());
  return seq;
}

// --- The model --------------------------------------------------------------

Replies run_model(const Sequence& seq, const Options& options) {
  World w(1);
  auto& client = w.add<Process>("client", ProcessRole::Client, ClockSpec{});
  RedisConfig config;
  config.replication_lag = DurationRange::fixed(Duration::ms(1));
  config.active_expire_period = kNoActiveExpiry;
  const ClockSpec clock{.offset = base_wall() - Instant::zero()};
  std::vector<RedisNode*> nodes{&w.add<RedisNode>(kNodeNames[0], clock, config)};
  if (options.replica) {
    nodes.push_back(&w.add<RedisNode>(kNodeNames[1], clock, config));
    nodes[1]->replicate_from(nodes[0]->id());
    nodes[0]->add_replica(nodes[1]->id(), config.replication_lag, config.expiry_as_pxat);
  }
  const auto catch_up = [&] {
    for (RedisNode* n : nodes) w.clock_jump(n->id(), Duration::zero() - kCatchUp);
    w.run_until(w.now() + kCatchUp);
  };
  Replies out;
  for (const Step& s : seq) {
    if (options.replica) catch_up();
    switch (s.kind) {
      case Step::Kind::Sleep:  // what a sleep does to a node's answers: its wall clock moves on
        for (RedisNode* n : nodes) w.clock_jump(n->id(), s.by);
        break;
      case Step::Kind::ClockStep:
        w.clock_jump(nodes.at(static_cast<std::size_t>(s.node))->id(), s.by);
        break;
      case Step::Kind::ActiveExpire:
        nodes.at(static_cast<std::size_t>(s.node))->active_expire_now();
        break;
      case Step::Kind::Command: {
        RedisNode& n = *nodes.at(static_cast<std::size_t>(s.node));
        out.push_back(n.execute(request_of(s, n.wall_now()), client.id()));
        break;
      }
    }
  }
  return out;
}

// --- The real server --------------------------------------------------------

struct RealRedis::Impl {
  Options options;
  Supervisor sup;
  resp::Names names;
  std::vector<BlockingClient> clients;
  std::vector<Duration> stepped;  // how far each node's frozen wall clock is from base_wall()

  explicit Impl(const Options& o);
  resp::Value call(int node, const std::vector<std::string>& argv) {
    return clients.at(static_cast<std::size_t>(node)).command(argv, Duration::s(5));
  }
  void step_clock(int node, Duration by) {
    sup.clock(kNodeNames.at(static_cast<std::size_t>(node))).step(by);
    stepped.at(static_cast<std::size_t>(node)) += by;
  }
  void freeze_at_base(int node);
  void catch_up();
  void reset();
  Reply command(const Step& s);
};

RealRedis::Impl::Impl(const Options& o) : options(o) {
  // DEBUG SET-ACTIVE-EXPIRE needs the debug command (7.0: off unless enabled; local: loopback only).
  ServerOptions server{.shim_clock = true,
                       .extra_config = {"enable-debug-command local", "repl-timeout 3600", "hz 100"}};
  sup.start_server(kNodeNames[0], server);
  if (options.replica) {
    server.replica_of = kNodeNames[0];
    sup.start_server(kNodeNames[1], server);
  }
  names = sup.names();
  for (std::size_t i = 0; i < (options.replica ? 2u : 1u); ++i) {
    clients.emplace_back(sup.port(kNodeNames[i]), Duration::s(5));
    stepped.push_back(Duration::zero());
    freeze_at_base(static_cast<int>(i));
    call(static_cast<int>(i), {"DEBUG", "SET-ACTIVE-EXPIRE", "0"});  // debug.c:838
  }
}

// Drift -1e9 ppb: the shimmed wall clock stands still (clock_page.h's
// formula). Then TIME says where it stands, to the microsecond, and a step
// puts it on base_wall() (within that microsecond).
void RealRedis::Impl::freeze_at_base(int node) {
  ClockControl& clock = sup.clock(kNodeNames.at(static_cast<std::size_t>(node)));
  clock.set_drift_ppb(-1'000'000'000);
  const resp::Value t = call(node, {"TIME"});
  if (t.type != resp::Value::Type::Array || t.elements.size() != 2) throw Error("TIME: " + resp::describe(t));
  const std::int64_t us = std::stoll(t.elements[0].str) * 1'000'000 + std::stoll(t.elements[1].str);
  clock.step(base_wall() - Instant::from_ns(us * 1'000));
}

// Replication caught up: every replica's link up and its offset acknowledged.
void RealRedis::Impl::catch_up() {
  const Deadline deadline(Duration::s(10));
  for (int i = 0; i < 2; ++i) {
    for (;;) {
      const resp::Value role = call(i, {"ROLE"});
      if (role.elements.empty() || role.elements[0].str != "slave") break;
      if (role.elements.size() > 3 && role.elements[3].str == "connected") {
        const int master = 1 - i;
        const resp::Value acked = call(master, {"WAIT", "1", "5000"});
        if (acked.type == resp::Value::Type::Int && acked.integer >= 1) break;
      }
      if (deadline.passed()) throw Timeout(std::string("diff-redis: ") + kNodeNames[i] + " did not catch up");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

void RealRedis::Impl::reset() {
  for (int i = 0; i < static_cast<int>(clients.size()); ++i) step_clock(i, Duration::zero() - stepped[i]);
  if (!options.replica) {
    call(0, {"FLUSHALL"});
    return;
  }
  call(0, {"REPLICAOF", "NO", "ONE"});
  const Endpoint r1 = *names.address_of(kNodeNames[0]);
  call(1, {"REPLICAOF", r1.host, std::to_string(r1.port)});
  catch_up();
  call(0, {"FLUSHALL"});
  catch_up();
  const resp::Value size = call(1, {"DBSIZE"});
  if (size.integer != 0) throw Error("diff-redis: the replica kept " + std::to_string(size.integer) + " keys");
}

Reply RealRedis::Impl::command(const Step& s) {
  const auto node = static_cast<std::size_t>(s.node);
  const Request req = request_of(s, base_wall() + stepped.at(node));
  std::vector<std::vector<std::string>> argvs = resp::commands_of(req, names);
  if (s.as_ex)
    for (auto& argv : argvs)
      for (std::size_t i = 0; i + 1 < argv.size(); ++i)
        if (argv[i] == "PX") {
          argv[i] = "EX";
          argv[i + 1] = std::to_string(req.px.whole_ms() / 1000);
        }
  resp::Value v;
  for (const auto& argv : argvs) v = call(s.node, argv);
  return resp::decode(req, v, names);
}

RealRedis::RealRedis(const Options& options) : impl_(std::make_unique<Impl>(options)) {}
RealRedis::~RealRedis() = default;

std::uint16_t RealRedis::port(int node) const { return impl_->sup.port(kNodeNames.at(static_cast<std::size_t>(node))); }

Replies RealRedis::run(const Sequence& seq) {
  Impl& m = *impl_;
  m.reset();
  Replies out;
  for (const Step& s : seq) {
    if (m.options.replica) m.catch_up();
    switch (s.kind) {
      case Step::Kind::Sleep:
        for (int i = 0; i < static_cast<int>(m.clients.size()); ++i) m.step_clock(i, s.by);
        break;
      case Step::Kind::ClockStep:
        m.step_clock(s.node, s.by);
        break;
      case Step::Kind::ActiveExpire:
        m.call(s.node, {"DEBUG", "SET-ACTIVE-EXPIRE", "1"});
        std::this_thread::sleep_for(real(kActiveExpireWindow));
        m.call(s.node, {"DEBUG", "SET-ACTIVE-EXPIRE", "0"});
        break;
      case Step::Kind::Command:
        out.push_back(m.command(s));
        break;
    }
  }
  return out;
}

// --- Comparing and shrinking ------------------------------------------------

namespace {
std::string error_code(const std::string& message) { return message.substr(0, message.find(' ')); }
}  // namespace

bool same(const Reply& a, const Reply& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Reply::Kind::Nil: return true;
    case Reply::Kind::Ok: return a.integer == b.integer;  // a fenced trylock's OK carries the token
    case Reply::Kind::Int: return a.integer == b.integer;
    case Reply::Kind::Str: return a.str == b.str;
    case Reply::Kind::Err: return error_code(a.str) == error_code(b.str);
  }
  return false;
}

std::optional<std::size_t> first_difference(const Replies& model, const Replies& real) {
  const std::size_t n = std::min(model.size(), real.size());
  for (std::size_t i = 0; i < n; ++i)
    if (!same(model[i], real[i])) return i;
  if (model.size() != real.size()) return n;
  return std::nullopt;
}

Sequence shrink(Sequence seq, const std::function<bool(const Sequence&)>& fails) { return ddmin<Step>(std::move(seq), fails); }

// --- Telling ----------------------------------------------------------------

namespace {
std::string signed_duration(Duration d) { return (d >= Duration::zero() ? "+" : "") + format_duration(d); }

std::string quote_arg(const std::string& a) {
  const bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':';
  });
  if (plain) return a;
  std::string out = "'";
  for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}
}  // namespace

std::string describe(const Step& s) {
  switch (s.kind) {
    case Step::Kind::Sleep: return "sleep " + format_duration(s.by);
    case Step::Kind::ClockStep: return std::string(kNodeNames.at(s.node)) + " wall clock " + signed_duration(s.by);
    case Step::Kind::ActiveExpire: return std::string(kNodeNames.at(s.node)) + " runs its active-expiry cycle";
    case Step::Kind::Command: break;
  }
  std::string text = std::string(kNodeNames.at(s.node)) + ": " + redis::describe(s.req);
  if (s.as_ex) text += " (sent as EX " + std::to_string(s.req.px.whole_ms() / 1000) + ")";
  if (s.pxat_from_now) text += " PXAT now" + signed_duration(*s.pxat_from_now);
  return text;
}

void print_case(std::ostream& out, const Sequence& seq, const Replies& model, const Replies& real,
                const std::vector<std::uint16_t>& ports) {
  const std::optional<std::size_t> diff = first_difference(model, real);
  out << "  steps (model reply | redis-server reply):\n";
  std::size_t c = 0;
  for (const Step& s : seq) {
    out << "    " << describe(s);
    if (s.kind == Step::Kind::Command) {
      const std::string m = c < model.size() ? redis::describe(model[c]) : "-";
      const std::string r = c < real.size() ? redis::describe(real[c]) : "-";
      out << "  ->  " << m << " | " << r << (diff && *diff == c ? "   <-- differ" : "");
      ++c;
    }
    out << "\n";
  }
  out << "  redis-cli transcript (wall clocks frozen at " << base_wall().ns() / 1'000'000
      << " ms + 250 us by the clock shim; steps as comments):\n";
  std::vector<Duration> stepped(2, Duration::zero());
  for (const Step& s : seq) {
    if (s.kind == Step::Kind::Sleep) {
      out << "    # sleep " << format_duration(s.by) << ": every node's wall clock " << signed_duration(s.by) << "\n";
      for (Duration& d : stepped) d += s.by;
      continue;
    }
    if (s.kind == Step::Kind::ActiveExpire) {
      out << "    # " << kNodeNames.at(s.node) << " runs its active-expiry cycle (DEBUG SET-ACTIVE-EXPIRE 1, 60 ms, 0)\n";
      continue;
    }
    if (s.kind == Step::Kind::ClockStep) {
      out << "    # " << kNodeNames.at(s.node) << "'s wall clock " << signed_duration(s.by) << "\n";
      stepped.at(static_cast<std::size_t>(s.node)) += s.by;
      continue;
    }
    resp::Names names;
    names.address_of = [&](std::string_view name) -> std::optional<Endpoint> {
      for (std::size_t i = 0; i < ports.size(); ++i)
        if (name == kNodeNames[i]) return Endpoint{"127.0.0.1", ports[i]};
      return std::nullopt;
    };
    const Request req = request_of(s, base_wall() + stepped.at(static_cast<std::size_t>(s.node)));
    for (const auto& argv : resp::commands_of(req, names)) {
      out << "    redis-cli -p " << ports.at(std::min<std::size_t>(s.node, ports.size() - 1));
      for (const std::string& a : argv) out << " " << quote_arg(a);
      out << "\n";
    }
  }
}

// --- Running ----------------------------------------------------------------

namespace {
void report_mismatch(std::ostream& out, RealRedis& real, const RunOptions& o, std::uint64_t index,
                     const Sequence& seq) {
  const auto fails = [&](const Sequence& s) {
    if (o.options.replica && loops(s)) return false;
    return first_difference(run_model(s, o.options), real.run(s)).has_value();
  };
  const Sequence small = shrink(seq, fails);
  const Replies model = run_model(small, o.options);
  const Replies actual = real.run(small);
  std::vector<std::uint16_t> ports{real.port(0)};
  if (o.options.replica) ports.push_back(real.port(1));
  out << "MISMATCH: seed " << o.seed << ", sequence " << index << (o.options.replica ? " (--replica)" : "")
      << ": " << seq.size() << " steps, shrunk to " << small.size() << "\n";
  out << "  reproduce: locksim diff-redis --seed " << o.seed << " --sequences " << index + 1
      << (o.options.replica ? " --replica" : "") << "\n";
  print_case(out, small, model, actual, ports);
}
}  // namespace

Summary run(const RunOptions& o, std::ostream& out) {
  RealRedis real(o.options);
  Summary sum;
  for (std::uint64_t i = 0; i < o.sequences; ++i) {
    const Sequence seq = generate(o.seed, i, o.options);
    const Replies model = run_model(seq, o.options);
    const Replies actual = real.run(seq);
    ++sum.sequences;
    sum.commands += model.size();
    if (!first_difference(model, actual)) continue;
    ++sum.mismatches;
    if (sum.mismatches <= o.max_reported) report_mismatch(out, real, o, i, seq);
    else out << "MISMATCH: seed " << o.seed << ", sequence " << i << " (not shrunk: over the limit)\n";
  }
  return sum;
}

}  // namespace locksim::live::diff
