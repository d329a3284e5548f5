// The line protocol between locksim and an external client's adapter
// (adapters/<library>/): JSON, one object per line, each way. live/README.md
// has the table of messages; this file is its one reader and writer on
// locksim's side.
//
// locksim -> adapter, on the adapter's stdin:
//   job    once, before the run: the library's servers (locksim's proxies),
//          the storage's port, the lock, the client's job keys and the
//          library's options, and where to stop itself (stop_at); the
//          adapter connects to its servers and says it is ready, so that a
//          connection's own handshake (ioredis's INFO, a ZooKeeper session)
//          is not the scenario's first message;
//   round  at the client's start time, then after each round: its drawn
//          durations (the simulator's draws);
//   end    no more rounds: finish, say done, exit.
// adapter -> locksim, on its stdout: one event per line ("ev"), below. A
// line that is not JSON, or names no event this file knows, is a protocol
// error: the run stops with a message naming the client (exit 2).
//
// The adapter's storage requests are JSON lines too, on a TCP connection to
// the storage server (live/external/storage_server.hpp): StorageRequest in,
// StorageReply out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "live/common.hpp"
#include "sim/storage.hpp"
#include "sim/trace.hpp"

namespace locksim::live::external {

// An event the adapter stops itself after (kill(getpid(), SIGSTOP) once its
// line is written): a pause anchored on the client's own event.
struct StopAt {
  std::string event;  // an adapter event name: "read", "acquired", ...
  int occurrence = 1;
};

struct NamedEndpoint {
  std::string name;  // the node's name in the scenario
  Endpoint at;
};

struct JobMessage {
  std::string client;
  std::string library;                 // "redis-py@4.3.4"
  std::vector<NamedEndpoint> servers;  // each node's proxy for this client
  Endpoint storage;
  std::string key;                     // the lock's name as the scenario gives it
  std::optional<std::int64_t> ttl_ms;  // the lock's TTL, if the scenario gives one
  std::string fencing;                 // "none" | "token" | "lock-value"
  std::string job;                     // "read-modify-write" | "hold"
  bool check_before_write = false;
  bool using_routine = false;          // node-redlock: the round runs inside using()
  std::string check;                   // the library's check before the write ("" = none)
  bool fenced_reads = false;           // [storage] fenced_reads: a read presents the token too
  std::int64_t storage_timeout_ms = 0; // 0: wait for the storage as long as it takes
  // The library's own [lock] options, as the scenario writes them: durations
  // in milliseconds ("<key>_ms"), numbers, booleans and strings as they are.
  std::vector<std::pair<std::string, std::string>> options;  // key -> JSON text
  std::vector<StopAt> stop_at;
};

struct RoundMessage {
  std::int64_t think_ms = 0;  // before the round
  std::int64_t work_ms = 0;   // read-modify-write: between the read and the write
  std::int64_t hold_ms = 0;   // hold: how long the lock is kept
};

std::string encode(const JobMessage& m);    // one line, with its newline
std::string encode(const RoundMessage& m);
std::string encode_end();

// What an adapter says, one line each.
enum class AdapterEv : std::uint8_t {
  Hello,          // started, its library loaded: library, version
  Ready,          // connected to the job's servers: the job may start
  Acquiring,
  Acquired,       // value (the lock's value as the library exposes it), token
  AcquireFailed,  // detail
  AttemptFailed,  // one try failed; the library (or the job) tries again
  Claiming,       // fencing = "lock-value": it claims the storage with its lock value
  Read,           // value: the counter read
  Checked,        // the check before the write passed: detail
  Lost,           // the application gives up its work: detail (a check failed, an abort)
  Notified,       // the library told the application something: signal
  Writing,        // value, token
  Wrote,          // value
  WriteRejected,  // detail
  Releasing,
  Released,
  ReleaseFailed,  // detail
  RoundDone,      // ready for the next round (or end)
  Done,           // the job is over; the adapter exits
  Error,          // the adapter cannot go on: detail (the run stops, exit 2)
};

struct AdapterEvent {
  AdapterEv ev = AdapterEv::Hello;
  std::string name;                  // as written ("acquired")
  std::optional<std::int64_t> value;
  std::optional<std::int64_t> token;
  std::string lock_value;            // acquired: the lock's value, if the library shows it
  std::string signal;                // notified: "suspended", "lock-lost", ...
  std::string library, version;      // hello
  std::string missing;               // error: the module the adapter could not load (its library is not installed)
  std::string detail;
};

// Parses one line. Throws Error naming what is wrong (not JSON, no "ev", an
// unknown event, a field of the wrong type).
AdapterEvent parse_event(std::string_view line);
std::string_view adapter_event_name(AdapterEv ev);

// The trace event an adapter event stands for; nullopt for those that are
// the protocol's own (hello, round-done, error).
std::optional<Ev> trace_kind(AdapterEv ev);

// A library's signal (Ev::Notified's value) by the name an adapter gives it:
// "suspended", "reconnected", "session-lost", "lock-lost", "lease-lost".
std::optional<LibrarySignal> library_signal(std::string_view name);

// The storage requests (live/external/storage_server.hpp).
storage::Request parse_storage_request(std::string_view line);  // throws Error
std::string encode_storage_reply(const storage::Reply& r);       // one line, with its newline

// A [lock] option's TOML text as the adapter receives it: ("ttl", "\"2s\"")
// -> ("ttl_ms", "2000"); numbers and booleans as they are; other strings
// quoted. nullopt for a value that is neither (a table, an array).
std::optional<std::pair<std::string, std::string>> option_for_adapter(std::string_view key, std::string_view toml_text);

}  // namespace locksim::live::external
