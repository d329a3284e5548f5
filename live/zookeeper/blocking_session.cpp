#include <utility>  // before any Asio header (Boost 1.74 with g++ 12)

#include "live/zookeeper/blocking_session.hpp"

#include <boost/asio/io_context.hpp>
#include <chrono>

namespace locksim::live::zk {

bool BlockingSession::turn_until(boost::asio::io_context& io, const std::function<bool()>& done, Duration within) {
  const Deadline deadline(within);
  while (!done()) {
    if (deadline.passed()) return false;
    io.restart();
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(real(deadline.left()));
    io.run_one_for(std::min<std::chrono::microseconds>(left, std::chrono::milliseconds(10)));
  }
  return true;
}

BlockingSession::BlockingSession(boost::asio::io_context& io, const Endpoint& at, Duration session_timeout,
                                 Duration timeout, std::int64_t session_id, const std::string& passwd,
                                 std::int64_t last_zxid)
    : io_(io) {
  ConnectRequest hello;
  hello.timeout_ms = static_cast<std::int32_t>(session_timeout.whole_ms());
  hello.session_id = session_id;
  hello.last_zxid_seen = last_zxid;
  if (session_id != 0) hello.passwd = passwd;
  auto answer = std::make_shared<std::optional<std::optional<ConnectResponse>>>();
  Connection::Handlers h;
  h.connected = [answer](std::optional<ConnectResponse> r) { answer->emplace(std::move(r)); };
  h.event = [events = events_](const WatcherEvent& e) { events->push_back(e); };
  connection_ = Connection::open(io, at, hello, std::move(h));
  if (!turn_until(io, [&] { return answer->has_value(); }, timeout))
    throw Timeout(at.text() + ": no answer to the session handshake in time");
  if (!**answer) throw Error(at.text() + ": the connection ended before the session handshake's answer");
  hello_ = ***answer;
}

Response BlockingSession::request(const Request& r, Duration timeout) {
  auto answer = std::make_shared<std::optional<std::optional<Response>>>();
  connection_->request(r, [answer](std::optional<Response> x) { answer->emplace(std::move(x)); });
  if (!turn_until(io_, [&] { return answer->has_value(); }, timeout))
    throw Timeout("ZooKeeper: no answer to " + describe(r) + " in time");
  if (!**answer) throw Error("ZooKeeper: the connection ended before the answer to " + describe(r));
  return std::move(***answer);
}

bool BlockingSession::ping(Duration timeout) {
  auto answer = std::make_shared<std::optional<bool>>();
  connection_->ping([answer](bool ok) { *answer = ok; });
  if (!turn_until(io_, [&] { return answer->has_value(); }, timeout)) throw Timeout("ZooKeeper: no answer to a ping in time");
  return **answer;
}

Response BlockingSession::close_session(Duration timeout) { return request(Request{OpCode::CloseSession}, timeout); }

std::vector<WatcherEvent> BlockingSession::take_events() { return std::exchange(*events_, {}); }

}  // namespace locksim::live::zk
