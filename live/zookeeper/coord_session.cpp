#include <utility>  // before any Asio header (Boost 1.74 with g++ 12)

#include "live/zookeeper/coord_session.hpp"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <vector>

namespace locksim::live::zk {

namespace asio = boost::asio;

namespace {

coord::Reply error_reply(std::string word) {
  coord::Reply r;
  r.ok = false;
  r.error = std::move(word);
  return r;
}

// The sequence number a sequential znode's name ends with (10 digits), for
// Curator's sort (StandardLockInternalsDriver.fixForSorting: the part after
// the lock name); a name without one sorts as it is.
std::string_view sequence_of(std::string_view name) { return name.size() >= 10 ? name.substr(name.size() - 10) : name; }

}  // namespace

std::string CoordSession::error_word(std::int32_t err) {
  switch (static_cast<Err>(err)) {
    case Err::NoNode: return "NO_NODE";
    case Err::SessionExpired: return "SESSION_EXPIRED";
    case Err::NodeExists: return "NODE_EXISTS";
    case Err::NotEmpty: return "NOT_EMPTY";
    default: return err_name(err);
  }
}

CoordSession::CoordSession(asio::io_context& io, Options options) : io_(io), options_(std::move(options)) {}

CoordSession::~CoordSession() { *alive_ = false; }

void CoordSession::crash() {
  ++generation_;
  connection_.reset();  // its socket closes; nothing of it is told any more
  reconnecting_.clear();
  session_ = 0;
}

std::shared_ptr<Connection> CoordSession::open(ProcId node, const ConnectRequest& hello,
                                               std::function<void(std::optional<ConnectResponse>)> connected) {
  Connection::Handlers h;
  const std::uint64_t generation = generation_;
  h.connected = [this, alive = alive_, generation, connected = std::move(connected)](std::optional<ConnectResponse> r) {
    if (!*alive || generation != generation_) return;
    connected(std::move(r));
  };
  h.event = [this, alive = alive_, generation, node](const WatcherEvent& e) {
    if (!*alive || generation != generation_ || !on_notify) return;
    coord::Notify n;
    n.path = e.path;
    switch (e.type) {
      case EventType::NodeDeleted: n.what = "deleted"; break;
      case EventType::NodeChildrenChanged: n.what = "children-changed"; break;
      case EventType::NodeCreated: n.what = "created"; break;
      case EventType::NodeDataChanged: n.what = "changed"; break;
      case EventType::None: return;  // a state change: the server sends none of these
    }
    n.seq = ++seq_;
    on_notify(node, std::move(n));
  };
  // A connection that ends under a live session loses what was on its way:
  // a gap in the stream, as a lost message is in the simulator.
  h.closed = [this, alive = alive_, generation] {
    if (*alive && generation == generation_ && session_ != 0 && !gone_) lost_message();
  };
  return Connection::open(io_, options_.address(node), hello, std::move(h));
}

void CoordSession::call(ProcId node, const coord::Request& req, Done done) {
  if (req.op == coord::Op::Connect && req.id != 0) return reattach(node, req, std::move(done));
  if (req.op == coord::Op::Connect) return connect(node, req, std::move(done));
  if (session_ == 0 || gone_) {
    // No session, or one the server told us is gone: the handle answers at
    // once, as a ZooKeeper handle in state CLOSED fails every call with SESSIONEXPIRED.
    asio::post(io_, [this, alive = alive_, done = std::move(done)] {
      if (*alive) done(numbered(error_reply("SESSION_EXPIRED")));
    });
    return;
  }
  with_connection(node, [this, req, generation = generation_, done = std::move(done)](std::optional<bool> usable) mutable {
    // The connection ended before the server answered, or the handle was replaced meanwhile.
    if (!usable || generation != generation_ || !connection_) return done(std::nullopt);
    if (!*usable) return done(numbered(error_reply("SESSION_EXPIRED")));
    forward(req, std::move(done));
  });
}

void CoordSession::connect(ProcId node, const coord::Request& req, Done done) {
  ++generation_;  // the old handle: its connection closes, what it owes is void
  connection_.reset();
  reconnected(std::nullopt);  // requests waiting on the old handle's reconnection end unanswered
  session_ = 0;
  gone_ = false;
  passwd_.clear();
  last_zxid_ = 0;
  const std::int64_t ms = req.ttl.count_ns() / options_.time_scale / 1'000'000;
  requested_ms_ = static_cast<std::int32_t>(std::clamp<std::int64_t>(ms, 1, INT32_MAX));
  ConnectRequest hello;
  hello.timeout_ms = requested_ms_;
  if (options_.sending) options_.sending(req, 0);
  connection_ = open(node, hello, [this, done = std::move(done)](std::optional<ConnectResponse> r) {
    const bool ok = r && r->timeout_ms > 0;
    if (ok) {
      session_ = r->session_id;
      passwd_ = r->passwd;
      negotiated_ms_ = r->timeout_ms;
    }
    reconnected(ok ? std::optional<bool>(true) : std::nullopt);
    if (!ok) return done(std::nullopt);
    if (options_.opened) options_.opened(session_, passwd_);
    coord::Reply reply;
    reply.id = r->session_id;
    reply.ttl = Duration::ms(r->timeout_ms) * options_.time_scale;
    done(numbered(std::move(reply)));
  });
}

// The recipe's reconnect after it dropped its connection (lockalgos/zookeeper.cpp,
// ClientCnxn.SendThread after a disconnect): the old socket closed (what was
// pending on it ends unanswered, as ConnectionLoss), a new connection whose
// ConnectRequest names the session (ClientCnxn.primeConnection). The server
// touches a living session and answers its timeout, or timeout 0 for one it
// no longer has: SESSION_EXPIRED, and the handle is closed (onConnected).
void CoordSession::reattach(ProcId node, const coord::Request& req, Done done) {
  if (session_ == 0 || gone_ || req.id != session_) {
    asio::post(io_, [this, alive = alive_, done = std::move(done)] {
      if (*alive) done(numbered(error_reply("SESSION_EXPIRED")));
    });
    return;
  }
  if (options_.sending) options_.sending(req, session_);
  // Those waiting on the old connection hear it end; its handshake, if it
  // was still under way, is answered to nobody (with_connection's attempt).
  reconnected(std::nullopt);
  if (connection_) {
    last_zxid_ = std::max(last_zxid_, connection_->last_zxid());
    connection_->close();
  }
  with_connection(node, [this, generation = generation_, done = std::move(done)](std::optional<bool> usable) mutable {
    if (!usable || generation != generation_) return done(std::nullopt);
    if (!*usable) return done(numbered(error_reply("SESSION_EXPIRED")));
    coord::Reply reply;
    reply.id = session_;
    reply.ttl = Duration::ms(negotiated_ms_) * options_.time_scale;
    done(numbered(std::move(reply)));
  });
}

void CoordSession::with_connection(ProcId node, std::function<void(std::optional<bool>)> then) {
  if (connection_ && !connection_->closed()) {
    if (connection_->session_ready()) return then(true);
    // Still waiting for the handshake's answer: after it.
    reconnecting_.push_back(std::move(then));
    return;
  }
  reconnecting_.push_back(std::move(then));
  // ClientCnxn.primeConnection: the same session, its password, the last zxid seen, the timeout first asked for.
  ConnectRequest hello;
  hello.timeout_ms = requested_ms_;
  hello.session_id = session_;
  hello.passwd = passwd_;
  hello.last_zxid_seen = std::max(last_zxid_, connection_ ? connection_->last_zxid() : 0);
  last_zxid_ = hello.last_zxid_seen;
  const std::uint64_t attempt = ++attempt_;
  connection_ = open(node, hello, [this, attempt](std::optional<ConnectResponse> r) {
    if (attempt != attempt_) return;  // a reattach replaced this connection
    std::optional<bool> usable;
    if (r) usable = r->timeout_ms > 0;
    if (r && *usable) negotiated_ms_ = r->timeout_ms;
    if (r && !*usable) gone_ = true;  // ClientCnxn.onConnected: "session expired", the handle closes
    reconnected(usable);
  });
}

// Later, never from inside a call: a Connect may end the waits of others.
void CoordSession::reconnected(std::optional<bool> usable) {
  if (reconnecting_.empty()) return;
  std::vector<std::function<void(std::optional<bool>)>> waiting = std::move(reconnecting_);
  reconnecting_.clear();
  asio::post(io_, [alive = alive_, waiting = std::move(waiting), usable]() mutable {
    if (!*alive) return;
    for (auto& then : waiting) then(usable);
  });
}

void CoordSession::forward(const coord::Request& req, Done done) {
  if (options_.sending) options_.sending(req, session_);
  const std::uint64_t generation = generation_;
  // Every answer: dropped if a Connect or a crash came since; numbered otherwise.
  auto answer = [this, alive = alive_, generation](Done& done, std::optional<coord::Reply> r) {
    if (!*alive || generation != generation_) return;
    if (!r) return done(std::nullopt);
    done(numbered(std::move(*r)));
  };
  switch (req.op) {
    case coord::Op::Ping:
      connection_->ping([answer, done = std::move(done)](bool ok) mutable {
        answer(done, ok ? std::optional<coord::Reply>(coord::Reply{}) : std::nullopt);
      });
      return;
    case coord::Op::Create: {
      Request create{OpCode::Create2, req.path + "/" + req.data};
      create.mode = CreateMode::EphemeralSequential;
      connection_->request(create, [this, answer, done = std::move(done)](std::optional<Response> r) mutable {
        if (!r) return answer(done, std::nullopt);
        if (r->header.err != 0) return answer(done, error_reply(error_word(r->header.err)));
        coord::Reply reply;
        reply.path = r->path;
        reply.id = r->stat ? r->stat->czxid : 0;
        czxid_[r->path] = reply.id;
        answer(done, std::move(reply));
      });
      return;
    }
    case coord::Op::GetChildren: {
      Request list{OpCode::GetChildren, req.path};
      list.watch = req.watch;
      connection_->request(list, [this, alive = alive_, generation, req, done = std::move(done)](std::optional<Response> r) mutable {
        if (!*alive || generation != generation_) return;
        if (!r) return done(std::nullopt);
        if (r->header.err != 0) return done(numbered(error_reply(error_word(r->header.err))));
        children(req, *r, std::move(done));
      });
      return;
    }
    case coord::Op::Exists: {
      Request get{OpCode::GetData, req.path};
      get.watch = req.watch;
      connection_->request(get, [answer, done = std::move(done)](std::optional<Response> r) mutable {
        if (!r) return answer(done, std::nullopt);
        answer(done, r->header.err != 0 ? error_reply(error_word(r->header.err)) : coord::Reply{});
      });
      return;
    }
    case coord::Op::Delete:
      connection_->request(Request{OpCode::Delete, req.path}, [answer, done = std::move(done)](std::optional<Response> r) mutable {
        if (!r) return answer(done, std::nullopt);
        answer(done, r->header.err != 0 ? error_reply(error_word(r->header.err)) : coord::Reply{});
      });
      return;
    case coord::Op::CloseSession:
      connection_->request(Request{OpCode::CloseSession}, [this, answer, done = std::move(done)](std::optional<Response> r) mutable {
        if (!r) return answer(done, std::nullopt);
        gone_ = true;  // ZooKeeper.close(): the handle is CLOSED; the server closes the connection
        answer(done, r->header.err != 0 ? error_reply(error_word(r->header.err)) : coord::Reply{});
      });
      return;
    default:
      asio::post(io_, [answer, done = std::move(done)]() mutable { answer(done, error_reply("UNIMPLEMENTED")); });
      return;
  }
}

// The children as the simulator's server lists them: full paths with their
// czxids, in sequence order. A child this client has not seen created is
// looked up (exists, no watch) on the same connection, all at once.
void CoordSession::children(const coord::Request& req, const Response& list, Done done) {
  struct Gather {
    coord::Reply reply;
    std::size_t left = 0;
    bool lost = false;
    Done done;
  };
  auto g = std::make_shared<Gather>();
  g->done = std::move(done);
  std::vector<std::string> names = list.children;
  std::sort(names.begin(), names.end(),
            [](const std::string& a, const std::string& b) { return sequence_of(a) < sequence_of(b); });
  for (const std::string& name : names) g->reply.nodes.push_back({req.path + "/" + name, 0});
  const std::uint64_t generation = generation_;
  auto finish = [this, alive = alive_, generation, g] {
    if (!*alive || generation != generation_ || g->left != 0) return;
    if (g->lost) return g->done(std::nullopt);
    g->done(numbered(std::move(g->reply)));
  };
  for (std::size_t i = 0; i < g->reply.nodes.size(); ++i) {
    coord::Node& n = g->reply.nodes[i];
    if (auto it = czxid_.find(n.path); it != czxid_.end()) {
      n.revision = it->second;
      continue;
    }
    ++g->left;
    connection_->request(Request{OpCode::Exists, n.path}, [this, g, i, finish](std::optional<Response> r) {
      --g->left;
      if (!r) g->lost = true;
      else if (r->header.err == 0 && r->stat) czxid_[g->reply.nodes[i].path] = g->reply.nodes[i].revision = r->stat->czxid;
      finish();
    });
  }
  if (g->left == 0) asio::post(io_, finish);
}

}  // namespace locksim::live::zk
