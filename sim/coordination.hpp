// The coordination services' servers: ZooKeeperServer and EtcdServer over
// CoordinationServer. Kept so that the includes of this header still
// compile; new code includes sim/zookeeper_server.hpp or sim/etcd_server.hpp.
#pragma once

#include "sim/etcd_server.hpp"
#include "sim/zookeeper_server.hpp"
