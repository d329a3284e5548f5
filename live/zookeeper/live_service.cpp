#include <utility>  // before any Asio header (Boost 1.74 with g++ 12)

#include "live/zookeeper/live_service.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "live/zookeeper/blocking_session.hpp"
#include "live/zookeeper/connection.hpp"
#include "harness/faults.hpp"
#include "live/zookeeper/coord_session.hpp"

namespace locksim::live::zk {

namespace asio = boost::asio;
using boost::system::error_code;

RealClock::time_point tick_boundary_after(RealClock::time_point t, Duration tick) {
  const std::int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  const std::int64_t step = tick.count_ns();
  const std::int64_t at = (ns + step - 1) / step * step;
  return RealClock::time_point(std::chrono::duration_cast<RealClock::duration>(std::chrono::nanoseconds(at)));
}

bool tick_scales(Duration tick, std::int64_t k) {
  const std::int64_t ns = tick.count_ns();
  return k >= 1 && ns % k == 0 && (ns / k) % 1'000'000 == 0 && ns / k > 0;
}

std::optional<std::string> live_unsupported(const Scenario& s) {
  if (s.nodes.size() != 1)
    return "not yet supported live: " + std::to_string(s.nodes.size()) +
           " ZooKeeper nodes (the ensemble runs live as one standalone server, as the model has it as one service)";
  const NodeConfig& n = s.nodes.front();
  const std::string monotonic =
      ": ZooKeeper times its sessions by System.nanoTime (CLOCK_MONOTONIC), which the clock shim does not move";
  if (n.clock.drift_ppb != 0) return "not yet supported live: " + n.name + "'s clock drifts" + monotonic;
  for (const FaultSpec& f : s.faults) {
    const std::string what = std::string(fault_kind_name(f.kind)) + " (line " + std::to_string(f.line) + ")";
    if (f.kind == FaultKind::ClockDrift && f.target == n.name)
      return "not yet supported live: a drift of " + n.name + "'s clock, " + what + monotonic;
    if (f.kind == FaultKind::Failover) return "not supported live: " + what + " is Redis Sentinel's";
  }
  return std::nullopt;
}

namespace {

std::string hex(std::int64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (int shift = 60; shift >= 0; shift -= 4) out += kDigits[(static_cast<std::uint64_t>(v) >> shift) & 0xf];
  return out;
}

std::string parent_of(const std::string& path) { return path.substr(0, path.rfind('/')); }
std::string sequence_of(const std::string& path) { return path.size() >= 10 ? path.substr(path.size() - 10) : path; }
// A sequential node's name without its 10-digit suffix: what its creator asked for.
std::string prefix_of(const std::string& path) { return path.size() >= 10 ? path.substr(0, path.size() - 10) : path; }

}  // namespace

struct LiveService::Watcher : std::enable_shared_from_this<Watcher> {
  Watcher(asio::io_context& io, Hooks& hooks) : io(io), hooks(hooks), ping_timer(io) {}
  asio::io_context& io;
  Hooks& hooks;
  ProcId node = kNoProc;
  std::string parent;
  Endpoint server;
  std::shared_ptr<Connection> connection;
  std::int64_t session = 0;
  std::string passwd;
  std::int32_t timeout_ms = 0;
  asio::steady_timer ping_timer;

  std::map<std::string, ProcId> creators;  // name prefix -> the client that sent the create
  std::map<std::string, ProcId> deleters;  // path -> the client that sent a delete of it
  std::set<ProcId> closing;                // clients that sent closeSession
  std::set<std::string> children;          // the lock's children now (full paths)
  ProcId holder = kNoProc;
  bool named = false;                      // a holder was ever stated

  ProcId owner_of(const std::string& path) const {
    auto it = creators.find(prefix_of(path));
    return it == creators.end() ? kNoProc : it->second;
  }

  void connect(bool reattach) {
    ConnectRequest hello;
    hello.timeout_ms = 1 << 30;  // the most the server allows: its maxSessionTimeout
    if (reattach) {
      hello.session_id = session;
      hello.passwd = passwd;
      hello.last_zxid_seen = connection ? connection->last_zxid() : 0;
    }
    Connection::Handlers h;
    auto self = shared_from_this();
    h.connected = [self, reattach](std::optional<ConnectResponse> r) {
      if (!r) return;  // the server is down: restarted() tries again
      if (r->timeout_ms <= 0) return self->connect(false);  // its session is gone: a new one
      self->session = r->session_id;
      self->passwd = r->passwd;
      self->timeout_ms = r->timeout_ms;
      self->watch(reattach);
      self->ping();
    };
    h.event = [self](const WatcherEvent& e) { self->on_event(e); };
    connection = Connection::open(io, server, hello, std::move(h));
  }

  // A persistent recursive watch on the lock, then its children as they are
  // now (after a restart, some may be gone).
  void watch(bool resync) {
    Request add{OpCode::AddWatch, parent};
    add.watch_mode = AddWatchMode::PersistentRecursive;
    auto self = shared_from_this();
    connection->request(add, [](std::optional<Response>) {});
    if (!resync) return;
    connection->request(Request{OpCode::GetChildren, parent}, [self](std::optional<Response> r) {
      if (!r || r->header.err != 0) return;
      std::set<std::string> now;
      for (const std::string& c : r->children) now.insert(self->parent + "/" + c);
      for (const std::string& p : std::set<std::string>(self->children))
        if (!now.count(p)) self->removed(p);
      for (const std::string& p : now)
        if (!self->children.count(p)) self->children.insert(p);
      self->update_holder();
    });
  }

  // The session lives while the run does: a ping every third of its timeout.
  void ping() {
    ping_timer.expires_after(std::chrono::milliseconds(std::max(timeout_ms / 3, 1)));
    ping_timer.async_wait([self = shared_from_this()](const error_code& ec) {
      if (ec || !self->connection || self->connection->closed()) return;
      self->connection->ping([](bool) {});
      self->ping();
    });
  }

  void on_event(const WatcherEvent& e) {
    if (parent_of(e.path) != parent) return;  // the lock itself, or deeper
    if (e.type == EventType::NodeCreated) {
      children.insert(e.path);
      update_holder();
    } else if (e.type == EventType::NodeDeleted && children.count(e.path)) {
      removed(e.path);
      update_holder();
    }
  }

  // A child is gone: by a client's delete, its session's close, or its session's expiry.
  void removed(const std::string& path) {
    children.erase(path);
    const ProcId owner = owner_of(path);
    if (auto d = deleters.find(path); d != deleters.end()) {
      hooks.note(node, Ev::KeyDeleted, {.peer = d->second, .owner = owner, .key = path});
      deleters.erase(d);
    } else if (owner != kNoProc && closing.count(owner)) {
      hooks.note(node, Ev::KeyDeleted, {.peer = owner, .owner = owner, .key = path});
    } else {
      hooks.note(node, Ev::Expired,
                 {.owner = owner, .key = path,
                  .detail = "because its session expired: the server had not heard from it for its timeout, rounded up to the tick"});
    }
  }

  // sim/zookeeper_server.cpp note_holder: the lowest sequence number holds the lock.
  void update_holder() {
    const std::string* lowest = nullptr;
    for (const std::string& p : children)
      if (!lowest || sequence_of(p) < sequence_of(*lowest)) lowest = &p;
    const ProcId now = lowest ? owner_of(*lowest) : kNoProc;
    if (named && now == holder) return;
    if (!named && now == kNoProc) return;
    named = true;
    holder = now;
    hooks.note(node, Ev::Holder,
               {.owner = now, .key = parent, .detail = lowest ? "its lowest node is " + *lowest : "it has no node left"});
  }
};

LiveService::LiveService(asio::io_context& io, Supervisor& supervisor, std::int64_t time_scale, Hooks hooks)
    : io_(io), sup_(supervisor), scale_(time_scale), hooks_(std::move(hooks)) {}

LiveService::~LiveService() {
  if (!watcher_) return;
  error_code ec;
  watcher_->ping_timer.cancel(ec);
  watcher_->connection.reset();
}

void LiveService::start_node(ProcId node, const std::string& name, Duration tick, bool shim_clock) {
  if (node_ != kNoProc) throw Error("a live run has one ZooKeeper node (the ensemble is one service in the model)");
  const std::int64_t ns = tick.count_ns() / scale_;
  if (ns % 1'000'000 != 0 || ns == 0 || tick.count_ns() % scale_ != 0)
    throw Error("the tick of " + format_duration(tick) + " at time scale " + std::to_string(scale_) +
                " is not a whole number of milliseconds, as ZooKeeper's tickTime must be");
  ZooKeeperServerOptions o;
  o.tick_time = Duration::ns(ns);
  o.shim_clock = shim_clock;
  sup_.start_zookeeper(name, o);
  node_ = node;
  node_name_ = name;
}

void LiveService::prepare(const std::string& parent) {
  parent_ = parent;
  const Endpoint server{"127.0.0.1", sup_.port(node_name_)};
  {
    // The run's own set-up session: the lock's parent (and its parents: a
    // library's "/locks/<key>"), then closed.
    BlockingSession setup(io_, server, Duration::s(30));
    for (std::size_t slash = parent.find('/', 1);; slash = parent.find('/', slash + 1)) {
      const std::string path = parent.substr(0, slash);
      const Response r = setup.request(Request{OpCode::Create, path});
      if (r.header.err != 0 && r.header.err != static_cast<std::int32_t>(Err::NodeExists))
        throw Error("ZooKeeper: cannot create " + path + ": " + err_name(r.header.err));
      if (slash == std::string::npos) break;
    }
    warm_up(setup);
    setup.close_session();
  }
  watcher_ = std::make_shared<Watcher>(io_, hooks_);
  watcher_->node = node_;
  watcher_->parent = parent;
  watcher_->server = server;
  watcher_->connect(false);
  // Its watch in place before any client acts.
  const bool ready = BlockingSession::turn_until(io_, [&] { return watcher_->connection->pending() == 0 && watcher_->session != 0; },
                                                 Duration::s(10));
  if (!ready) throw Error("ZooKeeper: the run's watcher session did not start in time");
}

// A JVM just started answers its first requests of each kind slowly (its
// classes load, its code is interpreted): tens of milliseconds, hundreds on a
// loaded machine, times K in scenario time. The recipe's requests, a few
// rounds of each, away from the lock, before the run begins.
void LiveService::warm_up(BlockingSession& s) {
  const std::string dir = "/locksim-warm-up";
  s.request(Request{OpCode::Create, dir});
  for (int round = 0; round < 20; ++round) {
    Request node{OpCode::Create2, dir + "/n-"};
    node.mode = CreateMode::EphemeralSequential;
    const Response made = s.request(node);
    Request children{OpCode::GetChildren, dir};
    children.watch = true;
    s.request(children);
    Request get{OpCode::GetData, made.path};
    get.watch = true;
    s.request(get);
    s.request(Request{OpCode::Exists, made.path});
    s.ping();
    s.request(Request{OpCode::Delete, made.path});
  }
  BlockingSession other(io_, Endpoint{"127.0.0.1", sup_.port(node_name_)}, Duration::s(30));
  other.close_session();
}

void LiveService::restarted() {
  if (watcher_) watcher_->connect(watcher_->session != 0);
}

void LiveService::sending(ProcId client, const coord::Request& req) {
  if (!watcher_) return;
  switch (req.op) {
    case coord::Op::Create: watcher_->creators[req.path + "/" + req.data] = client; break;
    case coord::Op::Delete: watcher_->deleters[req.path] = client; break;
    case coord::Op::CloseSession: watcher_->closing.insert(client); break;
    case coord::Op::Connect: watcher_->closing.erase(client); break;
    default: break;
  }
}

void LiveService::external_tap(ProcId client, std::uint64_t connection, Direction d, Proxy::Seen seen,
                               std::string_view packet) {
  if (packet.size() < 4) return;
  const std::string_view body = packet.substr(4);
  ExternalConnection& c = external_[{client, connection}];
  const bool to_server = d == Direction::ToServer;
  auto& at_proxy = c.at_proxy[to_server ? 0 : 1];
  const ProcId from = to_server ? client : node_, to = to_server ? node_ : client;
  const std::uint64_t content = fnv1a64(packet);
  if (seen == Proxy::Seen::Arrived) {
    std::string what = to_server ? request_arrived(c, body) : answered(client, c, body);
    const std::uint64_t id = hooks_.next_message();
    if (recording_)
      hooks_.note(from, Ev::Sent, {.peer = to, .value = static_cast<std::int64_t>(id), .content = content, .detail = what});
    at_proxy.emplace_back(id, std::move(what));
    return;
  }
  if (at_proxy.empty()) return;
  auto [id, what] = seen == Proxy::Seen::Dropped ? at_proxy.back() : at_proxy.front();
  if (seen == Proxy::Seen::Dropped) {
    at_proxy.pop_back();  // dropped as it arrived
    if (recording_)
      hooks_.note(from, Ev::Dropped, {.peer = to, .value = static_cast<std::int64_t>(id), .content = content,
                                      .detail = "the proxy drops it: " + what});
    return;
  }
  at_proxy.pop_front();
  if (to_server) request_sent(client, c, body);
  if (recording_)
    hooks_.note(to, Ev::Delivered, {.peer = from, .value = static_cast<std::int64_t>(id), .content = content, .detail = what});
}

// A client's packet as it arrives at its proxy: what it asks, for the trace.
std::string LiveService::request_arrived(ExternalConnection& c, std::string_view body) {
  if (!c.connect_arrived) {  // ClientCnxn's first packet: the ConnectRequest
    c.connect_arrived = true;
    return "connect";
  }
  try {
    const RequestPacket p = decode_request(body);
    return p.xid == kPingXid ? "ping" : describe(p.request);
  } catch (const Error&) {
    return "a packet locksim does not read";
  }
}

// A client's packet as the server gets it: what the watcher needs.
void LiveService::request_sent(ProcId client, ExternalConnection& c, std::string_view body) {
  try {
    if (!c.connect_sent) {
      c.connect_sent = true;
      // A new session (id 0), not a reattach: whatever it closed before is
      // no longer closing (its reconnect to the same session changes nothing).
      if (decode_connect_request(body).session_id == 0) sending(client, coord::Request{.op = coord::Op::Connect});
      return;
    }
    const RequestPacket p = decode_request(body);
    const Request& r = p.request;
    if (r.op == OpCode::Create || r.op == OpCode::Create2) {
      // The watcher names a child's owner by its name without the sequence
      // suffix: the path the create asked for.
      const auto slash = r.path.rfind('/');
      if (slash != std::string::npos)
        sending(client, coord::Request{.op = coord::Op::Create, .path = r.path.substr(0, slash), .data = r.path.substr(slash + 1)});
    } else if (r.op == OpCode::Delete) {
      sending(client, coord::Request{.op = coord::Op::Delete, .path = r.path});
    } else if (r.op == OpCode::CloseSession) {
      sending(client, coord::Request{.op = coord::Op::CloseSession});
    }
    if (p.xid >= 0) c.pending[p.xid] = r;
  } catch (const Error&) {
    // Not a packet locksim reads: the library and the server settle it.
  }
}

// The server's packet to a client, as it sends it: a request's answer is
// noted as the node's Command (the request with its answer); what it says.
std::string LiveService::answered(ProcId client, ExternalConnection& c, std::string_view body) {
  try {
    std::string detail;
    std::string key;
    if (!c.connect_answered) {
      c.connect_answered = true;
      const ConnectResponse r = decode_connect_response(body);
      detail = "connect -> " + (r.timeout_ms <= 0 ? std::string("session expired")
                                                  : "session 0x" + hex(r.session_id) + ", timeout " +
                                                        std::to_string(r.timeout_ms) + " ms");
    } else {
      const ReplyHeader h = decode_reply_header(body);
      if (h.xid == kNotificationXid) return "notification " + describe(decode_event(body));
      if (h.xid == kPingXid) return "ping answered";
      const auto it = c.pending.find(h.xid);
      if (it == c.pending.end()) return "an answer to xid " + std::to_string(h.xid);
      const Request r = it->second;
      c.pending.erase(it);
      detail = describe(r) + " -> " + describe(r.op, decode_response(r.op, body));
      key = r.path;
    }
    if (recording_)
      hooks_.note(node_, Ev::Command, {.peer = client, .key = key, .content = fnv1a64(detail), .detail = detail});
    return detail;
  } catch (const Error&) {
    return "a packet locksim does not read";
  }
}

std::unique_ptr<CoordTransport> LiveService::transport(ProcId client) {
  CoordSession::Options o;
  o.address = [this, client](ProcId node) { return hooks_.address(client, node); };
  o.time_scale = scale_;
  o.sending = [this, client](const coord::Request& req, std::int64_t) { sending(client, req); };
  return std::make_unique<CoordSession>(io_, std::move(o));
}

}  // namespace locksim::live::zk
