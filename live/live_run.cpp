#include "live/live_run.hpp"

#include <utility>  // before Asio (Boost 1.74)

#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <map>
#include <set>
#include <thread>

#include "harness/faults.hpp"
#include "harness/faults/kind.hpp"
#include "harness/job.hpp"
#include "live/blocking_client.hpp"
#include "live/client_env.hpp"
#include "live/etcd/etcd_run.hpp"
#include "live/etcd/http.hpp"
#include "live/external/external_clients.hpp"
#include "live/proxy.hpp"
#include "live/servers.hpp"
#include "live/zookeeper/live_service.hpp"
#include "lockalgos/registry.hpp"
#include "sim/servers/table.hpp"
#include "sim/storage.hpp"

namespace locksim::live {

namespace asio = boost::asio;
using asio::ip::tcp;
using error_code = boost::system::error_code;

namespace {

const char* const kExpiredChannel = "__keyevent@0__:expired";

bool is_client(const Scenario& s, const std::string& name) {
  for (const ClientConfig& c : s.clients)
    if (c.name == name) return true;
  return false;
}

bool is_node(const Scenario& s, const std::string& name) {
  for (const NodeConfig& n : s.nodes)
    if (n.name == name) return true;
  return false;
}

// A node whose wall clock the scenario moves runs under the clock shim.
bool needs_shim(const Scenario& s, const NodeConfig& n) {
  if (!n.clock.offset.is_zero() || n.clock.drift_ppb != 0 || n.clock.wall_drift_ppb != 0) return true;
  for (const FaultSpec& f : s.faults)
    if ((f.kind == FaultKind::ClockJump || f.kind == FaultKind::ClockDrift) && f.target == n.name) return true;
  return false;
}

}  // namespace

namespace {

// The protected storage: in-process, as in the simulator (sim/storage.cpp).
// A rule on an in-process link (client <-> storage): hold, drop or delay.
struct StorageRule {
  LinkRule::Kind kind = LinkRule::Kind::Hold;
  ProcId from = kNoProc, to = kNoProc;
  RealClock::time_point until = RealClock::time_point::max();
  std::int64_t remaining = -1;
  Duration extra_real;
};

class LiveRun final : public LiveHub, private LiveFaultTarget {
 public:
  LiveRun(const Scenario& s, const LiveOptions& o, RunResult& result);
  ~LiveRun() override;
  void run();
  std::unique_ptr<World> take_world() { return std::move(world_); }

  asio::io_context& io() override { return io_; }
  const ScenarioClock& clock() const override { return clock_; }
  Trace& trace() override { return world_->trace(); }
  Kind kind_of(ProcId p) const override;
  std::uint16_t port_for(ProcId client, ProcId p) const override;
  const resp::Names& names() const override { return names_; }
  void call_storage(ProcId client, const storage::Request& req, std::uint64_t request_id,
                    std::function<void(storage::Reply, std::uint64_t)> done) override;
  std::uint64_t observed(ProcId client, ProcId node, std::uint64_t request_id, const redis::Request& req,
                         const redis::Reply& reply) override;
  std::uint64_t next_message() override { return next_message_++; }
  std::unique_ptr<CoordTransport> coord_transport(ProcId client) override {
    return zk_ ? zk_->transport(client) : nullptr;
  }
  std::uint64_t observed(ProcId client, ProcId node, std::uint64_t request_id, const coord::Request& req,
                         const coord::Reply& reply) override;
  std::uint64_t pushed(ProcId client, ProcId node, const coord::Notify& push) override;
  void coord_sent(ProcId client, ProcId node, const coord::Request& req) override { etcd_->sent(client, node, req); }
  std::uint64_t observed_coord(ProcId client, ProcId node, std::uint64_t request_id, const coord::Request* req,
                               const Payload& reply) override;
  void after_revision(ProcId node, std::int64_t revision, std::function<void()> f) override {
    etcd_->after_revision(node, revision, std::move(f));
  }

 private:
  struct Subscriber;
  void start_servers();
  void start_zookeeper();
  void start_replication();
  void add_processes();
  void start_clients();
  void make_external();
  void end_when_finished();
  void arm_faults();
  // A fault, as its kind does it live (harness/faults/, FaultKindInfo::live).
  void apply(const FaultSpec& f);
  // What a fault does, to whichever process it names: an external
  // client's, one of locksim's own clients, or a server.
  void pause(const std::string& target, Duration d) override;
  void crash(const std::string& target) override;
  void restart(const std::string& target) override;
  void clock_jump(const std::string& target, Duration by) override;
  void clock_drift(const std::string& target, std::int64_t ppb) override;
  void partition(const FaultSpec& f) override;
  void link(const FaultSpec& f) override;
  void heal() override;
  void failover(const std::string& master) override;
  LiveClientEnv* env_of(const std::string& name);  // one of locksim's own clients; nullptr: not one
  const NodeConfig* node_config(const std::string& name) const;
  void at_real(Duration real_delay, std::function<void()> f);
  std::optional<Duration> route(ProcId from, ProcId to);  // nullopt: the message is lost or held forever
  storage::Reply serve(ProcId client, const storage::Request& req);
  void subscribe_expiry(ProcId node);
  void read_expiry(const std::shared_ptr<Subscriber>& sub, ProcId node);
  void on_expired(ProcId node, const std::string& key);
  void note_at(ProcId p, Ev kind, TraceEvent&& e);
  void note_world(std::string detail);
  // The far side of one exchange: `at` got request `id` from `peer`, and sends its reply; returns the reply's id.
  std::uint64_t note_exchange(ProcId at, ProcId peer, std::uint64_t id, const Payload& request, const Payload& reply,
                              std::function<void()> between);
  ProcId id(const std::string& name) const { return *world_->trace().find(name); }
  Proxy& proxy(ProcId client, ProcId node) { return *proxies_.at({client, node}); }
  std::vector<std::pair<ProcId, ProcId>> links(const std::string& from, const std::string& to, Direction& dir);

  const Scenario& s_;
  const LiveOptions& o_;
  RunResult& result_;
  asio::io_context io_;
  std::unique_ptr<World> world_;
  ScenarioClock clock_{RealClock::now(), 1};
  std::unique_ptr<Supervisor> sup_;
  std::unique_ptr<zk::LiveService> zk_;  // a ZooKeeper lock: its server, sessions and watcher
  resp::Names names_;
  std::vector<ProcId> clients_, nodes_, masters_, sentinels_;
  ProcId storage_ = kNoProc;
  std::map<std::pair<ProcId, ProcId>, std::unique_ptr<Proxy>> proxies_;
  std::map<ProcId, std::shared_ptr<Subscriber>> subscribers_;
  std::vector<std::unique_ptr<LiveClientEnv>> envs_;
  std::unique_ptr<etcd::Nodes> etcd_;  // an etcd scenario's nodes
  std::vector<std::unique_ptr<Lock>> locks_;
  std::optional<StorageRules> served_storage_;  // sim/storage.cpp's rules, served here
  std::vector<StorageRule> storage_rules_;
  std::vector<std::vector<std::vector<ProcId>>> partitions_;  // the groups of each, for the storage's links
  std::vector<bool> one_way_;
  // Who set each lock key, per node, as its replies showed; and when it is due to expire (real).
  struct Owner {
    ProcId client = kNoProc;
    RealClock::time_point synthesized{};  // an expiry told at an overwrite: its notification is not told again
    RealClock::time_point due = RealClock::time_point::max();  // when its TTL ends, in real time
  };
  std::set<ProcId> shimmed_;  // nodes whose wall clock the scenario moves
  // Replication links through proxies (master, replica): the replication_lag, and a crash loses what is in flight.
  std::vector<std::tuple<ProcId, ProcId, std::unique_ptr<Proxy>>> replication_;
  std::map<std::pair<ProcId, std::string>, Owner> owners_;
  std::map<ProcId, RealClock::time_point> crashed_at_;
  std::shared_ptr<Judge> judge_;
  std::vector<std::unique_ptr<asio::steady_timer>> timers_;
  struct Trigger {
    const FaultSpec* fault;
    ProcId process;
    Ev event;
    int seen = 0;
  };
  std::vector<Trigger> triggers_;
  std::uint64_t next_message_ = 1;
  std::unique_ptr<external::ExternalClients> external_;  // a library's clients, run by its adapter
};

// A connection of the run's own to a node, subscribed to its expiry notifications.
struct LiveRun::Subscriber {
  explicit Subscriber(asio::io_context& io) : socket(io) {}
  tcp::socket socket;
  resp::Decoder decoder;
  std::array<char, 4096> buffer{};
  std::string hello;
  bool closed = false;
};

LiveRun::LiveRun(const Scenario& s, const LiveOptions& o, RunResult& result) : s_(s), o_(o), result_(result) {
  world_ = std::make_unique<World>(result.seed);
  clock_ = ScenarioClock(RealClock::now(), o.time_scale);  // its start is set again when the run begins
  SupervisorOptions so;
  so.keep = o.keep;
  sup_ = std::make_unique<Supervisor>(so);
}

LiveRun::~LiveRun() {
  external_.reset();  // the adapters first: killed, none continued
  for (auto& env : envs_) env.reset();  // their coroutines first: they refer to the locks
  locks_.clear();
  for (auto& [node, sub] : subscribers_) {
    error_code ec;
    sub->socket.close(ec);
  }
  proxies_.clear();
  timers_.clear();
  zk_.reset();
  etcd_.reset();
  sup_.reset();
}

LiveHub::Kind LiveRun::kind_of(ProcId p) const {
  if (p == storage_) return Kind::Storage;
  for (ProcId n : nodes_)
    if (n == p) return Kind::Node;
  for (ProcId n : sentinels_)
    if (n == p) return Kind::Sentinel;
  return Kind::Other;
}

std::uint16_t LiveRun::port_for(ProcId client, ProcId p) const {
  if (kind_of(p) == Kind::Sentinel) return sup_->port(world_->trace().name(p));
  return proxies_.at({client, p})->port();
}

void LiveRun::note_at(ProcId p, Ev kind, TraceEvent&& e) {
  const Instant now = clock_.now();
  e.at = now;
  e.process = p;
  e.kind = kind;
  e.wall = now;
  e.mono = now;
  if (!world_->trace().detailed()) e.detail.clear();
  world_->trace().record(std::move(e));
}

void LiveRun::note_world(std::string detail) { note_at(kNoProc, Ev::Fault, {.detail = std::move(detail)}); }

void LiveRun::at_real(Duration real_delay, std::function<void()> f) {
  auto timer = std::make_unique<asio::steady_timer>(io_, real(real_delay));
  timer->async_wait([f = std::move(f)](const error_code& ec) {
    if (!ec) f();
  });
  timers_.push_back(std::move(timer));
}

// --- Set-up -------------------------------------------------------------------

void LiveRun::add_processes() {
  Trace& t = world_->trace();
  for (const ClientConfig& c : s_.clients) clients_.push_back(t.add_process(c.name, ProcessRole::Client));
  for (const NodeConfig& n : s_.nodes) {
    nodes_.push_back(t.add_process(n.name, ProcessRole::LockNode));
    if (n.replica_of.empty()) masters_.push_back(nodes_.back());
  }
  storage_ = t.add_process(s_.storage.name, ProcessRole::Storage);
  if (s_.sentinel.present)
    for (int i = 0; i < s_.sentinel.sentinels; ++i)
      sentinels_.push_back(t.add_process(s_.sentinel.process_name(i), ProcessRole::LockNode));
}

void LiveRun::start_servers() {
  const std::int64_t k = o_.time_scale;
  if (find_algorithm(s_.lock.algorithm)->server == ServerKind::ZooKeeper) return start_zookeeper();
  if (etcd::runs_on_etcd(s_))
    etcd_ = std::make_unique<etcd::Nodes>(
        io_, *sup_, [this](ProcId p, Ev kind, TraceEvent&& e) { note_at(p, kind, std::move(e)); }, world_->trace().detailed());
  for (const NodeConfig& n : s_.nodes) {
    if (etcd_) {
      etcd_->start(s_, k, id(n.name), n.name);
      continue;
    }
    ServerOptions so;
    so.persistence = n.persistence == locksim::Persistence::AofAlways     ? live::Persistence::AofAlways
                     : n.persistence == locksim::Persistence::AofEverysec ? live::Persistence::AofEverysec
                                                                          : live::Persistence::None;
    so.shim_clock = needs_shim(s_, n);
    if (so.shim_clock) shimmed_.insert(id(n.name));
    so.extra_config.push_back("notify-keyspace-events Ex");  // the run tells expiries from these
    sup_->start_server(n.name, so);
    if (so.shim_clock) {
      ClockControl& c = sup_->clock(n.name);
      if (!n.clock.offset.is_zero()) c.step(Duration::ns(n.clock.offset.count_ns() / k));
      // Redis expires keys by its wall clock: the drift shared by both clocks and the wall's own.
      if (n.clock.drift_ppb + n.clock.wall_drift_ppb != 0) c.set_drift_ppb(n.clock.drift_ppb + n.clock.wall_drift_ppb);
    }
  }
  start_replication();
  for (std::size_t i = 0; i < sentinels_.size(); ++i) {
    std::string master;
    for (const NodeConfig& n : s_.nodes)
      if (!n.replica_of.empty()) master = n.replica_of;
    if (master.empty()) throw ScenarioError(s_.path + ": a [sentinel] live needs a master with a replica");
    SentinelOptions so;
    so.group = master;  // the simulator's sentinel names each group after its master
    so.master = master;
    so.quorum = s_.sentinel.quorum_or_default();
    so.down_after = Duration::ns(std::max<std::int64_t>(s_.sentinel.down_after.count_ns() / k, 100'000'000));
    so.failover_timeout = Duration::ns(std::max<std::int64_t>(s_.sentinel.failover_timeout.count_ns() / k, 1'000'000'000));
    const std::string name = s_.sentinel.process_name(static_cast<int>(i));
    sup_->start_sentinel(name, so);
    // A sentinel fails over only to a replica it has seen (from the master's INFO): wait for it.
    const Deadline deadline(Duration::s(20));
    for (;;) {
      const resp::Value v = call(sup_->port(name), {"SENTINEL", "REPLICAS", master});
      if (v.type == resp::Value::Type::Array && !v.elements.empty()) break;
      if (deadline.passed()) throw Error("sentinel " + name + " never saw a replica of " + master);
      ::usleep(50'000);
    }
  }
  names_ = sup_->names();
  for (ProcId c : clients_)
    for (ProcId n : nodes_) {
      const std::uint16_t port = sup_->port(world_->trace().name(n));
      // A Redis library's link ends at an observer in front of the node (live/external/redis_observer.hpp).
      auto& p = proxies_[{c, n}] =
          std::make_unique<Proxy>(io_, Endpoint{"127.0.0.1", external_ && !etcd_ ? external_->upstream(c, n, port) : port});
      if (etcd_ && external_) {
        // An etcd library speaks gRPC (HTTP/2): its bytes pass as they come,
        // and the tap tells the observer whose lease is whose and which
        // deletes are a client's (live/etcd/grpc_tap.hpp).
        p->set_raw(true);
        const external::AdapterInfo& adapter = *external::find_adapter(s_.lock.library);
        const std::string key = external::server_key(adapter, s_.lock.key);
        const bool revokes = adapter.releases_by_revoke;
        p->set_tap([this, c, n, key, revokes](std::uint64_t connection, Direction d, Proxy::Seen seen, std::string_view bytes) {
          const bool to_server = d == Direction::ToServer;
          if ((to_server && seen == Proxy::Seen::Forwarded) || (!to_server && seen == Proxy::Seen::Arrived))
            etcd_->external_bytes(c, n, key, revokes, connection, to_server, bytes);
        });
      } else if (etcd_) {
        p->set_framing(etcd::http_framing());  // HTTP/1.1 messages, not RESP
      }
      if (external_) external_->attach(c, n, *p);
    }
}

// The ZooKeeper node, its proxies cutting ZooKeeper's frames, the lock's
// parent and the run's watcher (live/zookeeper/live_service.hpp).
void LiveRun::start_zookeeper() {
  zk::LiveService::Hooks hooks;
  hooks.note = [this](ProcId node, Ev kind, TraceEvent&& e) { note_at(node, kind, std::move(e)); };
  hooks.next_message = [this] { return next_message_++; };
  hooks.address = [this](ProcId client, ProcId node) { return proxy(client, node).endpoint(); };
  zk_ = std::make_unique<zk::LiveService>(io_, *sup_, o_.time_scale, std::move(hooks));
  const NodeConfig& n = s_.nodes.front();
  const bool shim = needs_shim(s_, n);
  if (shim) shimmed_.insert(id(n.name));
  zk_->start_node(id(n.name), n.name, s_.lock.options->server().tick_time, shim);
  if (shim && !n.clock.offset.is_zero()) sup_->clock(n.name).step(clock_.real(n.clock.offset));
  for (ProcId c : clients_) {
    auto p = std::make_unique<Proxy>(io_, Endpoint{"127.0.0.1", sup_->port(n.name)});
    p->set_framing(framing::length_prefixed());
    if (external_) {
      // A real library's requests reach the run only as bytes: its proxy's
      // tap tells the trace its messages and what the server answered, and
      // the watcher whose nodes are whose.
      external_->attach(c, id(n.name), *p);
      p->set_tap([this, c](std::uint64_t connection, Direction d, Proxy::Seen seen, std::string_view bytes) {
        zk_->external_tap(c, connection, d, seen, bytes);
      });
    }
    proxies_[{c, id(n.name)}] = std::move(p);
  }
  // A library names its lock's node itself (kazoo: "/locks/<key>").
  zk_->prepare(external_ ? external::server_key(*external::find_adapter(s_.lock.library), s_.lock.key) : "/lock");
}

// A replica follows its master through a proxy of the run's own, which delays
// the master's stream by the replication_lag (the least of its range): on
// loopback a real replica is a few microseconds behind, and a crash right
// after a write would not lose it as the scenario says. A crash severs the
// proxy first, so what it holds is lost with the master.
void LiveRun::start_replication() {
  for (const NodeConfig& n : s_.nodes) {
    if (n.replica_of.empty()) continue;
    auto proxy = std::make_unique<Proxy>(io_, Endpoint{"127.0.0.1", sup_->port(n.replica_of)});
    proxy->set_raw(true);
    proxy->set_delay(Direction::ToClient, clock_.real(n.replication_lag.lo));
    const std::uint16_t replica = sup_->port(n.name);
    call(replica, {"REPLICAOF", "127.0.0.1", std::to_string(proxy->port())});
    replication_.emplace_back(id(n.replica_of), id(n.name), std::move(proxy));
    const Deadline deadline(Duration::s(15));
    for (;;) {  // the proxy runs on the run's context: turn it while the replica syncs
      io_.restart();
      io_.run_for(std::chrono::milliseconds(20));
      const resp::Value info = call(replica, {"INFO", "replication"});
      if (info.str.find("master_link_status:up") != std::string::npos) break;
      if (deadline.passed()) throw Error(n.name + " did not sync with " + n.replica_of + " through its proxy in time");
    }
  }
  io_.restart();
}

// A library's clients: its adapter's processes (live/external/external_clients.hpp).
void LiveRun::make_external() {
  external::ExternalClients::Setup setup{.scenario = s_, .adapter = *external::find_adapter(s_.lock.library)};
  setup.clients = clients_;
  setup.nodes = nodes_;
  setup.storage = storage_;
  for (const NodeConfig& n : s_.nodes)
    if (needs_shim(s_, n)) setup.shimmed_nodes.insert(id(n.name));
  setup.dir = sup_->root();
  for (const ClientConfig& c : s_.clients) setup.rngs.push_back(world_->fork_rng("process/" + c.name));
  external_ = std::make_unique<external::ExternalClients>(*this, std::move(setup));
}

// The run ends once every job is done and no fault is still to come: what
// happens after that cannot change the verdict, and a real library's run
// need not wait out a duration written for the simulator.
void LiveRun::end_when_finished() {
  at_real(Duration::ms(50), [this] {
    const Instant now = clock_.now();
    const bool to_come = std::any_of(s_.faults.begin(), s_.faults.end(), [&](const FaultSpec& f) {
      return f.at && Instant::zero() + *f.at + f.duration.value_or(Duration::zero()) > now;
    });
    if (external_->finished() && !to_come) return io_.stop();
    end_when_finished();
  });
}

void LiveRun::start_clients() {
  if (external_) return external_->start_jobs();
  const AlgorithmInfo& algorithm = *find_algorithm(s_.lock.algorithm);
  const LockTargets targets{masters_, sentinels_.empty() ? kNoProc : sentinels_.front()};
  for (std::size_t i = 0; i < s_.clients.size(); ++i) {
    const ClientConfig& c = s_.clients[i];
    // The simulator's stream for this process (sim/process.cpp): the same draws, the same values.
    envs_.push_back(std::make_unique<LiveClientEnv>(*this, clients_[i], c.clock, world_->fork_rng("process/" + c.name)));
    LiveClientEnv& env = *envs_.back();
    locks_.push_back(algorithm.make(env, targets, s_.lock));
    env.set_lock(locks_.back().get());
    const Instant start = Instant::zero() + c.start.draw(env.rng());
    Lock& lock = *locks_.back();
    auto timer = std::make_unique<asio::steady_timer>(io_, clock_.real_at(start));
    timer->async_wait([this, &env, &lock, &c](const error_code& ec) {
      if (ec || env.down()) return;
      env.note(Ev::Started, {});
      env.spawn(run_job(env, lock, c, s_.lock.fencing, s_.storage.fenced_reads, storage_));
    });
    timers_.push_back(std::move(timer));
  }
}

void LiveRun::run() {
  add_processes();
  if (!s_.lock.library.empty()) make_external();
  start_servers();
  if (!zk_ && !etcd_)
    for (ProcId n : nodes_) subscribe_expiry(n);
  if (external_) external_->start_adapters();
  served_storage_.emplace(s_.storage.initial, s_.lock.fencing, s_.storage.fenced_reads);

  Trace& trace = world_->trace();
  trace.set_keep_limit(o_.keep_events);
  if (o_.details) trace.want_details();
  if (o_.listener) trace.add_listener([&trace, l = o_.listener](const TraceEvent& e) { l(trace, e); });
  const auto masters = std::count_if(s_.nodes.begin(), s_.nodes.end(), [](const NodeConfig& n) { return n.replica_of.empty(); });
  trace.set_grant_quorum(grant_quorum(*find_algorithm(s_.lock.algorithm), static_cast<std::size_t>(masters)));
  CheckOptions check;
  check.ttl = s_.lock.ttl;
  check.liveness_window = s_.expect.liveness_window;
  judge_ = std::make_shared<Judge>(trace, check);
  auto tally = std::make_shared<RunStats>();
  trace.add_listener([judge = judge_, tally](const TraceEvent& e) {
    judge->observe(e);
    if (e.kind == Ev::Acquired) ++tally->acquisitions;
    if (e.kind == Ev::AttemptFailed || e.kind == Ev::Retrying) ++tally->failed_attempts;
  });

  RealClock::time_point start = RealClock::now();
  if (zk_) {
    // On a tick boundary of the server's: its ticks are then the simulator's, scaled.
    start = zk::tick_boundary_after(start, clock_.real(s_.lock.options->server().tick_time));
    std::this_thread::sleep_until(start);
  }
  clock_ = ScenarioClock(start, o_.time_scale);
  note_at(storage_, Ev::Started, {.value = s_.storage.initial, .detail = "live: the storage runs inside locksim"});
  if (zk_) zk_->begin();
  arm_faults();
  start_clients();
  auto end = std::make_unique<asio::steady_timer>(io_, clock_.real_at(Instant::zero() + s_.duration));
  end->async_wait([this](const error_code&) { io_.stop(); });
  timers_.push_back(std::move(end));
  if (external_) end_when_finished();
  // Ctrl-C and SIGTERM unwind, so that every server is stopped and the temporary directories removed.
  bool interrupted = false;
  asio::signal_set signals(io_, SIGINT, SIGTERM);
  signals.async_wait([this, &interrupted](const error_code& ec, int) {
    if (ec) return;
    interrupted = true;
    io_.stop();
  });
  io_.run();
  if (interrupted) throw Interrupted("interrupted: every server it started is stopped");
  if (external_) external_->rethrow();

  const Instant end_at = Instant::zero() + s_.duration;
  result_.violations = judge_->finish(end_at);
  result_.harm = judge_->harm();
  for (const Violation& v : result_.violations) result_.verdict.insert(v.kind);
  result_.stats = *tally;
  result_.stats.events = trace.size();
  result_.stats.messages = next_message_ - 1;
  result_.stats.sim_time = end_at;
  result_.trace_hash = trace.hash_hex();
}

// --- The storage ----------------------------------------------------------------

std::optional<Duration> LiveRun::route(ProcId from, ProcId to) {
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    const auto& groups = partitions_[i];
    int gf = -1, gt = -1;
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (ProcId p : groups[g]) {
        if (p == from) gf = static_cast<int>(g);
        if (p == to) gt = static_cast<int>(g);
      }
    if (gf >= 0 && gt >= 0 && gf != gt && (!one_way_[i] || gf == 0)) return std::nullopt;
  }
  Duration delay = Duration::zero();
  const auto now = RealClock::now();
  for (StorageRule& r : storage_rules_) {
    if ((r.from != kNoProc && r.from != from) || (r.to != kNoProc && r.to != to) || now >= r.until || r.remaining == 0)
      continue;
    if (r.remaining > 0) --r.remaining;
    if (r.kind == LinkRule::Kind::Drop) return std::nullopt;
    if (r.kind == LinkRule::Kind::Hold)
      delay = std::max(delay, Duration::ns(std::chrono::duration_cast<std::chrono::nanoseconds>(r.until - now).count()));
    else delay += r.extra_real;
  }
  return delay;
}

void LiveRun::call_storage(ProcId client, const storage::Request& req, std::uint64_t request_id,
                           std::function<void(storage::Reply, std::uint64_t)> done) {
  const std::optional<Duration> there = route(client, storage_);
  if (!there) return;
  at_real(*there, [this, client, req, request_id, done = std::move(done)]() mutable {
    storage::Reply reply;
    const std::uint64_t reply_id =
        note_exchange(storage_, client, request_id, Payload(req), Payload(storage::Reply{}), [&] { reply = serve(client, req); });
    const std::optional<Duration> back = route(storage_, client);
    if (!back) return;
    at_real(*back, [reply = std::move(reply), reply_id, done = std::move(done)] { done(reply, reply_id); });
  });
}

std::uint64_t LiveRun::note_exchange(ProcId at, ProcId peer, std::uint64_t id, const Payload& request,
                                     const Payload& reply, std::function<void()> between) {
  const bool detailed = world_->trace().detailed();
  note_at(at, Ev::Delivered, {.peer = peer, .value = static_cast<std::int64_t>(id), .content = fingerprint(request),
                              .detail = detailed ? describe(request) : ""});
  between();
  const std::uint64_t reply_id = next_message_++;
  note_at(at, Ev::Sent, {.peer = peer, .value = static_cast<std::int64_t>(reply_id), .content = fingerprint(reply),
                         .detail = detailed ? describe(reply) : ""});
  return reply_id;
}

// sim/storage.cpp's Storage::on_message and write(), line for line.
storage::Reply LiveRun::serve(ProcId from, const storage::Request& req) {
  StorageRules::Served served = served_storage_->serve(req, from);
  note_at(storage_, served.kind, std::move(served.fields));
  return std::move(served.reply);
}

// --- What the nodes did, from their replies ----------------------------------------

std::uint64_t LiveRun::observed(ProcId client, ProcId node, std::uint64_t request_id, const redis::Request& req,
                               const redis::Reply& reply) {
  using redis::Op;
  using Kind = redis::Reply::Kind;
  if (kind_of(node) != LiveHub::Kind::Node || req.op == Op::Subscribe)
    return note_exchange(node, client, request_id, Payload(req), Payload(reply), [] {});
  const bool granted = (req.op == Op::Set && reply.kind == Kind::Ok) ||
                       (req.op == Op::SetNx && reply.kind == Kind::Int && reply.integer == 1) ||
                       (req.op == Op::AcquireWithToken && reply.kind == Kind::Int) ||
                       (req.op == Op::RedissonTryLock && reply.kind == Kind::Nil) ||
                       (req.op == Op::RedissonTryLockFenced && reply.kind == Kind::Ok);
  // A script that checks the value deletes only the caller's own key. A plain
  // DEL deletes whoever's: its owner is the last grant seen, which holds when
  // the DEL is not concurrent with a grant (replies on different connections
  // arrive in no order the server promises).
  const bool own_deleted = (req.op == Op::CompareAndDelete || req.op == Op::RedissonUnlock) &&
                           reply.kind == Kind::Int && reply.integer == 1;
  const bool deleted = own_deleted || (req.op == Op::Del && reply.kind == Kind::Int && reply.integer >= 1);
  const bool early_expiry = shimmed_.count(node) > 0;  // its clock may end a key before its TTL
  auto key = std::make_pair(node, req.key);
  return note_exchange(node, client, request_id, Payload(req), Payload(reply), [&] {
    auto it = owners_.find(key);
    if (granted && it != owners_.end() && it->second.client != client && it->second.client != kNoProc &&
        (early_expiry || RealClock::now() + std::chrono::milliseconds(2) >= it->second.due)) {
      // Another's key was there until a moment ago: it expired, and its notification is on its way.
      note_at(node, Ev::Expired, {.owner = it->second.client, .key = req.key,
                                  .detail = "as " + world_->trace().name(client) + "'s command found"});
      it->second.synthesized = RealClock::now();
    }
    note_at(node, Ev::Command, {.peer = client, .key = req.key, .content = fnv1a64(describe(req)),
                                .detail = world_->trace().detailed() ? describe(req) + " -> " + describe(reply) : ""});
    if (granted) {
      Owner& o = owners_[key];
      o.client = client;
      o.due = req.px.is_zero() ? RealClock::time_point::max() : RealClock::now() + real(clock_.real(req.px));
    } else if (deleted) {
      const ProcId owner = own_deleted ? client : it == owners_.end() ? kNoProc : it->second.client;
      note_at(node, Ev::KeyDeleted, {.peer = client, .owner = owner, .key = req.key});
      if (it != owners_.end() && it->second.client == owner) it->second.client = kNoProc;
    }
  });
}

std::uint64_t LiveRun::observed(ProcId client, ProcId node, std::uint64_t request_id, const coord::Request& req,
                               const coord::Reply& reply) {
  return note_exchange(node, client, request_id, Payload(req), Payload(reply), [&] {
    // sim/servers/coordination_server.cpp: the command with its answer.
    std::string detail = describe(req) + " -> " + describe(reply);
    const std::uint64_t content = fnv1a64(detail);
    note_at(node, Ev::Command, {.peer = client, .key = req.path, .content = content, .detail = std::move(detail)});
  });
}

std::uint64_t LiveRun::pushed(ProcId client, ProcId node, const coord::Notify& push) {
  const std::uint64_t id = next_message_++;
  const Payload body(push);
  note_at(node, Ev::Sent, {.peer = client, .value = static_cast<std::int64_t>(id), .content = fingerprint(body),
                           .detail = world_->trace().detailed() ? describe(body) : ""});
  return id;
}

// A coordination node's reply, or its push (req null): what the node did, as the simulator's
// CoordinationServer records it (sim/servers/coordination_server.cpp: the command with its answer).
std::uint64_t LiveRun::observed_coord(ProcId client, ProcId node, std::uint64_t request_id, const coord::Request* req,
                                      const Payload& reply) {
  if (!req) {
    const std::uint64_t id = next_message_++;
    note_at(node, Ev::Sent, {.peer = client, .value = static_cast<std::int64_t>(id), .content = fingerprint(reply),
                             .detail = world_->trace().detailed() ? describe(reply) : ""});
    return id;
  }
  const coord::Reply& r = std::get<coord::Reply>(reply);
  return note_exchange(node, client, request_id, Payload(*req), reply, [&] {
    std::string detail = coord::describe(*req) + " -> " + coord::describe(r);
    const std::uint64_t content = fnv1a64(detail);
    note_at(node, Ev::Command, {.peer = client, .key = req->path, .content = content,
                                .detail = world_->trace().detailed() ? std::move(detail) : ""});
    etcd_->answered(client, node, *req, r);
  });
}

void LiveRun::on_expired(ProcId node, const std::string& key) {
  if (external_) return external_->node_expired(node, key);
  auto it = owners_.find({node, key});
  if (it == owners_.end()) return;
  if (it->second.synthesized != RealClock::time_point{} && RealClock::now() - it->second.synthesized < std::chrono::seconds(1)) {
    it->second.synthesized = {};  // told already, when another took the key
    return;
  }
  if (it->second.client == kNoProc) return;
  note_at(node, Ev::Expired, {.owner = it->second.client, .key = key, .detail = "as its keyspace notification tells"});
  it->second.client = kNoProc;
}

void LiveRun::subscribe_expiry(ProcId node) {
  if (auto old = subscribers_.find(node); old != subscribers_.end()) {
    old->second->closed = true;
    error_code ec;
    old->second->socket.close(ec);
  }
  auto sub = std::make_shared<Subscriber>(io_);
  subscribers_[node] = sub;
  error_code ec;
  sub->socket.connect(tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), sup_->port(world_->trace().name(node))), ec);
  if (ec) return;
  sub->hello = resp::encode({"SUBSCRIBE", kExpiredChannel});
  asio::write(sub->socket, asio::buffer(sub->hello), ec);
  if (!ec) read_expiry(sub, node);
}

void LiveRun::read_expiry(const std::shared_ptr<Subscriber>& sub, ProcId node) {
  sub->socket.async_read_some(asio::buffer(sub->buffer), [this, sub, node](const error_code& e, std::size_t n) {
    if (e || sub->closed) return;
    try {
      sub->decoder.feed(std::string_view(sub->buffer.data(), n));
      while (auto v = sub->decoder.next())
        if (v->type == resp::Value::Type::Array && v->elements.size() == 3 && v->elements[0].str == "message")
          on_expired(node, v->elements[2].str);
    } catch (const Error&) {
      return;
    }
    read_expiry(sub, node);
  });
}

// --- Faults -------------------------------------------------------------------------

void LiveRun::arm_faults() {
  for (const FaultSpec& f : s_.faults) {
    if (f.at) {
      auto timer = std::make_unique<asio::steady_timer>(io_, clock_.real_at(Instant::zero() + *f.at));
      timer->async_wait([this, &f](const error_code& ec) {
        if (!ec) apply(f);
      });
      timers_.push_back(std::move(timer));
    } else if (external_ && external_->anchored(f)) {
      continue;  // the adapter stops itself at that event
    } else {
      const auto ev = event_from_name(f.on_event);
      if (!ev) throw ScenarioError(s_.path + ": unknown trigger event " + f.on_event);
      triggers_.push_back({&f, id(f.on_process), *ev, 0});
    }
  }
  if (triggers_.empty()) return;
  // As harness/faults.cpp: scheduled, not applied inline (the process that
  // noted the event is mid-step; its `mark` yields right after, and a post
  // made now runs before that yield's resumption).
  world_->trace().add_listener([this](const TraceEvent& e) {
    for (Trigger& t : triggers_) {
      if (t.process != e.process || t.event != e.kind || ++t.seen != t.fault->on_occurrence) continue;
      const FaultSpec* f = t.fault;
      if (f->after.is_zero()) asio::post(io_, [this, f] { apply(*f); });
      else at_real(clock_.real(f->after), [this, f] { apply(*f); });
    }
  });
}

void LiveRun::apply(const FaultSpec& f) {
  const FaultKindInfo& kind = fault_kind(f.kind);
  if (!kind.live) throw ScenarioError("not supported live: " + std::string(kind.name));
  kind.live(*this, f);
}

LiveClientEnv* LiveRun::env_of(const std::string& name) {
  const auto p = world_->trace().find(name);
  if (!p) return nullptr;
  for (auto& env : envs_)
    if (env->id() == *p) return env.get();
  return nullptr;
}

const NodeConfig* LiveRun::node_config(const std::string& name) const {
  for (const NodeConfig& n : s_.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

void LiveRun::heal() {
  for (auto& [link, p] : proxies_) p->heal();
  partitions_.clear();
  one_way_.clear();
  note_world("heal: every partition ends");
}

void LiveRun::failover(const std::string& master) {
  note_world("SENTINEL FAILOVER " + master);
  call(sup_->port(s_.sentinel.process_name(0)), {"SENTINEL", "FAILOVER", master});
}

void LiveRun::pause(const std::string& name, Duration d) {
  if (external_ && external_->has(name)) return external_->pause(name, d);
  if (LiveClientEnv* env = env_of(name)) return env->pause(d);
  if (!sup_->running(name) || sup_->paused(name)) return;
  const ProcId node = id(name);
  sup_->pause(name);
  note_at(node, Ev::Paused, {.value = d.count_ns(), .detail = format_duration(d)});
  at_real(clock_.real(d), [this, node, name] {
    if (!sup_->running(name)) return;
    sup_->resume(name);
    note_at(node, Ev::Resumed, {});
  });
}

void LiveRun::crash(const std::string& name) {
  if (external_ && external_->has(name)) return external_->crash(name);
  if (LiveClientEnv* env = env_of(name)) return env->crash();
  if (!sup_->running(name)) return;
  const ProcId node = id(name);
  note_at(node, Ev::Crashed, {});
  for (auto& [master, replica, proxy] : replication_)
    if (master == node) proxy->sever();
  sup_->crash(name);
  if (etcd_) etcd_->crashed(node);
  crashed_at_[node] = RealClock::now();
  if (external_) external_->node_crashed(node);
}

void LiveRun::restart(const std::string& name) {
  // A client's restart is refused before the run (the kind's live_refusal).
  if ((external_ && external_->has(name)) || env_of(name)) throw ScenarioError("not supported live: restart of a client");
  const ProcId node = id(name);
  const NodeConfig* config = node_config(name);
  Duration wait = Duration::zero();
  if (config && crashed_at_.count(node)) {
    const auto due = crashed_at_[node] + real(clock_.real(config->restart_delay));
    if (due > RealClock::now())
      wait = Duration::ns(std::chrono::duration_cast<std::chrono::nanoseconds>(due - RealClock::now()).count());
  }
  at_real(wait, [this, node, name, config] {
    if (sup_->running(name)) return;
    sup_->restart(name);
    note_at(node, Ev::Restarted, {});
    if (zk_) return zk_->restarted();
    if (config && config->persistence == locksim::Persistence::None)
      for (auto& [key, owner] : owners_)
        if (key.first == node) owner.client = kNoProc;
    if (external_) external_->node_restarted(node, config && config->persistence == locksim::Persistence::None);
    if (etcd_) etcd_->restarted(node);
    else subscribe_expiry(node);
  });
}

void LiveRun::clock_jump(const std::string& name, Duration by) {
  if (external_ && external_->has(name)) return external_->clock_jump(name, by);
  if (LiveClientEnv* env = env_of(name)) return env->clock_jump(by);
  sup_->clock(name).step(clock_.real(by < Duration::zero() ? -by : by) * (by < Duration::zero() ? -1 : 1));
  note_at(id(name), Ev::ClockJumped, {.value = by.count_ns(), .detail = (by >= Duration::zero() ? "+" : "") + format_duration(by)});
}

void LiveRun::clock_drift(const std::string& name, std::int64_t ppb) {
  if (external_ && external_->has(name)) return external_->clock_drift(name, ppb);
  if (LiveClientEnv* env = env_of(name)) return env->set_drift_ppb(ppb);
  const NodeConfig* config = node_config(name);
  sup_->clock(name).set_drift_ppb(ppb + (config ? config->clock.wall_drift_ppb : 0));
  note_at(id(name), Ev::ClockDrift, {.value = ppb});
}

// The client <-> node links a link fault names, and which way they run.
std::vector<std::pair<ProcId, ProcId>> LiveRun::links(const std::string& from, const std::string& to, Direction& dir) {
  std::vector<std::pair<ProcId, ProcId>> out;
  const bool to_server = is_node(s_, to) || (to.empty() && is_client(s_, from));
  const bool to_client = is_node(s_, from) || (from.empty() && is_client(s_, to));
  if (!to_server && !to_client) return out;
  dir = to_server ? Direction::ToServer : Direction::ToClient;
  const std::string& client = to_server ? from : to;
  const std::string& node = to_server ? to : from;
  for (ProcId c : clients_)
    for (ProcId n : nodes_)
      if ((client.empty() || world_->trace().name(c) == client) && (node.empty() || world_->trace().name(n) == node))
        out.emplace_back(c, n);
  return out;
}

void LiveRun::link(const FaultSpec& f) {
  const std::string link = (f.from.empty() ? "*" : f.from) + " -> " + (f.to.empty() ? "*" : f.to);
  const bool hold = f.kind == FaultKind::Delay && f.by.is_zero();
  note_world((f.kind == FaultKind::Drop ? "drop messages on " : hold ? "hold back messages on " : "delay messages on ") +
             link + (f.duration ? " for " + format_duration(*f.duration) : ""));
  // The storage's links, in-process.
  if (f.from.empty() || f.to.empty() || f.from == s_.storage.name || f.to == s_.storage.name) {
    StorageRule r;
    r.kind = f.kind == FaultKind::Drop ? LinkRule::Kind::Drop : hold ? LinkRule::Kind::Hold : LinkRule::Kind::ExtraDelay;
    r.from = f.from.empty() ? kNoProc : id(f.from);
    r.to = f.to.empty() ? kNoProc : id(f.to);
    if (f.duration) r.until = RealClock::now() + real(clock_.real(*f.duration));
    r.remaining = f.count == kForever ? -1 : f.count;
    r.extra_real = clock_.real(f.by);
    storage_rules_.push_back(r);
  }
  // The nodes' links, at their proxies.
  Direction dir = Direction::ToServer;
  for (auto [c, n] : links(f.from, f.to, dir)) {
    Proxy& p = proxy(c, n);
    if (f.kind == FaultKind::Drop) {
      if (f.count != kForever) p.drop_next(dir, f.count);
      else p.drop(dir);
    } else if (hold) {
      p.hold(dir);
    } else if (f.count != kForever) {
      p.delay_next(dir, f.count, clock_.real(f.by));  // only the next `count` messages, as the simulator's
    } else {
      p.set_delay(dir, clock_.real(f.by));
    }
    if (!f.duration || (f.kind == FaultKind::Drop && f.count != kForever)) continue;
    at_real(clock_.real(*f.duration), [this, c = c, n = n, dir, hold, kind = f.kind, counted = f.count != kForever] {
      if (kind == FaultKind::Delay && !hold && counted) proxy(c, n).delay_next(dir, 0, Duration::zero());
      else if (kind == FaultKind::Delay && !hold) proxy(c, n).set_delay(dir, Duration::zero());
      else proxy(c, n).heal(dir);
    });
  }
}

void LiveRun::partition(const FaultSpec& f) {
  std::vector<std::vector<ProcId>> groups;
  std::string label = "partition";
  for (const auto& g : f.groups) {
    groups.emplace_back();
    std::string names;
    for (const auto& n : g) {
      groups.back().push_back(id(n));
      names += (names.empty() ? "" : ", ") + n;
    }
    label += (groups.size() == 1 ? " [" : (f.one_way ? " -/-> [" : " | [")) + names + "]";
  }
  // Messages across it are lost, as in the simulator: a proxy drops them, and
  // the client's timeout closes the connection.
  std::vector<std::tuple<ProcId, ProcId, Direction>> cut;
  for (std::size_t a = 0; a < groups.size(); ++a)
    for (std::size_t b = 0; b < groups.size(); ++b) {
      if (a == b || (f.one_way && a != 0)) continue;
      for (ProcId x : groups[a])
        for (ProcId y : groups[b])
          if (proxies_.count({x, y})) cut.emplace_back(x, y, Direction::ToServer);
          else if (proxies_.count({y, x})) cut.emplace_back(y, x, Direction::ToClient);
    }
  // A real library's connection is held instead (live/README.md, "External
  // clients"): a real partition delays TCP's segments, it loses none out of
  // the middle of a stream, and a library with no command timeout would read
  // a later request's reply as the lost one's.
  for (auto [c, n, dir] : cut)
    if (external_) proxy(c, n).hold(dir);
    else proxy(c, n).drop(dir);
  partitions_.push_back(groups);
  one_way_.push_back(f.one_way);
  note_world(label + (f.duration ? " for " + format_duration(*f.duration) : ""));
  if (!f.duration) return;
  const std::size_t index = partitions_.size() - 1;
  at_real(clock_.real(*f.duration), [this, cut, index, label] {
    for (auto [c, n, dir] : cut) proxy(c, n).heal(dir);
    if (index < partitions_.size()) partitions_[index].clear();
    note_world("healed: " + label);
  });
}

}  // namespace

}  // namespace locksim::live

namespace locksim::live {

RunResult run_live(const Scenario& s, const LiveOptions& options) {
  if (auto why = live_unsupported(s)) throw ScenarioError(s.path + ": " + *why);
  if (options.time_scale < 1) throw ScenarioError("--time-scale must be 1 or more");
  if (!s.lock.library.empty() && options.time_scale != 1)
    throw ScenarioError(s.path + ": [lock] library = \"" + s.lock.library + "\" runs the real library, in real time: --time-scale must be 1");
  if (find_algorithm(s.lock.algorithm)->server == ServerKind::ZooKeeper &&
      !zk::tick_scales(s.lock.options->server().tick_time, options.time_scale))
    throw ScenarioError(s.path + ": --time-scale " + std::to_string(options.time_scale) + ": the tick of " +
                        format_duration(s.lock.options->server().tick_time) + " divided by " +
                        std::to_string(options.time_scale) +
                        " is not a whole number of milliseconds, as ZooKeeper's tickTime must be");
  RunResult result;
  result.owned_scenario = std::make_shared<const Scenario>(s);
  result.scenario = result.owned_scenario.get();
  result.seed = s.seed;
  {
    LiveRun run(*result.scenario, options, result);
    run.run();
    result.world = run.take_world();
  }
  return result;
}

}  // namespace locksim::live
