// HTTP/1.1 to etcd's gateway over Boost.Beast: one connection, on the
// caller's io_context and thread (it starts none).
//
// A connection carries one exchange at a time: a POST answered whole, after
// which it carries the next (Go's server keeps connections alive); or a
// stream (a watch), whose answer is one JSON message per line for as long as
// the connection stays open. A connection that fails, or is closed, fails
// its exchange: the caller opens another.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "live/common.hpp"
#include "live/etcd/gateway.hpp"
#include "live/proxy.hpp"

namespace boost::asio {
class io_context;
}

namespace locksim::live::etcd {

struct HttpResponse {
  unsigned status = 0;
  std::string body;
};

class HttpConnection {
 public:
  // nullopt: the connection failed (refused, reset, closed) before the answer was whole.
  using Done = std::function<void(std::optional<HttpResponse>)>;
  // One line of a stream's answer (without its newline); then on_end once
  // when the stream ends (the connection closed or failed).
  using OnLine = std::function<void(std::string_view line)>;
  using OnEnd = std::function<void()>;

  // Connects to `to` (asynchronously: an exchange asked for meanwhile waits).
  static std::shared_ptr<HttpConnection> open(boost::asio::io_context& io, const Endpoint& to);
  virtual ~HttpConnection() = default;

  // REQUIRES: idle(). `done` runs later, never from inside this call.
  virtual void post(const HttpCall& call, Done done) = 0;
  virtual void stream(const HttpCall& call, OnLine on_line, OnEnd on_end) = 0;
  // Closes the socket; no callback of it runs after this.
  virtual void close() = 0;
  virtual bool idle() const = 0;    // open and carrying no exchange
  virtual bool closed() const = 0;
  // Why it failed ("" if it has not): the socket's error, or the stream's end.
  virtual std::string error() const = 0;
};

// HTTP/1.1 as the proxy's messages (live/proxy.hpp): a request or response
// with its body (Content-Length) is one message; a chunked one is its head,
// then each chunk, then the last (empty) chunk, so that each of a watch's
// events, or a keepalive's answer, can be held or dropped alone. Without
// state of its own (a proxy shares it among its connections): at a message's
// start, a head begins with a letter (a method, "HTTP/") and a chunk with a
// hex digit. Anything else is not HTTP: Error, and the proxy closes the link.
Framing http_framing();

// One POST on a connection of its own, waited for (the supervisor's checks,
// the differential test, tests). nullopt: refused, failed, or not answered
// within `timeout`.
std::optional<HttpResponse> post(const Endpoint& to, const HttpCall& call, Duration timeout);

}  // namespace locksim::live::etcd
