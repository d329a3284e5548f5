#include "sim/protocol/storage.hpp"

namespace locksim {

namespace storage {

std::string describe(const Request& r) {
  if (r.op == Request::Op::Read) return r.token >= 0 ? "READ counter token=" + std::to_string(r.token) : "READ counter";
  if (r.op == Request::Op::Claim) return "CLAIM owner=" + r.owner;
  std::string s = "WRITE counter=" + std::to_string(r.value);
  if (r.token >= 0) s += " token=" + std::to_string(r.token);
  if (!r.owner.empty()) s += " if owner=" + r.owner;
  return s;
}

std::string describe(const Reply& r) {
  if (!r.accepted) return "REJECTED (" + r.reason + ")";
  return "OK counter=" + std::to_string(r.value);
}

}  // namespace storage

}  // namespace locksim
