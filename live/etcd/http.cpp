#include "live/etcd/http.hpp"

#include <utility>  // before Asio (Boost 1.74)

#include <boost/asio.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <string>

namespace locksim::live::etcd {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;
using error_code = boost::system::error_code;

namespace {

class Connection final : public HttpConnection, public std::enable_shared_from_this<Connection> {
 public:
  Connection(asio::io_context& io, Endpoint to) : socket_(io), to_(std::move(to)) {}

  void connect() {
    const tcp::endpoint at(asio::ip::make_address_v4(to_.host), to_.port);
    socket_.async_connect(at, [self = shared_from_this()](const error_code& ec) {
      if (self->closed_) return;
      if (ec) return self->fail(ec);
      self->connected_ = true;
      error_code ignored;
      self->socket_.set_option(tcp::no_delay(true), ignored);
      if (self->request_) self->write();
    });
  }

  void post(const HttpCall& call, Done done) override {
    begin(call);
    done_ = std::move(done);
  }

  void stream(const HttpCall& call, OnLine on_line, OnEnd on_end) override {
    begin(call);
    on_line_ = std::move(on_line);
    on_end_ = std::move(on_end);
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    done_ = nullptr;
    on_line_ = nullptr;
    on_end_ = nullptr;
    error_code ec;
    socket_.close(ec);
  }

  bool idle() const override { return !closed_ && !request_; }
  std::string error() const override { return error_; }
  bool closed() const override { return closed_; }

 private:
  void begin(const HttpCall& call) {
    if (!idle()) throw Error("etcd: an HTTP connection carries one exchange at a time");
    request_.emplace(http::verb::post, call.target, 11);
    request_->set(http::field::host, to_.text());
    request_->set(http::field::content_type, "application/json");
    request_->keep_alive(true);
    request_->body() = call.body;
    request_->prepare_payload();
    parser_.emplace();
    parser_->body_limit(64 * 1024 * 1024);
    if (call.stream) {
      // Each chunk as it comes, not kept in the body: the stream may last the whole run.
      chunk_ = [this](std::uint64_t, boost::beast::string_view data, error_code&) {
        take(std::string_view(data.data(), data.size()));
        return data.size();
      };
      parser_->on_chunk_body(chunk_);  // the parser keeps a reference
    }
    if (connected_) write();
  }

  void write() {
    http::async_write(socket_, *request_, [self = shared_from_this()](const error_code& ec, std::size_t) {
      if (self->closed_) return;
      if (ec) return self->fail(ec);
      if (self->on_line_) self->read_header();
      else self->read_whole();
    });
  }

  void read_whole() {
    http::async_read(socket_, buffer_, *parser_, [self = shared_from_this()](const error_code& ec, std::size_t) {
      if (self->closed_) return;
      if (ec) return self->fail(ec);
      http::response<http::string_body> res = self->parser_->release();
      const bool keep = res.keep_alive();
      Done done = std::exchange(self->done_, nullptr);
      self->request_.reset();
      self->parser_.reset();
      if (!keep) self->close();
      if (done) done(HttpResponse{res.result_int(), std::move(res.body())});
    });
  }

  void read_header() {
    http::async_read_header(socket_, buffer_, *parser_, [self = shared_from_this()](const error_code& ec, std::size_t) {
      if (self->closed_) return;
      if (ec) return self->fail(ec);
      self->read_stream();
    });
  }

  void read_stream() {
    http::async_read_some(socket_, buffer_, *parser_, [self = shared_from_this()](const error_code& ec, std::size_t) {
      if (self->closed_) return;
      // An answer that is not chunked (an error, with its length) lands in the body.
      std::string& body = self->parser_->get().body();
      if (!body.empty()) self->take(std::exchange(body, {}));
      if (self->closed_) return;
      if (ec || self->parser_->is_done()) return self->fail(ec);
      self->read_stream();
    });
  }

  // Bytes of a stream's answer: each whole line goes out. The callback may
  // close the connection, which drops on_line_: it runs from a copy.
  void take(std::string_view data) {
    pending_ += data;
    const OnLine on_line = on_line_;
    for (std::size_t nl; !closed_ && (nl = pending_.find('\n')) != std::string::npos;) {
      const std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      if (!line.empty() && on_line) on_line(line);
    }
  }

  // The exchange ends without an answer (or a stream ends): the connection goes.
  void fail(const error_code& ec) {
    if (error_.empty()) error_ = ec ? ec.message() : "the stream ended";
    const OnLine on_line = on_line_;
    if (!pending_.empty() && on_line) on_line(std::exchange(pending_, {}));  // a last line without its newline
    if (closed_) return;  // that line's callback closed it: nothing more to tell
    Done done = std::exchange(done_, nullptr);
    OnEnd on_end = std::exchange(on_end_, nullptr);
    close();
    if (done) done(std::nullopt);
    if (on_end) on_end();
  }

  tcp::socket socket_;
  Endpoint to_;
  bool connected_ = false, closed_ = false;
  std::optional<http::request<http::string_body>> request_;
  std::optional<http::response_parser<http::string_body>> parser_;
  boost::beast::flat_buffer buffer_;
  std::function<std::size_t(std::uint64_t, boost::beast::string_view, error_code&)> chunk_;
  std::string pending_;
  std::string error_;  // why it failed
  Done done_;
  OnLine on_line_;
  OnEnd on_end_;
};

// The length of the line at `from` with its CRLF, or nullopt while it is not all there.
std::optional<std::size_t> line_length(std::string_view s, std::size_t from = 0) {
  const std::size_t end = s.find("\r\n", from);
  if (end == std::string_view::npos) return std::nullopt;
  return end + 2 - from;
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
std::size_t hex_value(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A chunk: its size line, its data and its CRLF; the last (size 0) up to the blank line after its trailers.
std::optional<std::size_t> chunk_length(std::string_view s) {
  const auto size_line = line_length(s);
  if (!size_line) return std::nullopt;
  std::size_t size = 0;
  for (std::size_t i = 0; i < *size_line - 2 && is_hex(s[i]); ++i) {
    size = size * 16 + hex_value(s[i]);
    if (size > (std::size_t{1} << 32)) throw Error("an HTTP chunk of over 4 GB");
  }
  if (size == 0) {  // trailers, then a blank line
    const std::size_t end = s.find("\r\n\r\n", *size_line - 2);
    if (end == std::string_view::npos) return std::nullopt;
    return end + 4;
  }
  if (s.size() < *size_line + size + 2) return std::nullopt;
  if (s.compare(*size_line + size, 2, "\r\n") != 0) throw Error("an HTTP chunk without its CRLF");
  return *size_line + size + 2;
}

// A head and the body its Content-Length gives; a chunked message's head alone.
std::optional<std::size_t> head_length(std::string_view s) {
  const std::size_t end = s.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (s.size() > 64 * 1024) throw Error("an HTTP head of over 64 KiB");
    return std::nullopt;
  }
  const std::size_t head = end + 4;
  const std::string fields = lower(s.substr(0, head));
  if (fields.find("\r\ntransfer-encoding: chunked\r\n") != std::string::npos) return head;
  const std::size_t at = fields.find("\r\ncontent-length:");
  if (at == std::string::npos) return head;
  const std::size_t length = std::stoull(fields.substr(at + 17));
  if (s.size() < head + length) return std::nullopt;
  return head + length;
}

}  // namespace

Framing http_framing() {
  return [](std::string_view pending) -> std::optional<std::size_t> {
    // A chunk's size line is hex digits then ';' or CR; a head's first word
    // (a method, "HTTP/1.1") is not, though it may begin with hex letters ("DELETE").
    std::size_t digits = 0;
    while (digits < pending.size() && is_hex(pending[digits])) ++digits;
    if (digits == pending.size()) return std::nullopt;  // either, so far
    if (digits > 0 && (pending[digits] == '\r' || pending[digits] == ';')) return chunk_length(pending);
    if (!std::isalpha(static_cast<unsigned char>(pending[0]))) throw Error("not HTTP/1.1");
    return head_length(pending);
  };
}

std::shared_ptr<HttpConnection> HttpConnection::open(asio::io_context& io, const Endpoint& to) {
  auto c = std::make_shared<Connection>(io, to);
  c->connect();
  return c;
}

std::optional<HttpResponse> post(const Endpoint& to, const HttpCall& call, Duration timeout) {
  asio::io_context io;
  std::optional<HttpResponse> out;
  bool answered = false;
  const std::shared_ptr<HttpConnection> c = HttpConnection::open(io, to);
  c->post(call, [&](std::optional<HttpResponse> r) {
    out = std::move(r);
    answered = true;
  });
  const Deadline deadline(timeout);
  while (!answered && !deadline.passed()) {
    io.restart();
    io.run_for(real(min(deadline.left(), Duration::ms(50))));
  }
  c->close();
  return answered ? out : std::nullopt;
}

}  // namespace locksim::live::etcd
