#include "lockalgos/config.hpp"

namespace locksim {

std::string_view fencing_name(Fencing f) {
  switch (f) {
    case Fencing::None: return "none";
    case Fencing::Token: return "token";
    case Fencing::LockValue: return "lock-value";
  }
  return "?";
}

}  // namespace locksim
