#include <utility>  // before Asio (Boost 1.74)

#include "live/external/storage_server.hpp"

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <deque>
#include <list>
#include <optional>

#include "live/external/protocol.hpp"

namespace locksim::live::external {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

void note_now(LiveHub& hub, ProcId p, Ev kind, TraceEvent&& e) {
  const Instant now = hub.clock().now();
  e.at = now;
  e.process = p;
  e.kind = kind;
  e.wall = now;
  e.mono = now;
  if (!hub.trace().detailed()) e.detail.clear();
  hub.trace().record(std::move(e));
}

namespace {

// One client connection: lines in, replies out in request order.
struct Connection : std::enable_shared_from_this<Connection> {
  Connection(tcp::socket s, LiveHub& hub, ProcId client, ProcId storage,
             std::function<void(ProcId, const std::string&)> failed)
      : socket(std::move(s)), hub(hub), client(client), storage(storage), failed(std::move(failed)) {}

  // A request and its reply once the storage has given it (in order: the
  // front is written first, when it has one).
  struct Slot {
    std::optional<std::string> reply;
  };

  tcp::socket socket;
  LiveHub& hub;
  ProcId client, storage;
  std::function<void(ProcId, const std::string&)> failed;
  std::array<char, 4096> buffer{};
  std::string partial;
  std::deque<std::shared_ptr<Slot>> slots;
  bool writing = false;
  bool closed = false;

  void read() {
    socket.async_read_some(asio::buffer(buffer), [self = shared_from_this()](const error_code& ec, std::size_t n) {
      if (self->closed) return;
      if (ec) return self->close();
      self->partial.append(self->buffer.data(), n);
      for (std::size_t nl; !self->closed && (nl = self->partial.find('\n')) != std::string::npos;) {
        const std::string line = self->partial.substr(0, nl);
        self->partial.erase(0, nl + 1);
        self->request(line);
      }
      if (!self->closed) self->read();
    });
  }

  void request(const std::string& line) {
    storage::Request req;
    try {
      req = parse_storage_request(line);
    } catch (const Error& e) {
      close();
      failed(client, std::string("its storage request: ") + e.what());
      return;
    }
    const Payload body(req);
    const std::uint64_t id = hub.next_message();
    note_now(hub, client, Ev::Sent,
             {.peer = storage, .value = static_cast<std::int64_t>(id), .content = fingerprint(body),
              .detail = hub.trace().detailed() ? describe(body) : ""});
    auto slot = std::make_shared<Slot>();
    slots.push_back(slot);
    hub.call_storage(client, req, id, [self = shared_from_this(), slot](storage::Reply reply, std::uint64_t reply_id) {
      if (self->closed) return;
      const Payload answer(reply);
      note_now(self->hub, self->client, Ev::Delivered,
               {.peer = self->storage, .value = static_cast<std::int64_t>(reply_id), .content = fingerprint(answer),
                .detail = self->hub.trace().detailed() ? describe(answer) : ""});
      slot->reply = encode_storage_reply(reply);
      self->flush();
    });
  }

  void flush() {
    if (writing || closed || slots.empty() || !slots.front()->reply) return;
    writing = true;
    asio::async_write(socket, asio::buffer(*slots.front()->reply), [self = shared_from_this()](const error_code& ec, std::size_t) {
      self->writing = false;
      if (self->closed) return;
      if (ec) return self->close();
      self->slots.pop_front();
      self->flush();
    });
  }

  void close() {
    if (closed) return;
    closed = true;
    error_code ec;
    socket.close(ec);
  }
};

}  // namespace

struct StorageServer::Listener {
  explicit Listener(asio::io_context& io) : acceptor(io) {}
  tcp::acceptor acceptor;
  std::list<std::weak_ptr<Connection>> connections;
  bool closed = false;
};

namespace {

void accept(const std::shared_ptr<StorageServer::Listener>& l, LiveHub& hub, ProcId client, ProcId storage,
            const std::function<void(ProcId, const std::string&)>& failed) {
  l->acceptor.async_accept([l, &hub, client, storage, failed](const error_code& ec, tcp::socket socket) {
    if (l->closed || ec == asio::error::operation_aborted) return;
    if (!ec) {
      error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      auto c = std::make_shared<Connection>(std::move(socket), hub, client, storage, failed);
      l->connections.remove_if([](const std::weak_ptr<Connection>& w) { return w.expired(); });
      l->connections.push_back(c);
      c->read();
    }
    accept(l, hub, client, storage, failed);
  });
}

}  // namespace

StorageServer::StorageServer(LiveHub& hub, ProcId storage, std::function<void(ProcId, const std::string&)> failed)
    : hub_(hub), storage_(storage), failed_(std::move(failed)) {}

StorageServer::~StorageServer() {
  for (auto& [client, l] : listeners_) {
    l->closed = true;
    error_code ec;
    l->acceptor.close(ec);
    for (auto& w : l->connections)
      if (auto c = w.lock()) c->close();
  }
}

std::uint16_t StorageServer::port_for(ProcId client) {
  auto& l = listeners_[client];
  if (!l) {
    l = std::make_shared<Listener>(hub_.io());
    const tcp::endpoint here(asio::ip::make_address("127.0.0.1"), 0);
    l->acceptor.open(here.protocol());
    l->acceptor.bind(here);
    l->acceptor.listen();
    accept(l, hub_, client, storage_, failed_);
  }
  return l->acceptor.local_endpoint().port();
}

void StorageServer::drop_connections(ProcId client) {
  const auto it = listeners_.find(client);
  if (it == listeners_.end()) return;
  for (auto& w : it->second->connections)
    if (auto c = w.lock()) c->close();
}

}  // namespace locksim::live::external
