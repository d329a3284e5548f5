#include "sim/storage.hpp"

namespace locksim {

namespace {

std::string_view fencing_words(Fencing fencing, bool fenced_reads) {
  switch (fencing) {
    case Fencing::Token:
      return fenced_reads ? "fencing: rejects tokens lower than the highest seen, on reads and writes"
                          : "fencing: rejects tokens lower than the highest seen";
    case Fencing::LockValue: return "fencing: check-and-set on the claimed owner";
    case Fencing::None: break;
  }
  return "no fencing";
}

}  // namespace

StorageRules::StorageRules(std::int64_t initial, Fencing fencing, bool fenced_reads)
    : fencing_(fencing), fenced_reads_(fenced_reads && fencing == Fencing::Token), counter_(initial) {}

StorageRules::Served StorageRules::serve(const storage::Request& req, ProcId from) {
  if (req.op == storage::Request::Op::Claim) {  // the last claim wins: no check at all
    owner_ = req.owner;
    return {{true, counter_, {}}, Ev::Command, {.peer = from, .content = fnv1a64(describe(req)), .detail = describe(req)}};
  }
  if (req.op == storage::Request::Op::Read) return read(req, from);
  return write(req, from);
}

std::string StorageRules::token_refusal(std::int64_t token) const {
  if (token < 0) return "no fencing token";
  if (token < highest_token_)
    return "token " + std::to_string(token) + " is lower than " + std::to_string(highest_token_) + ", the highest seen";
  return {};
}

StorageRules::Served StorageRules::read(const storage::Request& req, ProcId from) {
  if (fenced_reads_) {
    // The read presents its token like a write; once accepted it counts as
    // seen, so an older holder's write after this read is refused (K9).
    std::string why = token_refusal(req.token);
    if (!why.empty())
      return {{false, counter_, why}, Ev::StorageReject, {.peer = from, .token = req.token, .key = "read", .detail = why}};
    highest_token_ = req.token;
  }
  return {{true, counter_, {}}, Ev::StorageRead, {.peer = from, .value = counter_, .token = fenced_reads_ ? req.token : -1}};
}

StorageRules::Served StorageRules::write(const storage::Request& req, ProcId from) {
  if (fencing_ == Fencing::Token) {
    std::string why = token_refusal(req.token);
    if (!why.empty())
      return {{false, counter_, why}, Ev::StorageReject, {.peer = from, .value = req.value, .token = req.token, .detail = why}};
    highest_token_ = req.token;  // a write's token: later writes below it are refused
  }
  if (fencing_ == Fencing::LockValue && req.owner != owner_) {
    std::string why = "the owner is " + (owner_.empty() ? std::string("nobody") : owner_.substr(0, 8) + "…") +
                      ", not " + req.owner.substr(0, 8) + "…";
    return {{false, counter_, why}, Ev::StorageReject, {.peer = from, .value = req.value, .detail = why}};
  }
  counter_ = req.value;
  return {{true, counter_, {}}, Ev::StorageWrite, {.peer = from, .value = req.value, .token = req.token}};
}

Storage::Storage(World& world, std::string name, const ClockSpec& clock, std::int64_t initial,
                 Fencing fencing, bool fenced_reads)
    : Process(world, std::move(name), ProcessRole::Storage, clock), rules_(initial, fencing, fenced_reads) {
  note(Ev::Started, {.value = initial, .detail = std::string(fencing_words(fencing, rules_.fenced_reads()))});
}

void Storage::on_message(Message& m) {
  const auto* req = std::get_if<storage::Request>(&m.body);
  if (!req) {
    Process::on_message(m);
    return;
  }
  StorageRules::Served served = rules_.serve(*req, m.from);
  note(served.kind, std::move(served.fields));
  reply(m, std::move(served.reply));
}

}  // namespace locksim
