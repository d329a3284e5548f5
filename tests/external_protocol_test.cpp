// The external clients' line protocol (live/external/protocol.hpp) and the
// live side of the library table (live/external/adapters.hpp): what locksim
// accepts from an adapter, what it refuses, and what it tells one.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "live/external/adapters.hpp"
#include "live/external/protocol.hpp"
#include "lockalgos/libraries.hpp"

namespace external_protocol_test {

using namespace locksim;
using namespace locksim::live::external;
using json = nlohmann::json;

namespace {

std::string refusal(std::string_view line) {
  try {
    parse_event(line);
  } catch (const locksim::live::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an adapter's event lines are read with their fields") {
  const AdapterEvent acquired = parse_event(R"({"ev": "acquired", "lock_value": "ab12", "token": 42})");
  CHECK(acquired.ev == AdapterEv::Acquired);
  CHECK(acquired.lock_value == "ab12");
  CHECK(acquired.token == 42);
  CHECK(trace_kind(acquired.ev) == Ev::Acquired);

  const AdapterEvent read = parse_event(R"({"ev":"read","value":7})");
  CHECK(read.value == 7);
  CHECK(trace_kind(read.ev) == Ev::Read);

  const AdapterEvent notified = parse_event(R"({"ev":"notified","signal":"suspended","detail":"connection lost"})");
  CHECK(notified.ev == AdapterEv::Notified);
  CHECK(library_signal(notified.signal) == LibrarySignal::Suspended);
  CHECK(library_signal("lock-lost") == LibrarySignal::LockLost);
  CHECK(!library_signal("aborted"));

  const AdapterEvent hello = parse_event(R"({"ev":"hello","library":"redis","version":"4.3.4"})");
  CHECK(hello.version == "4.3.4");
  CHECK(!trace_kind(hello.ev));
  CHECK(parse_event(R"({"ev":"done"})").ev == AdapterEv::Done);
  CHECK(trace_kind(AdapterEv::Done) == Ev::JobDone);
  CHECK(parse_event(R"({"ev":"error","missing":"kazoo","detail":"No module named 'kazoo'"})").missing == "kazoo");
  CHECK(parse_event(R"({"ev":"acquired","token":null})").token == std::nullopt);
}

TEST_CASE("every adapter event that stands for a trace event has the trace's name, so faults anchor on it") {
  for (AdapterEv ev : {AdapterEv::Acquiring, AdapterEv::Acquired, AdapterEv::AcquireFailed, AdapterEv::AttemptFailed,
                       AdapterEv::Claiming, AdapterEv::Read, AdapterEv::Checked, AdapterEv::Lost, AdapterEv::Writing,
                       AdapterEv::Wrote, AdapterEv::WriteRejected, AdapterEv::Releasing, AdapterEv::Released,
                       AdapterEv::ReleaseFailed, AdapterEv::Done, AdapterEv::Notified}) {
    CAPTURE(adapter_event_name(ev));
    REQUIRE(trace_kind(ev));
    CHECK(event_name(*trace_kind(ev)) == adapter_event_name(ev));
  }
}

TEST_CASE("a line that is not the protocol is refused with what is wrong") {
  CHECK(refusal("acquired the lock!").find("not a JSON object") != std::string::npos);
  CHECK(refusal("[1, 2]").find("not a JSON object") != std::string::npos);
  CHECK(refusal(R"({"value": 3})").find("no \"ev\"") != std::string::npos);
  CHECK(refusal(R"({"ev": "grabbed"})").find("unknown event \"grabbed\"") != std::string::npos);
  CHECK(refusal(R"({"ev": "read", "value": "7"})").find("\"value\" is not an integer") != std::string::npos);
  CHECK(refusal(R"({"ev": "acquired", "token": 1.5})").find("\"token\" is not an integer") != std::string::npos);
  CHECK(refusal(R"({"ev": "notified"})").find("without a \"signal\"") != std::string::npos);
  CHECK(refusal(R"({"ev": "hello", "library": "redis"})").find("without its \"library\" and \"version\"") != std::string::npos);
  CHECK(refusal(R"({"ev": "acquired", "lock_value": 5})").find("\"lock_value\" is not a string") != std::string::npos);
}

TEST_CASE("the job message tells the adapter everything it needs, as JSON") {
  JobMessage m;
  m.client = "client1";
  m.library = "redis-py@4.3.4";
  m.servers = {{"redis1", {"127.0.0.1", 4001}}, {"redis2", {"127.0.0.1", 4002}}};
  m.storage = {"127.0.0.1", 5000};
  m.key = "lock";
  m.ttl_ms = 2000;
  m.fencing = "none";
  m.job = "read-modify-write";
  m.check = "owned";
  m.options = {{"blocking_timeout_ms", "1500"}, {"flag", "true"}};
  m.stop_at = {{"read", 1}, {"acquired", 2}};
  const std::string line = encode(m);
  REQUIRE(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);
  const json j = json::parse(line);
  CHECK(j["msg"] == "job");
  CHECK(j["servers"][1]["name"] == "redis2");
  CHECK(j["servers"][1]["port"] == 4002);
  CHECK(j["storage"]["port"] == 5000);
  CHECK(j["ttl_ms"] == 2000);
  CHECK(j["check"] == "owned");
  CHECK(j["options"]["blocking_timeout_ms"] == 1500);
  CHECK(j["options"]["flag"] == true);
  CHECK(j["stop_at"][1]["event"] == "acquired");
  CHECK(j["stop_at"][1]["occurrence"] == 2);
  m.ttl_ms.reset();
  CHECK(json::parse(encode(m))["ttl_ms"].is_null());

  const json round = json::parse(encode(RoundMessage{.think_ms = 5, .work_ms = 1000, .hold_ms = 0}));
  CHECK(round["msg"] == "round");
  CHECK(round["work_ms"] == 1000);
  CHECK(json::parse(encode_end())["msg"] == "end");
}

TEST_CASE("a job that leaves a field out says its default: no fenced reads, no check, storage waited for ever, the first occurrence") {
  JobMessage m;
  m.stop_at = {StopAt{.event = "read"}};
  const json j = json::parse(encode(m));
  CHECK(j["fenced_reads"] == false);
  CHECK(j["check_before_write"] == false);
  CHECK(j["storage_timeout_ms"] == 0);  // live/README.md's job table: 0 waits for ever
  CHECK(j["ttl_ms"].is_null());
  CHECK(j["stop_at"][0]["occurrence"] == 1);  // as a fault's on_occurrence defaults to 1
}

TEST_CASE("a lock option reaches the adapter as a number of milliseconds, a number, a boolean or a string") {
  CHECK(option_for_adapter("acquire_timeout", "\"1.5s\"") == std::pair<std::string, std::string>{"acquire_timeout_ms", "1500"});
  CHECK(option_for_adapter("retry_count", "3") == std::pair<std::string, std::string>{"retry_count", "3"});
  CHECK(option_for_adapter("retry_count", "\"forever\"") == std::pair<std::string, std::string>{"retry_count", "\"forever\""});
  CHECK(option_for_adapter("drift_factor", "0.01") == std::pair<std::string, std::string>{"drift_factor", "0.01"});
  CHECK(option_for_adapter("using", "true") == std::pair<std::string, std::string>{"using", "true"});
  CHECK(!option_for_adapter("groups", "{ a = 1 }"));
}

TEST_CASE("the storage's requests are read strictly, and its replies are one line") {
  const storage::Request read = parse_storage_request(R"({"op":"read","token":5})");
  CHECK(read.op == storage::Request::Op::Read);
  CHECK(read.token == 5);
  const storage::Request write = parse_storage_request(R"({"op":"write","value":4})");
  CHECK(write.op == storage::Request::Op::Write);
  CHECK(write.value == 4);
  CHECK(write.token == -1);
  const storage::Request claim = parse_storage_request(R"({"op":"claim","owner":"v1"})");
  CHECK(claim.op == storage::Request::Op::Claim);
  CHECK(claim.owner == "v1");
  CHECK_THROWS_WITH_AS(parse_storage_request(R"({"op":"erase"})"), doctest::Contains("unknown storage op"), locksim::live::Error);
  CHECK_THROWS_WITH_AS(parse_storage_request(R"({"op":"write"})"), doctest::Contains("without its \"value\""), locksim::live::Error);
  CHECK_THROWS_WITH_AS(parse_storage_request(R"({"op":"read","token":-7})"), doctest::Contains("token -7"), locksim::live::Error);
  CHECK_THROWS_AS(parse_storage_request("read 5"), locksim::live::Error);

  const std::string reply = encode_storage_reply({false, 7, "token 3 is lower than 5, the highest seen"});
  CHECK(reply.find('\n') == reply.size() - 1);
  const json j = json::parse(reply);
  CHECK(j["ok"] == false);
  CHECK(j["value"] == 7);
  CHECK(j["reason"] == "token 3 is lower than 5, the highest seen");
  CHECK(!json::parse(encode_storage_reply({true, 8, ""})).contains("reason"));
}

TEST_CASE("every adapter runs a library of the library table, from a folder that exists") {
  for (const AdapterInfo& a : adapters()) {
    CAPTURE(a.library);
    CHECK(find_library(a.library) != nullptr);
    CHECK(std::filesystem::is_regular_file(std::filesystem::path(LOCKSIM_SOURCE_DIR) / "adapters" / a.folder / a.program));
    CHECK(find_adapter(a.library) == &a);
  }
  CHECK(find_adapter("redis-py@4.5.0") == nullptr);
  CHECK(server_key(*find_adapter("redis-semaphore@5.8.0"), "lock") == "mutex:lock");
  CHECK(server_key(*find_adapter("redis-py@4.3.4"), "lock") == "lock");
  const Command py = adapter_command(*find_adapter("redis-py@4.3.4"));
  CHECK(py.exe == "/usr/bin/python3");  // Debian's, never a pyenv's
  CHECK(py.args.at(0) == "-I");
}

}  // namespace external_protocol_test
