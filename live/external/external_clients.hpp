// A live run's external clients: when a scenario names a library ([lock]
// library = "<id>"), each [[client]] is that real library, run by its adapter
// (live/external/adapters.hpp) as a process of its own, instead of locksim's
// model of it. The run (live/live_run.cpp) keeps its servers, proxies,
// storage, faults and judges; this adds, for each client:
//   - the adapter's process, started before the run (its start-up is not the
//     scenario's time) and told its job at the client's start time;
//   - its events, in the trace as the client's own (acquired, read, lost,
//     notified, ...): what it believed and did;
//   - its storage port (storage_server.hpp) and, for Redis, an observer in
//     front of each node (redis_observer.hpp); for ZooKeeper, the run's
//     watcher (live/zookeeper/live_service.hpp), told of its packets by its
//     proxy's tap: what it really did, which the judges take as the truth;
//   - its faults: a pause is SIGSTOP/SIGCONT of its process (the adapter
//     stops itself at the event a pause is anchored on), a crash SIGKILL, a
//     clock step or drift its clock shim (live/clockshim, both clocks).
// An adapter that cannot start, breaks the protocol or dies on its own ends
// the run with an ExternalClientError naming the client and what to do.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/scenario.hpp"
#include "live/client_env.hpp"
#include "live/external/adapters.hpp"
#include "live/proxy.hpp"

namespace locksim::live::external {

// Why an external client could not run: one line, naming the client and
// what to do (`locksim live` prints it and exits 2).
class ExternalClientError : public Error {
 public:
  using Error::Error;
};

// Why the scenario's external clients cannot run live (no adapter for its
// library, a fault they cannot take), or nullopt.
std::optional<std::string> external_unsupported(const Scenario& s);

class ExternalClients {
 public:
  struct Setup {
    const Scenario& scenario;
    const AdapterInfo& adapter;
    std::vector<ProcId> clients;  // in the scenario's order
    std::vector<ProcId> nodes;    // in the scenario's order
    ProcId storage = kNoProc;
    std::set<ProcId> shimmed_nodes;  // nodes whose wall clock the scenario moves
    std::filesystem::path dir;    // the adapters' files (stderr, clock pages)
    std::vector<Rng> rngs;        // each client's stream, for its start and its rounds' draws
  };
  ExternalClients(LiveHub& hub, Setup setup);
  // Kills every adapter (a stopped one before anything continues it).
  ~ExternalClients();
  ExternalClients(const ExternalClients&) = delete;
  ExternalClients& operator=(const ExternalClients&) = delete;

  // Where `client`'s proxy for Redis node `node` forwards: an observer in
  // front of the node's real port.
  std::uint16_t upstream(ProcId client, ProcId node, std::uint16_t node_port);
  // `client`'s proxy for `node`: the adapter connects to it, and its tap
  // tells the client's side of each message.
  void attach(ProcId client, ProcId node, Proxy& proxy);
  // Starts every adapter, waits (bounded) until each has said hello (its
  // library loaded), tells each its job and waits until each is ready
  // (connected to its servers), running the run's io_context meanwhile.
  // Throws ExternalClientError.
  void start_adapters();
  // At the run's start: each client's first round at its start time.
  void start_jobs();

  // Whether `name` is one of the external clients: a fault of it is theirs.
  bool has(const std::string& name) const;
  // A pause the adapter itself stops for, at its own event: no trigger of the run's.
  bool anchored(const FaultSpec& f) const;
  // The faults of an external client (a crashed one takes none).
  void pause(const std::string& name, Duration d);
  void crash(const std::string& name);
  void clock_jump(const std::string& name, Duration by);
  void clock_drift(const std::string& name, std::int64_t ppb);

  // A node's keyspace notification: its key expired.
  void node_expired(ProcId node, const std::string& key);
  // A node crashed (its observers' connections reset) or restarted.
  void node_crashed(ProcId node);
  void node_restarted(ProcId node, bool lost_data);

  // Every job is done, and no pause is in progress.
  bool finished() const;
  // Called when the run's io_context stopped: throws the error that stopped it, if one did.
  void rethrow() const;

  struct Client;

 private:
  void wait_for(const std::function<bool(const Client&)>& done, const std::string& what);
  struct JobMessage job_for(const Client& c);
  void tapped(ProcId client, ProcId node, std::uint64_t connection, Direction d, Proxy::Seen seen, std::string_view bytes);
  void on_line(Client& c, const std::string& line);
  void on_event(Client& c, const struct AdapterEvent& e);
  void on_ended(Client& c);
  void fail(const Client& c, const std::string& what);
  void send_round(Client& c);
  Client* live_client(const std::string& name);  // nullptr: none, or crashed
  void pause(Client& c, Duration d, bool itself);
  void when_stopped(Client& c, Duration d, const Deadline& deadline);
  void crash(Client& c);
  void note(const Client& c, Ev kind, TraceEvent&& e);
  Client& client(ProcId p);

  LiveHub& hub_;
  Setup setup_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::unique_ptr<class StorageServer> storage_;
  std::map<ProcId, std::unique_ptr<class NodeKeys>> keys_;                               // per node
  std::map<std::pair<ProcId, ProcId>, std::unique_ptr<class RedisObserver>> observers_;  // (client, node)
  std::map<std::pair<ProcId, ProcId>, std::unique_ptr<struct LinkIds>> ids_;            // (client, node)
  std::map<std::pair<ProcId, ProcId>, std::uint16_t> proxy_ports_;                      // (client, node)
  bool recording_ = false;  // the run has begun: the taps tell the trace
  std::optional<std::string> failure_;
};

}  // namespace locksim::live::external
