// Coordination services, each modelled as one linearizable server process
// (the ensemble's consensus is out of scope; sessions and leases are not):
// ZooKeeperServer (sim/servers/zookeeper/server.hpp) and EtcdServer
// (sim/servers/etcd/server.hpp) over this base.
//
// The base answers each coord::Request with the server's handle(), records
// the command (Ev::Command), and numbers every message it sends a client,
// answers and notifications alike, in one stream per client
// (coord::Reply::seq, coord::Notify::seq): a client that sees a gap lost a
// message, which over TCP would have broken the connection.
//
// A restart is a new leader: it renews every session (ZooKeeper) and every
// lease (etcd's Promote) for a whole timeout from now.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/world.hpp"

namespace locksim {

class CoordinationServer : public Process {
 public:
  CoordinationServer(World& world, std::string name, const ClockSpec& clock);
  void digest(Digest& d) const override {
    for (const auto& [client, n] : stream_) {
      d.add(static_cast<std::uint64_t>(client));
      d.add(n);
    }
  }

 protected:
  // A coord::Request: answered with handle(), its reply numbered after
  // whatever handle() sent; anything else goes to Process.
  void on_message(Message& m) override;
  // The server's answer to one request from `from`.
  virtual coord::Reply handle(const coord::Request& req, ProcId from) = 0;
  // A request answered later (a held KeepAlive, a blocked Acquire): handle()
  // calls hold() and its return value is dropped; answer() sends the reply,
  // numbered and recorded as if handle() had returned it then.
  struct Held {
    Message request;
    coord::Request req;
  };
  Held hold();
  void answer(const Held& held, coord::Reply r);
  // A watch notification to `to`, numbered in its stream.
  void notify(ProcId to, const std::string& path, const char* what);

  static coord::Reply error(std::string what);
  // A watcher is registered once per path, however often it asks (ZooKeeper's
  // WatchManager keeps a set).
  template <typename W>
  static void watch(std::vector<W>& watchers, W w) {
    if (std::find(watchers.begin(), watchers.end(), w) == watchers.end()) watchers.push_back(std::move(w));
  }

 private:
  void answer(const Message& m, const coord::Request& req, coord::Reply r);

  std::map<ProcId, std::uint64_t> stream_;  // messages sent to each client: coord::Notify::seq
  const Message* current_ = nullptr;        // the request handle() is answering
  bool held_ = false;                       // handle() held it
};

}  // namespace locksim
