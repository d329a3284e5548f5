// What a live run knows of its etcd nodes' stores (live/live_run.cpp).
//
// Each node's store is watched by a connection of the run's own, straight to
// the server (no proxy: a link fault is the clients'), from the revision the
// run starts at: every key's puts and deletes, in revision order, with the
// deleted key's lease (prev_kv). From them and from what the clients send
// and are answered, the trace is told what the model's EtcdServer tells
// (sim/etcd_server.cpp): who holds each lock prefix as it changes
// (Ev::Holder: the owner of its first-created key), a key deleted by a
// client (Ev::KeyDeleted) or with its lease (Ev::Expired).
//
// Who owns a key: the client its lease was granted to (LeaseGrant answers
// seen). Who deleted it: the client with a DeleteKey of it in flight when the
// watch shows it deleted; none: its lease was revoked.
//
// Order: after_revision holds a client's reply until the watch has shown the
// revision it was answered at, so that the trace states the holder before
// any client acts on an answer. A watch that has not caught up within a
// second (the server stopped, say) lets the reply go anyway.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "live/common.hpp"
#include "sim/message.hpp"
#include "sim/trace.hpp"

namespace boost::asio {
class io_context;
}

namespace locksim::live::etcd {

class HttpConnection;

class Observer {
 public:
  // `note` records an event at this node (the run stamps it with the time).
  using Note = std::function<void(Ev, TraceEvent&&)>;
  Observer(boost::asio::io_context& io, Endpoint server, Note note, bool detailed);
  ~Observer();
  Observer(const Observer&) = delete;
  Observer& operator=(const Observer&) = delete;

  // Watches from the revision after `revision` (the store's now).
  void start(std::int64_t revision);
  // The node went down: the watch ended with it. restarted(): watch again
  // from the revision after the last one seen.
  void crashed();
  void restarted();

  // What the clients send, and what they are answered.
  void sent(ProcId client, const coord::Request& req);
  void answered(ProcId client, const coord::Request& req, const coord::Reply& reply);
  void after_revision(std::int64_t revision, std::function<void()> f);
  // What an external client's bytes told (live/etcd/grpc_tap.hpp): `prefix`
  // is a lock from now on; `lease` is `client`'s (it put the lock's key with
  // it).
  void watch_lock(const std::string& prefix) { holders_.try_emplace(prefix, kNoProc); }
  void lease_of(ProcId client, std::int64_t lease) { leases_[lease] = client; }
  ProcId owner(std::int64_t lease) const { return owner_of(lease); }
  // `client` revokes `lease`: a key deleted with it is the client's delete.
  // A lease is never granted again, so the entry can stay. False if it was
  // told already.
  bool revoking(ProcId client, std::int64_t lease) { return revoking_.try_emplace(lease, client).second; }

  std::int64_t revision() const { return seen_; }

  // One message of the watch (a line of its stream), as it is read: public
  // for the tests, which feed it recorded messages.
  void on_message(std::string_view line);

 private:
  struct Key {
    std::int64_t create_revision = 0;
    std::int64_t lease = 0;
  };
  struct Waiter {
    std::int64_t revision;
    std::function<void()> f;
    std::shared_ptr<void> patience;  // its timer
  };
  void watch();
  void deleted(const std::string& key, std::int64_t lease);
  void note_holders(const std::string& key);
  void release_waiters();
  ProcId owner_of(std::int64_t lease) const;

  boost::asio::io_context& io_;
  Endpoint server_;
  Note note_;
  bool detailed_;
  std::shared_ptr<HttpConnection> stream_;
  std::shared_ptr<void> rewatch_;  // the timer that opens an ended watch again
  bool down_ = false;
  bool created_ = false;
  std::int64_t seen_ = 0;                     // the last revision the watch has shown
  std::map<std::string, Key> keys_;
  std::map<std::int64_t, ProcId> leases_;     // lease -> the client it was granted to
  std::map<std::string, ProcId> holders_;     // lock prefix -> the client last stated to hold it
  std::multimap<std::string, ProcId> deleting_;  // a DeleteKey in flight: key -> its client
  std::map<std::int64_t, ProcId> revoking_;      // a LeaseRevoke sent: lease -> its client
  std::vector<Waiter> waiters_;
};

}  // namespace locksim::live::etcd
