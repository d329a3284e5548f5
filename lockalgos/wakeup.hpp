// ClientWakeup: sim/wakeup.hpp's Wakeup over ClientEnv, for the algorithms'
// coroutines (an unlock message, a watch notification, a state change).
#pragma once

#include "lockalgos/client.hpp"
#include "sim/wakeup.hpp"

namespace locksim {

using ClientWakeup = Wakeup<ClientEnv>;

}  // namespace locksim
