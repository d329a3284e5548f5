// What can run live, against which servers, with which warnings, and at
// which time scale (live/live_run.hpp): read from the scenario alone, before
// anything starts.
#include <algorithm>
#include <string>
#include <vector>

#include "harness/faults/kind.hpp"
#include "live/etcd/etcd_run.hpp"
#include "live/external/external_clients.hpp"
#include "live/live_run.hpp"
#include "live/zookeeper/live_service.hpp"
#include "lockalgos/registry.hpp"
#include "reports/words.hpp"
#include "sim/servers/table.hpp"

namespace locksim::live {

std::optional<std::string> live_unsupported(const Scenario& s) {
  if (!s.lock.library.empty())
    if (auto why = external::external_unsupported(s)) return why;
  const AlgorithmInfo* algorithm = find_algorithm(s.lock.algorithm);
  if (!algorithm) return "unknown algorithm " + s.lock.algorithm;
  if (algorithm->server == ServerKind::Etcd) {
    if (auto why = etcd::unsupported(s)) return why;
  } else if (algorithm->server == ServerKind::ZooKeeper) {
    if (auto why = zk::live_unsupported(s)) return why;
  } else if (algorithm->server != ServerKind::Redis) {
    return "not yet supported live: " + s.lock.algorithm + " runs on " +
           std::string(server_model(algorithm->server).name) + " (Redis, ZooKeeper and etcd run live so far)";
  }
  if (s.sentinel.present && s.sentinel.sentinels != 1) return "not yet supported live: more than one sentinel";
  // Each kind says which of its faults cannot run live (harness/faults/).
  for (const FaultSpec& f : s.faults) {
    const FaultKindInfo& kind = fault_kind(f.kind);
    const std::string what = std::string(kind.name) + " (line " + std::to_string(f.line) + ")";
    if (!kind.live) return "not yet supported live: " + what;
    if (kind.live_refusal)
      if (const auto why = kind.live_refusal(s, f)) return "not yet supported live: " + say(Lang::En, *why) + ", " + what;
  }
  return std::nullopt;
}

std::string live_servers(const Scenario& s) {
  const AlgorithmInfo* a = find_algorithm(s.lock.algorithm);
  if (a && a->server == ServerKind::ZooKeeper) return "a real ZooKeeper server";
  if (a && a->server == ServerKind::Etcd) return "real etcd";
  return "real redis-server";
}

std::vector<std::string> live_warnings(const Scenario& s, std::int64_t k) {
  std::vector<std::string> out;
  auto thin = [&](Duration d, const std::string& what) {
    if (d.is_zero()) return;
    const Duration real = Duration::ns(d.count_ns() / k);
    if (real < Duration::ms(20))
      out.push_back(what + " is " + format_duration(d) + ", " + format_duration(real) +
                    " of real time at this scale: close to loopback and scheduling jitter");
  };
  if (s.lock.ttl && k > 1 && Duration::ns(s.lock.ttl->count_ns() / k) < Duration::ms(1000))
    out.push_back("the TTL is " + format_duration(*s.lock.ttl) + ": Redis reclaims expired keys every 100 ms of real time, " +
                  format_duration(Duration::ms(100 * k)) + " of scenario time at this scale");
  for (const FaultSpec& f : s.faults) {
    const std::string name = std::string(fault_kind_name(f.kind)) + " (line " + std::to_string(f.line) + ")";
    if (f.duration) thin(*f.duration, "the " + name + "'s duration");
    if (f.at) thin(*f.at, "the " + name + "'s time");
    thin(f.after, "the " + name + "'s delay after its trigger");
    if (f.kind == FaultKind::ClockJump) thin(f.by < Duration::zero() ? -f.by : f.by, "the " + name + "'s jump");
  }
  if (s.sentinel.present && k > 1)
    out.push_back("Sentinel's own periods do not scale: it pings every second and refreshes INFO every 1-10 s of real time");
  for (const NodeConfig& n : s.nodes)
    if (!n.replica_of.empty()) thin(n.replication_lag.lo, n.name + "'s replication lag");
  return out;
}

std::int64_t live_scale_for(const Scenario& s, const std::vector<Violation>& simulated, std::int64_t k) {
  if (!s.lock.library.empty()) return 1;  // a real library keeps real time
  Duration thinnest = Duration::s(3600);
  auto margin = [&](Duration d) {
    if (d < Duration::zero()) d = -d;
    if (!d.is_zero() && d < thinnest) thinnest = d;
  };
  for (const FaultSpec& f : s.faults) {
    if (f.at) margin(*f.at);
    if (f.duration) margin(*f.duration);
    margin(f.after);
    margin(f.by);
  }
  for (const NodeConfig& n : s.nodes)
    if (!n.replica_of.empty()) margin(n.replication_lag.lo);
  for (const Violation& v : simulated) margin(v.until - v.at);
  // A job made to end just inside its lease (get-then-del's 9.99 s of 10 s).
  if (s.lock.ttl)
    for (const ClientConfig& c : s.clients) margin(*s.lock.ttl - c.work.lo);
  const std::int64_t fits = thinnest.count_ns() / kMinRealMargin.count_ns();
  std::int64_t scale = std::max<std::int64_t>(1, std::min(k, fits));
  // ZooKeeper's tickTime is whole milliseconds: the tick must divide by K.
  if (const AlgorithmInfo* a = find_algorithm(s.lock.algorithm); a && a->server == ServerKind::ZooKeeper)
    while (scale > 1 && !zk::tick_scales(s.lock.options->server().tick_time, scale)) --scale;
  return etcd::runs_on_etcd(s) ? etcd::scale_for(s, scale) : scale;
}


}  // namespace locksim::live
