// The etcd part of a live run (live/live_run.cpp): which scenarios can run
// against a real etcd, at which time scale, and the nodes themselves —
// started by the supervisor, their stores brought to the scenario's first
// revision, watched by the run (live/etcd/observer.hpp).
//
// Time. etcd counts a lease's TTL in whole seconds of real time, revokes an
// expired lease from a loop that runs every 500 ms of real time
// (lease/lessor.go:613-626, v3.4.23), and takes its election timeout in
// milliseconds. At time scale K:
//   * a lease of TTL T is granted T/K seconds: K must divide T into whole
//     seconds;
//   * the election timeout E becomes E/K (the heartbeat a tenth of that), so
//     the shortest lease etcd grants, ceil(1.5 x E/K) whole seconds, is
//     K x that in scenario time: K must leave the scenario's lease as the
//     simulator grants it (max(T, ceil(1.5 x E)));
//   * an expired lease is revoked up to 500 ms x K of scenario time late,
//     where the simulator's loop is late by up to 500 ms: K is kept to where
//     that is at most a tenth of the TTL (K <= T / 5 s).
// etcd_scale_for picks the largest K within the one asked for that meets all
// three (1 always does for a lease of whole seconds).
//
// Clocks. etcd is a Go program: it reads the time through the vDSO, which no
// LD_PRELOAD shim reaches, so a node's clock cannot be stepped or made to
// drift; such a scenario is refused, not faked.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "harness/scenario.hpp"
#include "live/etcd/observer.hpp"

namespace boost::asio {
class io_context;
}

namespace locksim::live {
class Supervisor;
}

namespace locksim::live::etcd {

// Why the etcd scenario `s` cannot run live, or nullopt.
std::optional<std::string> unsupported(const Scenario& s);

// The largest time scale, at most `k`, that keeps `s`'s leases as the simulator grants them.
std::int64_t scale_for(const Scenario& s, std::int64_t k);

// Whether the algorithm runs on etcd.
bool runs_on_etcd(const Scenario& s);

class Nodes {
 public:
  // `note(node, kind, event)` records an event at a node.
  using Note = std::function<void(ProcId, Ev, TraceEvent&&)>;
  Nodes(boost::asio::io_context& io, Supervisor& sup, Note note, bool detailed);
  ~Nodes();

  // Starts node `name` (process `id`) as etcd for scenario `s` at scale `k`:
  // its store at revision first_token - 1, so that the first key a client
  // creates gets first_token (a fresh store is at revision 1: a first_token
  // below 2 gives 2); then watched.
  void start(const Scenario& s, std::int64_t k, ProcId id, const std::string& name);
  void crashed(ProcId node);
  void restarted(ProcId node);

  // LiveHub's, for these nodes.
  void sent(ProcId client, ProcId node, const coord::Request& req);
  void answered(ProcId client, ProcId node, const coord::Request& req, const coord::Reply& reply);
  void after_revision(ProcId node, std::int64_t revision, std::function<void()> f);

  // An external client's bytes through its raw proxy to `node` (a real
  // library's gRPC), on the proxy's connection `connection`: toward the
  // server as forwarded, back as arrived. What the observer needs of them:
  // a Txn putting the lock's key `lock_key` names the client's lease (the
  // watch shows the key's lease: that is how the holder is known), a Txn
  // deleting it is a client's delete in flight (its answer, succeeded or
  // not, tells whether it deleted). Each such Txn's answer is the node's
  // Command, for the trace.
  // `revokes`: the library releases by revoking its lease (etcd3 for Node),
  // and a stream of one lease ID that the client closes is read as a revoke.
  void external_bytes(ProcId client, ProcId node, const std::string& lock_key, bool revokes, std::uint64_t connection,
                      bool to_server, std::string_view bytes);

 private:
  struct ExternalConnection;
  boost::asio::io_context& io_;
  Supervisor& sup_;
  Note note_;
  bool detailed_;
  std::map<ProcId, std::unique_ptr<Observer>> observers_;
  std::map<std::tuple<ProcId, ProcId, std::uint64_t>, std::unique_ptr<ExternalConnection>> external_;
};

}  // namespace locksim::live::etcd
