// What the supervisor (live/servers.hpp) needs to run a real ZooKeeper
// server: Debian 12's zookeeper 3.8.0 (packages zookeeper and
// libzookeeper-java), started from its jars with `java` as Debian's own
// zkServer.sh would, but standalone (org.apache.zookeeper.server.ZooKeeperServerMain
// rather than QuorumPeerMain), on 127.0.0.1 only, with its admin server
// (Jetty, port 8080 by default) off.
//
// The classpath is Debian's (/etc/zookeeper/conf_example/environment:
// /usr/share/java/zookeeper.jar, whose manifest names every other jar it
// needs) plus slf4j-simple, so that the server logs to its standard error:
// the supervisor's output.log. The JVM is kept small (-Xmx, the serial
// collector, C1 only) and writes no hsperfdata file that a SIGKILL would
// leave behind (-XX:-UsePerfData). It forks nothing: the process group the
// supervisor kills is the JVM alone.
//
// Time: ZooKeeper expires sessions by System.nanoTime (CLOCK_MONOTONIC, read
// in whole milliseconds: Time.currentElapsedTime), in ticks of tickTime
// (ExpiryQueue.roundToNextInterval: tick boundaries are the multiples of
// tickTime on that clock). The clock shim offsets the wall clock only
// (ctime and mtime); it cannot move ZooKeeper's session clock.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "live/common.hpp"
#include "live/servers.hpp"

namespace locksim::live::zk {

// A JVM starts in seconds, many on a loaded machine: the supervisor waits this long at least.
inline constexpr Duration kStartTimeout = Duration::s(60);

// The jars, and the class the server runs.
inline constexpr const char* kZooKeeperJar = "/usr/share/java/zookeeper.jar";
inline constexpr const char* kLoggerJar = "/usr/share/java/slf4j-simple.jar";
inline constexpr const char* kMainClass = "org.apache.zookeeper.server.ZooKeeperServerMain";

// Throws Error naming the Debian package when the jars are not installed.
void check_installed();

// zoo.cfg for a server at 127.0.0.1:port, its data (snapshots and the
// transaction log) in dir/data.
void write_config(const std::filesystem::path& file, std::uint16_t port, const std::filesystem::path& dir,
                  const ZooKeeperServerOptions& options);

// java's arguments: the JVM's options, the classpath, the main class, `config`.
std::vector<std::string> server_args(const std::filesystem::path& config, const ZooKeeperServerOptions& options);

// Whether the server at 127.0.0.1:port serves requests now: the four-letter
// word `srvr` (whitelisted in zoo.cfg) answers with its mode rather than
// "not currently serving requests". Throws Error when nothing listens there.
bool serving(std::uint16_t port, Duration timeout);

}  // namespace locksim::live::zk
