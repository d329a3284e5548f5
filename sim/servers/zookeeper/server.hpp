// ZooKeeperServer (algorithms.md §5): sessions whose expiry the *server*
// decides — a session not heard from for its timeout expires at the first
// tickTime boundary strictly after that (ExpiryQueue.roundToNextInterval, on
// the server's monotonic clock: a deadline on a boundary gets one tick of
// grace) — ephemeral-sequential znodes with a global zxid, one-shot watches
// that belong to a session and die with it. A restart is a new leader: it
// renews every session for a whole timeout from now.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/servers/coordination_server.hpp"

namespace locksim {

class ZooKeeperServer : public CoordinationServer {
 public:
  ZooKeeperServer(World& world, std::string name, const ClockSpec& clock, Duration tick_time,
                  std::int64_t first_zxid);
  void digest(Digest& d) const override;

 protected:
  void on_crash() override;
  void on_restart() override;

 private:
  struct Session {
    ProcId client;
    Duration timeout;
    Instant expires;  // on our monotonic clock, a multiple of tick_time
    std::set<std::string> ephemerals;
    // The client asked (Connect's watch) to be told when the server closes
    // the session's connection, as its expiry does: a kazoo client reads the
    // closed socket at once (its select() sees EOF), where the Curator model
    // times its silence instead.
    bool close_notice = false;
  };
  struct Znode {
    std::int64_t czxid;
    std::int64_t session;
    ProcId owner;  // the session's client (a trace annotation)
  };
  struct Watch {
    ProcId client;
    std::int64_t session;
    bool operator==(const Watch&) const = default;
  };
  using Watches = std::map<std::string, std::vector<Watch>>;

  coord::Reply handle(const coord::Request& req, ProcId from) override;
  void touch(Session& s);
  Task<void> expire_sessions();  // once per tick, like SessionTrackerImpl
  void delete_node(const std::string& path, const char* why, ProcId requester);
  // States in the trace (Ev::Holder) who holds the lock `parent` when that changed.
  void note_holder(const std::string& parent);
  void fire(Watches& watches, const std::string& path, const char* what);

  Duration tick_;
  std::int64_t zxid_;
  std::int64_t next_session_ = 1;
  std::map<std::int64_t, Session> sessions_;
  std::map<std::string, Znode> nodes_;
  std::map<std::string, std::int64_t> sequence_;  // per parent
  Watches exists_watches_;  // path -> watchers
  Watches child_watches_;   // parent -> watchers
  std::map<std::string, ProcId> holder_;  // parent -> the client last stated to hold it (a trace annotation)
};

}  // namespace locksim
