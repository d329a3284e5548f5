#include "live/etcd/observer.hpp"

#include <utility>  // before Asio (Boost 1.74)

#include <algorithm>
#include <boost/asio.hpp>

#include "live/etcd/gateway.hpp"
#include "live/etcd/http.hpp"

namespace locksim::live::etcd {

namespace asio = boost::asio;
using error_code = boost::system::error_code;

namespace {
// How long a reply may wait for the watch to catch up (a stopped server's).
constexpr Duration kPatience = Duration::s(1);
// A watch that ended while the server runs is opened again after this.
constexpr Duration kRewatch = Duration::ms(100);
}  // namespace

Observer::Observer(asio::io_context& io, Endpoint server, Note note, bool detailed)
    : io_(io), server_(std::move(server)), note_(std::move(note)), detailed_(detailed) {}

Observer::~Observer() {
  if (stream_) stream_->close();
  if (rewatch_) static_cast<asio::steady_timer*>(rewatch_.get())->cancel();
  for (Waiter& w : waiters_) static_cast<asio::steady_timer*>(w.patience.get())->cancel();
}

void Observer::start(std::int64_t revision) {
  seen_ = revision;
  watch();
}

void Observer::watch() {
  if (stream_) stream_->close();
  created_ = false;
  stream_ = HttpConnection::open(io_, server_);
  std::weak_ptr<HttpConnection> mine = stream_;
  stream_->stream(watch_all(seen_ + 1), [this](std::string_view line) { on_message(line); },
                  [this, mine] {
                    if (down_ || mine.lock() != stream_) return;
                    auto timer = std::make_shared<asio::steady_timer>(io_, real(kRewatch));
                    rewatch_ = timer;
                    timer->async_wait([this, mine](const error_code& ec) {
                      if (!ec && !down_ && mine.lock() == stream_) watch();
                    });
                  });
}

void Observer::crashed() {
  down_ = true;
  if (stream_) stream_->close();
}

void Observer::restarted() {
  down_ = false;
  watch();
}

void Observer::on_message(std::string_view line) {
  WatchMessage m;
  try {
    m = watch_message_of(line);
  } catch (const Error&) {
    return watch();  // the stream failed: watch again from the last revision seen
  }
  if (!created_) {
    created_ = m.created;
    if (!m.created) return watch();
  }
  if (m.canceled) return watch();
  for (const WatchEvent& ev : m.events) {
    if (ev.mod_revision <= seen_) continue;  // seen before the watch was opened again
    if (ev.deleted) {
      deleted(ev.key, ev.lease);
    } else {
      keys_[ev.key] = {ev.create_revision, ev.lease};
      note_holders(ev.key);
    }
  }
  for (const WatchEvent& ev : m.events) seen_ = std::max(seen_, ev.mod_revision);
  release_waiters();
}

ProcId Observer::owner_of(std::int64_t lease) const {
  const auto it = leases_.find(lease);
  return it == leases_.end() ? kNoProc : it->second;
}

// sim/etcd_server.cpp's delete_key: by a client's DeleteKey, or with its lease.
void Observer::deleted(const std::string& key, std::int64_t lease) {
  const auto it = keys_.find(key);
  if (it == keys_.end()) return;  // not a key a client made
  const ProcId owner = owner_of(lease ? lease : it->second.lease);
  if (const auto d = deleting_.find(key); d != deleting_.end()) {
    note_(Ev::KeyDeleted, {.peer = d->second, .owner = owner, .key = key});
    deleting_.erase(d);
  } else if (const auto r = revoking_.find(lease ? lease : it->second.lease); r != revoking_.end()) {
    note_(Ev::KeyDeleted, {.peer = r->second, .owner = owner, .key = key});
  } else {
    note_(Ev::Expired, {.owner = owner, .key = key, .detail = "because its lease expired: no keepalive for its TTL"});
  }
  keys_.erase(it);
  note_holders(key);
}

// sim/etcd_server.cpp's note_holders: the owner of the first-created key under each lock prefix over `key`.
void Observer::note_holders(const std::string& key) {
  for (auto& [prefix, stated] : holders_) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string* first_key = nullptr;
    const Key* first = nullptr;
    for (auto k = keys_.lower_bound(prefix); k != keys_.end() && k->first.rfind(prefix, 0) == 0; ++k)
      if (!first || k->second.create_revision < first->create_revision) {
        first = &k->second;
        first_key = &k->first;
      }
    const ProcId now = first ? owner_of(first->lease) : kNoProc;
    if (now == stated) continue;
    stated = now;
    std::string why;
    if (detailed_) why = first ? "its first-created key is " + *first_key : "it has no key left";
    note_(Ev::Holder, {.owner = now, .key = prefix, .detail = std::move(why)});
  }
}

void Observer::sent(ProcId client, const coord::Request& req) {
  if (req.op == coord::Op::PutIfAbsent) holders_.try_emplace(req.data, kNoProc);  // a lock from now on
  if (req.op == coord::Op::DeleteKey) deleting_.emplace(req.path, client);
}

void Observer::answered(ProcId client, const coord::Request& req, const coord::Reply& reply) {
  if (req.op == coord::Op::LeaseGrant && reply.ok) leases_[reply.id] = client;
  // A delete that deleted nothing: no event will take its place in deleting_.
  if (req.op == coord::Op::DeleteKey && reply.ok && reply.id == 0) {
    for (auto [it, end] = deleting_.equal_range(req.path); it != end; ++it)
      if (it->second == client) {
        deleting_.erase(it);
        break;
      }
  }
}

void Observer::after_revision(std::int64_t revision, std::function<void()> f) {
  if (revision <= seen_) return asio::post(io_, std::move(f));
  auto timer = std::make_shared<asio::steady_timer>(io_, real(kPatience));
  timer->async_wait([this, raw = timer.get()](const error_code& ec) {
    if (ec) return;
    auto it = std::find_if(waiters_.begin(), waiters_.end(), [&](const Waiter& w) { return w.patience.get() == raw; });
    if (it == waiters_.end()) return;
    std::function<void()> f = std::move(it->f);
    waiters_.erase(it);
    f();
  });
  waiters_.push_back({revision, std::move(f), std::move(timer)});
}

void Observer::release_waiters() {
  std::vector<std::function<void()>> due;
  std::erase_if(waiters_, [&](Waiter& w) {
    if (w.revision > seen_) return false;
    static_cast<asio::steady_timer*>(w.patience.get())->cancel();
    due.push_back(std::move(w.f));
    return true;
  });
  for (auto& f : due) f();
}

}  // namespace locksim::live::etcd
