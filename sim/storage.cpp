#include "sim/storage.hpp"

namespace locksim {

Storage::Storage(World& world, std::string name, const ClockSpec& clock, std::int64_t initial,
                 StorageFencing fencing)
    : Process(world, std::move(name), ProcessRole::Storage, clock), fencing_(fencing), counter_(initial) {
  note(Ev::Started, {.value = initial,
                     .detail = fencing == StorageFencing::Token       ? "fencing: rejects tokens lower than the highest seen"
                               : fencing == StorageFencing::LockValue ? "fencing: check-and-set on the claimed owner"
                                                                      : "no fencing"});
}

void Storage::on_message(Message& m) {
  const auto* req = std::get_if<storage::Request>(&m.body);
  if (!req) {
    Process::on_message(m);
    return;
  }
  if (req->op == storage::Request::Op::Claim) {  // the last claim wins: no check at all
    owner_ = req->owner;
    note(Ev::Command, {.peer = m.from, .content = fnv1a64(describe(*req)), .detail = describe(*req)});
    reply(m, storage::Reply{true, counter_, {}});
    return;
  }
  if (req->op == storage::Request::Op::Read) {
    note(Ev::StorageRead, {.peer = m.from, .value = counter_});
    reply(m, storage::Reply{true, counter_, {}});
    return;
  }
  reply(m, write(*req, m.from));
}

storage::Reply Storage::write(const storage::Request& req, ProcId from) {
  if (fencing_ == StorageFencing::Token) {
    std::string why;
    if (req.token < 0) why = "no fencing token";
    else if (req.token < highest_token_)
      why = "token " + std::to_string(req.token) + " is lower than " + std::to_string(highest_token_) +
            ", the highest seen";
    if (!why.empty()) {
      note(Ev::StorageReject, {.peer = from, .value = req.value, .token = req.token, .detail = why});
      return {false, counter_, why};
    }
    highest_token_ = req.token;
  }
  if (fencing_ == StorageFencing::LockValue && req.owner != owner_) {
    const std::string why = "the owner is " + (owner_.empty() ? std::string("nobody") : owner_.substr(0, 8) + "…") +
                            ", not " + req.owner.substr(0, 8) + "…";
    note(Ev::StorageReject, {.peer = from, .value = req.value, .detail = why});
    return {false, counter_, why};
  }
  counter_ = req.value;
  note(Ev::StorageWrite, {.peer = from, .value = req.value, .token = req.token});
  return {true, counter_, {}};
}

}  // namespace locksim
