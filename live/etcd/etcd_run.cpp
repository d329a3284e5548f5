#include "live/etcd/etcd_run.hpp"

#include <utility>  // before Asio (Boost 1.74)

#include <boost/asio.hpp>
#include <nlohmann/json.hpp>

#include "harness/faults.hpp"
#include "live/etcd/gateway.hpp"
#include "live/etcd/grpc_tap.hpp"
#include "live/etcd/http.hpp"
#include "live/servers.hpp"
#include "lockalgos/registry.hpp"
#include "sim/rng.hpp"

namespace locksim::live::etcd {

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

// The shortest lease etcd grants, in seconds, started with this election
// timeout and heartbeat: ceil(floor(3 x ticks / 2) x heartbeat), ticks the
// election timeout in heartbeats (etcdserver/server.go:550-559, v3.4.23).
std::int64_t min_ttl_s(Duration election, Duration heartbeat) {
  const std::int64_t ticks = election.count_ns() / heartbeat.count_ns();
  const std::int64_t ns = (3 * ticks) / 2 * heartbeat.count_ns();
  return (ns + kSecond - 1) / kSecond;
}

// The flags a node gets at scale k: the election timeout divided by k in
// whole milliseconds, the heartbeat a tenth of it (etcd's own ratio).
EtcdNodeOptions raft_timing(Duration election, std::int64_t k) {
  const std::int64_t e_ms = std::max<std::int64_t>(10, election.whole_ms() / k);
  return {.heartbeat = Duration::ms(std::max<std::int64_t>(1, e_ms / 10)), .election_timeout = Duration::ms(e_ms)};
}

// As etcdctl prints a lease's ID.
std::string lease_hex(std::int64_t id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (auto v = static_cast<std::uint64_t>(id); v != 0 || out.empty(); v >>= 4) out.insert(out.begin(), kDigits[v & 0xf]);
  return out;
}

std::int64_t header_revision(const std::optional<HttpResponse>& r, const std::string& what) {
  if (!r || r->status != 200) throw Error("etcd did not answer " + what + (r ? ": " + r->body : ""));
  const nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_discarded()) throw Error("etcd answered " + what + " with " + r->body);
  return std::stoll(j["header"]["revision"].get<std::string>());
}

}  // namespace

bool runs_on_etcd(const Scenario& s) {
  const AlgorithmInfo* a = find_algorithm(s.lock.algorithm);
  return a && a->server == ServerKind::Etcd;
}

std::optional<std::string> unsupported(const Scenario& s) {
  const std::string vdso =
      ": etcd is a Go program and reads its clock through the vDSO, which no preload shim reaches (only Redis's clock can be moved live)";
  for (const NodeConfig& n : s.nodes)
    if (!n.clock.offset.is_zero() || n.clock.drift_ppb != 0 || n.clock.wall_drift_ppb != 0)
      return "not supported live: " + n.name + "'s clock is offset or drifts" + vdso;
  for (const FaultSpec& f : s.faults) {
    if (f.kind != FaultKind::ClockJump && f.kind != FaultKind::ClockDrift) continue;
    for (const NodeConfig& n : s.nodes)
      if (f.target == n.name)
        return "not supported live: " + std::string(fault_kind_name(f.kind)) + " of " + n.name + " (line " +
               std::to_string(f.line) + ")" + vdso;
  }
  const Duration ttl = s.lock.options->lease();
  if (ttl.count_ns() % kSecond != 0)
    return "not supported live: the lease TTL is " + format_duration(ttl) + ", and etcd grants whole seconds";
  return std::nullopt;
}

std::int64_t scale_for(const Scenario& s, std::int64_t k) {
  const Duration ttl = s.lock.options->lease();
  const Duration election = s.lock.options->server().election_timeout;
  const std::int64_t granted =  // what the simulator grants: the TTL, or the shortest lease if longer
      std::max(ttl.count_ns() / kSecond, min_ttl_s(election, Duration::ms(100)));
  for (std::int64_t c = std::min(k, std::max<std::int64_t>(1, ttl.count_ns() / (5 * kSecond))); c > 1; --c) {
    if (ttl.count_ns() % (c * kSecond) != 0) continue;
    const EtcdNodeOptions timing = raft_timing(election, c);
    const std::int64_t live = std::max(ttl.count_ns() / (c * kSecond), min_ttl_s(timing.election_timeout, timing.heartbeat));
    if (live * c == granted) return c;
  }
  return 1;
}

Nodes::Nodes(boost::asio::io_context& io, Supervisor& sup, Note note, bool detailed)
    : io_(io), sup_(sup), note_(std::move(note)), detailed_(detailed) {}

Nodes::~Nodes() = default;

void Nodes::start(const Scenario& s, std::int64_t k, ProcId id, const std::string& name) {
  const ServerSetup setup = s.lock.options->server();
  const std::uint16_t port = sup_.start_etcd(name, raft_timing(setup.election_timeout, k));
  const Endpoint at{"127.0.0.1", port};
  // A fresh store is at revision 1; each put of a key of our own moves it on by one.
  std::int64_t revision = header_revision(post(at, {"/v3/kv/range", R"({"key":"bG9ja3NpbQ=="})"}, Duration::s(5)), "a range");
  const std::string put = nlohmann::json{{"key", base64("/locksim/revision")}}.dump();
  while (revision < setup.first_token - 1)
    revision = header_revision(post(at, {"/v3/kv/put", put}, Duration::s(5)), "a put");
  auto observer = std::make_unique<Observer>(
      io_, at, [note = note_, id](Ev kind, TraceEvent&& e) { note(id, kind, std::move(e)); }, detailed_);
  observer->start(revision);
  observers_[id] = std::move(observer);
}

void Nodes::crashed(ProcId node) { observers_.at(node)->crashed(); }
void Nodes::restarted(ProcId node) { observers_.at(node)->restarted(); }

void Nodes::sent(ProcId client, ProcId node, const coord::Request& req) { observers_.at(node)->sent(client, req); }

void Nodes::answered(ProcId client, ProcId node, const coord::Request& req, const coord::Reply& reply) {
  observers_.at(node)->answered(client, req, reply);
}

void Nodes::after_revision(ProcId node, std::int64_t revision, std::function<void()> f) {
  observers_.at(node)->after_revision(revision, std::move(f));
}

struct Nodes::ExternalConnection {
  GrpcReader to_server{true}, to_client{false};
  struct Pending {
    std::string detail;                // what the Txn asked, for the trace
    std::vector<std::string> deletes;  // the lock's key, if it deletes it
  };
  std::map<std::uint32_t, Pending> pending;  // HTTP/2 stream -> its Txn, until answered
  // The client's streams that carried one message, a lease's ID alone: the
  // ID (nullopt once a second message came: a keepalive's stream).
  std::map<std::uint32_t, std::optional<std::int64_t>> lone_ids;
};

// Whose key is whose. The watch shows each key's lease (with prev_kv when
// deleted); the lease is mapped to the client whose own Txn put the lock's
// key with it, as it passed its proxy. That is the library's doing, not its
// word: python-etcd3 0.12.0 grants a lease for each try and puts the key
// with it in the same try's Txn (etcd3/locks.py, Lock.acquire's _acquire:
// `self.lease = self.etcd_client.lease(self.ttl)`, then
// `transactions.put(self.key, self.uuid, lease=self.lease)`); etcd3 for Node
// 1.1.2 does the same (lib/lock.js acquire). A lease is granted to one
// client and named by no other's Txn, so the key's lease names its writer.
// A release is a Txn deleting the key (python-etcd3's, if its value is still
// the lock's uuid): in flight from when it passes the proxy, until the watch
// shows the delete or its answer says it did not succeed. etcd3 for Node
// releases by revoking the lease (lib/lock.js release, lease.js revoke): a
// unary call (its stream closed by the client after one message) whose
// request is a lease's ID alone, that lease one the client put the key
// with — a LeaseGrant's lone field is a TTL of seconds, never such an ID,
// and the keepalives of lease.js go on one stream that stays open. Only for
// a library that releases so: python-etcd3's refresh() is a LeaseKeepAlive
// stream of one request, closed (client.py refresh_lease), which would read
// as a revoke, and its key would then expire as the client's delete. A
// deletion with neither in flight is the lease's expiry. (A revoke sent as
// the lease expires is taken for the client's delete: the run reads no
// HTTP/2 trailers, where etcd's NOT_FOUND would say otherwise.)
void Nodes::external_bytes(ProcId client, ProcId node, const std::string& lock_key, bool revokes, std::uint64_t connection,
                           bool to_server, std::string_view bytes) {
  Observer& o = *observers_.at(node);
  auto& c = external_[{client, node, connection}];
  if (!c) {
    c = std::make_unique<ExternalConnection>();
    o.watch_lock(lock_key);
  }
  ExternalConnection& conn = *c;
  if (to_server) {
    const auto on_message = [&](std::uint32_t stream, std::string_view message) {
      if (const auto [at, first] = conn.lone_ids.try_emplace(stream, decode_lease_id(message)); !first)
        at->second.reset();
      const std::optional<TxnOps> txn = decode_txn_request(message);
      if (!txn) return;
      ExternalConnection::Pending p;
      for (const TxnOps::Put& put : txn->puts) {
        if (put.key != lock_key) continue;
        if (put.lease != 0) o.lease_of(client, put.lease);
        p.detail += (p.detail.empty() ? "txn: put " : ", put ") + put.key + " lease " + lease_hex(put.lease);
      }
      for (const std::string& key : txn->deletes) {
        if (key != lock_key) continue;
        o.sent(client, coord::Request{.op = coord::Op::DeleteKey, .path = key});
        p.deletes.push_back(key);
        p.detail += (p.detail.empty() ? "txn: delete " : ", delete ") + key;
      }
      if (!p.detail.empty()) conn.pending[stream] = std::move(p);
    };
    const auto on_end = [&](std::uint32_t stream) {
      const auto it = conn.lone_ids.find(stream);
      if (it == conn.lone_ids.end()) return;
      const std::optional<std::int64_t> lease = it->second;
      conn.lone_ids.erase(it);
      // (etcd3 for Node ends the lease's keepalive stream, then revokes: one
      // Command for both.)
      if (revokes && lease && *lease != 0 && o.owner(*lease) == client && o.revoking(client, *lease)) {
        note_(node, Ev::Command, {.peer = client, .key = lock_key, .content = fnv1a64("lease revoke " + lease_hex(*lease)),
                                  .detail = "lease revoke " + lease_hex(*lease)});
      }
    };
    conn.to_server.feed(bytes, on_message, on_end);
    return;
  }
  conn.to_client.feed(bytes, [&](std::uint32_t stream, std::string_view message) {
    const auto it = conn.pending.find(stream);
    if (it == conn.pending.end()) return;
    const std::optional<bool> succeeded = decode_txn_succeeded(message);
    if (!succeeded) return;
    ExternalConnection::Pending p = std::move(it->second);
    conn.pending.erase(it);
    if (!*succeeded)  // it deleted nothing: no event will take its place
      for (const std::string& key : p.deletes)
        o.answered(client, coord::Request{.op = coord::Op::DeleteKey, .path = key}, coord::Reply{.ok = true, .id = 0});
    std::string detail = p.detail + (*succeeded ? " -> succeeded" : " -> failed");
    const std::uint64_t content = fnv1a64(detail);
    note_(node, Ev::Command, {.peer = client, .key = lock_key, .content = content, .detail = std::move(detail)});
  });
}

}  // namespace locksim::live::etcd
