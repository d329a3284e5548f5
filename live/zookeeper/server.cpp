#include "live/zookeeper/server.hpp"

#include <unistd.h>

#include <fstream>

#include "live/blocking_client.hpp"

namespace locksim::live::zk {

namespace fs = std::filesystem;

void check_installed() {
  for (const char* jar : {kZooKeeperJar, kLoggerJar})
    if (::access(jar, R_OK) != 0)
      throw Error(std::string(jar) + " is missing (Debian: apt-get install zookeeper libslf4j-java)");
}

void write_config(const fs::path& file, std::uint16_t port, const fs::path& dir, const ZooKeeperServerOptions& o) {
  const std::int64_t tick = o.tick_time.whole_ms();
  if (tick < 1 || Duration::ms(tick) != o.tick_time)
    throw Error("ZooKeeper's tickTime is whole milliseconds, not " + format_duration(o.tick_time));
  fs::create_directories(dir / "data");
  std::ofstream out(file, std::ios::trunc);
  // ZooKeeper's config is a Java properties file: a path is written as it is
  // (a backslash would escape; locksim's temporary roots have none).
  out << "# Written by locksim. Everything on loopback, the admin server off.\n"
      << "tickTime=" << tick << "\n"
      << "dataDir=" << (dir / "data").string() << "\n"
      << "clientPort=" << port << "\n"
      << "clientPortAddress=127.0.0.1\n"
      << "admin.enableServer=false\n"
      << "4lw.commands.whitelist=srvr\n"
      // Every client of a run connects from 127.0.0.1: no per-address cap (default 60).
      << "maxClientCnxns=0\n"
      // The transaction log is preallocated in blocks (64 MB by default): 4 MB does.
      << "preAllocSize=4096\n";
  if (!o.min_session_timeout.is_zero()) out << "minSessionTimeout=" << o.min_session_timeout.whole_ms() << "\n";
  if (!o.max_session_timeout.is_zero()) out << "maxSessionTimeout=" << o.max_session_timeout.whole_ms() << "\n";
  if (!out) throw Error("cannot write " + file.string());
}

std::vector<std::string> server_args(const fs::path& config, const ZooKeeperServerOptions& o) {
  return {"-Xmx" + o.max_heap,
          "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1",  // C1 only: a faster start, and a small server needs no more
          "-XX:-UsePerfData",         // no /tmp/hsperfdata_USER/PID left behind by a SIGKILL
          "-Djava.net.preferIPv4Stack=true",  // 127.0.0.1, not ::ffff:127.0.0.1
          "-Dorg.slf4j.simpleLogger.showDateTime=true",
          "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
          "-cp",
          std::string(kZooKeeperJar) + ":" + kLoggerJar,
          kMainClass,
          config.string()};
}

bool serving(std::uint16_t port, Duration timeout) {
  const Deadline deadline(timeout);
  BlockingClient c(port, timeout);
  c.send("srvr", deadline.left());
  // The server answers and closes the connection (NIOServerCnxn.checkFourLetterWord).
  std::string answer;
  for (;;) {
    std::optional<std::string> bytes = c.receive_bytes(deadline.left());
    if (!bytes) return false;
    if (bytes->empty()) break;
    answer += *bytes;
  }
  return answer.find("Mode: ") != std::string::npos;
}

}  // namespace locksim::live::zk
