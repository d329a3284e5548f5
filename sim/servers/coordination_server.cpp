#include "sim/servers/coordination_server.hpp"

namespace locksim {

CoordinationServer::CoordinationServer(World& world, std::string name, const ClockSpec& clock)
    : Process(world, std::move(name), ProcessRole::LockNode, clock) {}

void CoordinationServer::on_message(Message& m) {
  const auto* req = std::get_if<coord::Request>(&m.body);
  if (!req) {
    Process::on_message(m);
    return;
  }
  current_ = &m;
  held_ = false;
  coord::Reply r = handle(*req, m.from);
  current_ = nullptr;
  if (!held_) answer(m, *req, std::move(r));
}

CoordinationServer::Held CoordinationServer::hold() {
  held_ = true;
  return Held{*current_, std::get<coord::Request>(current_->body)};
}

void CoordinationServer::answer(const Held& held, coord::Reply r) { answer(held.request, held.req, std::move(r)); }

void CoordinationServer::answer(const Message& m, const coord::Request& req, coord::Reply r) {
  r.seq = ++stream_[m.from];
  // Record the command with its answer.
  std::string detail = describe(req) + " -> " + describe(r);
  const std::uint64_t content = fnv1a64(detail);
  note(Ev::Command, {.peer = m.from, .key = req.path, .content = content, .detail = std::move(detail)});
  reply(m, std::move(r));
}

void CoordinationServer::notify(ProcId to, const std::string& path, const char* what) {
  coord::Notify n{path, what};
  n.seq = ++stream_[to];
  send(to, std::move(n));
}

coord::Reply CoordinationServer::error(std::string what) {
  coord::Reply r;
  r.ok = false;
  r.error = std::move(what);
  return r;
}

}  // namespace locksim
