// What the kernel's tests share: bare processes whose behaviour a test
// supplies, and instants in milliseconds of true time.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/message.hpp"
#include "sim/world.hpp"

namespace locksim::testing {

// A bare process whose behaviour the test supplies as a coroutine.
struct Probe : Process {
  Probe(World& w, std::string name, ClockSpec clock = {}) : Process(w, std::move(name), ProcessRole::Client, clock) {}
  std::vector<Message> inbox;
  void on_message(Message& m) override { inbox.push_back(m); }
};

// An echo server: answers every Redis request with its own GET reply of the key.
struct Echo : Process {
  Echo(World& w, std::string name) : Process(w, std::move(name), ProcessRole::LockNode, {}) {}
  void on_message(Message& m) override { reply(m, redis::Reply::of(std::get<redis::Request>(m.body).key)); }
};

constexpr Instant at_ms(std::int64_t ms) { return Instant::zero() + Duration::ms(ms); }

}  // namespace locksim::testing
