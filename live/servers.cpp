#include "live/servers.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>

#include "live/blocking_client.hpp"
#include "live/clockshim/clock_page.h"
#include "live/etcd/http.hpp"
#include "live/zookeeper/server.hpp"

extern char** environ;

namespace locksim::live {

namespace fs = std::filesystem;

struct Supervisor::Node {
  std::string name;
  NodeKind kind = NodeKind::Server;
  std::uint16_t port = 0;
  fs::path dir;
  ServerOptions server;      // kind == Server
  SentinelOptions sentinel;  // kind == Sentinel
  ZooKeeperServerOptions zookeeper;  // kind == ZooKeeper
  EtcdNodeOptions etcd;              // kind == Etcd
  std::uint16_t peer_port = 0;       // kind == Etcd: its Raft peer URL's
  std::unique_ptr<ClockControl> clock;
  pid_t pid = 0;
  bool paused = false;

  fs::path config() const {
    return dir / (kind == NodeKind::Server ? "redis.conf" : kind == NodeKind::Sentinel ? "sentinel.conf" : "zoo.cfg");
  }
  // ZooKeeper logs to its standard error (slf4j-simple): output.log.
  fs::path log() const {
    return dir / (kind == NodeKind::Server     ? "redis.log"
                  : kind == NodeKind::Sentinel ? "sentinel.log"
                  : kind == NodeKind::Etcd     ? "etcd.log"
                                               : "output.log");
  }
  // stdout and stderr: a config error is printed there, before the log file is open.
  fs::path output() const { return dir / "output.log"; }
  fs::path clock_page() const { return dir / "clock.page"; }
};

namespace {

// The node's port was taken between our probe and its bind: try another.
struct PortClash {};

void sleep_for(Duration d) { std::this_thread::sleep_for(real(d)); }

std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int e = errno;
    ::close(fd);
    throw Error(std::string("cannot find a free port: ") + std::strerror(e));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

fs::path find_binary(const fs::path& given, const char* name, const char* package) {
  if (!given.empty()) return given;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((fs::path(dir) / name).c_str(), X_OK) == 0) return fs::path(dir) / name;
  throw Error(std::string(name) + " is not on PATH (Debian: apt-get install " + package + ")");
}

// A path in a Redis config file: quoted, so that spaces survive.
std::string quoted(const fs::path& p) {
  std::string out = "\"";
  for (char c : p.string()) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string ms(Duration d) { return std::to_string(d.whole_ms()); }


bool file_mentions(const fs::path& file, std::string_view what) {
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.find(what) != std::string::npos;
}

// The fields of /proc/<pid>/stat after the command name: the state letter
// (field 3) first. None if there is no such process.
std::vector<std::string> stat_fields(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');  // the command name may itself hold ") "
  if (paren == std::string::npos) return {};
  std::istringstream rest(stat.substr(paren + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(std::move(f));
  return fields;
}

// Starts `exe` with its stdin from /dev/null and its stdout and stderr
// appended to `output` (spawn_process, below).
pid_t spawn(const fs::path& exe, const std::vector<std::string>& args, const std::vector<std::string>& env,
            const fs::path& output) {
  const int out = ::open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) throw Error("cannot open " + output.string() + ": " + std::strerror(errno));
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  try {
    const pid_t pid = spawn_process(exe, args, env, {in, out, out});
    ::close(out);
    if (in >= 0) ::close(in);
    return pid;
  } catch (...) {
    ::close(out);
    if (in >= 0) ::close(in);
    throw;
  }
}

// Reaps `pid` if it has exited; its status then.
std::optional<int> try_reap(pid_t pid) {
  int status = 0;
  const pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r == pid) return status;
  if (r < 0 && errno == ECHILD) return 0;  // reaped already (SIGCHLD ignored)
  return std::nullopt;
}


void check_name(const std::string& name) {
  const bool ok = !name.empty() && name != "." && name != ".." &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
                  });
  if (!ok) throw Error("'" + name + "' is not a node name (letters, digits, '-', '_', '.')");
}

}  // namespace

std::string file_tail(const fs::path& file, std::size_t lines) {
  std::ifstream in(file);
  std::vector<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(line);
    if (last.size() > lines) last.erase(last.begin());
  }
  std::string out;
  for (const std::string& l : last) out += "\n    " + l;
  return out;
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by ") + strsignal(WTERMSIG(status));
  return "stopped";
}

// The state letter of /proc/<pid>/stat ('R', 'S', 'T', 'Z', ...), or 0 if there is no such process.
char process_state(pid_t pid) {
  const std::vector<std::string> f = stat_fields(pid);
  return f.empty() ? 0 : f[0][0];
}

// Starts `exe` in a process group of its own, with PR_SET_PDEATHSIG so that
// it dies with us. Everything the child uses is made before fork: between
// fork and exec it makes only async-signal-safe calls.
pid_t spawn_process(const fs::path& exe, const std::vector<std::string>& args, const std::vector<std::string>& env,
                    ChildIo io) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  const pid_t parent = ::getpid();
  // No signal handler of ours may run in the child (one that writes to a
  // self-pipe would write to ours): block them all across the fork.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // We may have been orphaned before the prctl: then no signal would come.
    if (::getppid() != parent) ::_exit(127);
    ::dup2(io.in, STDIN_FILENO);
    ::dup2(io.out, STDOUT_FILENO);
    ::dup2(io.err, STDERR_FILENO);
    // A descriptor of ours without O_CLOEXEC (a proxy's listening socket)
    // must not live on in the child.
    if (::close_range(3, ~0U, 0) != 0)
      for (int fd = 3; fd < 4096; ++fd) ::close(fd);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2}) ::sigaction(s, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(exe.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  const int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) throw Error(std::string("fork: ") + std::strerror(fork_errno));
  ::setpgid(pid, pid);  // from this side too: the group exists before anyone signals it
  return pid;
}

bool process_alive(pid_t pid) {
  const char s = process_state(pid);
  return s != 0 && s != 'Z' && s != 'X';
}

std::vector<Endpoint> listening_addresses(pid_t pid) {
  // The process's sockets by inode, then their rows in /proc/net/tcp{,6}.
  std::vector<std::string> inodes;
  std::error_code ec;
  for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const std::string target = fs::read_symlink(fd.path(), ec).string();
    if (target.rfind("socket:[", 0) == 0) inodes.push_back(target.substr(8, target.size() - 9));
  }
  std::vector<Endpoint> out;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream row(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      row >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (state != "0A" || std::find(inodes.begin(), inodes.end(), inode) == inodes.end()) continue;  // 0A: LISTEN
      const auto colon = local.find(':');
      const std::string hex = local.substr(0, colon);
      Endpoint e;
      e.port = static_cast<std::uint16_t>(std::stoul(local.substr(colon + 1), nullptr, 16));
      if (hex.size() == 8) {
        in_addr a{};
        a.s_addr = static_cast<std::uint32_t>(std::stoul(hex, nullptr, 16));  // kernel order as printed
        char buf[INET_ADDRSTRLEN];
        e.host = ::inet_ntop(AF_INET, &a, buf, sizeof buf);
      } else {
        in6_addr a{};
        for (int word = 0; word < 4; ++word) {
          const std::uint32_t w = static_cast<std::uint32_t>(std::stoul(hex.substr(word * 8, 8), nullptr, 16));
          std::memcpy(&a.s6_addr[word * 4], &w, 4);
        }
        char buf[INET6_ADDRSTRLEN];
        e.host = ::inet_ntop(AF_INET6, &a, buf, sizeof buf);
      }
      out.push_back(e);
    }
  }
  return out;
}

std::optional<std::string> process_identity(pid_t pid) {
  const std::vector<std::string> f = stat_fields(pid);
  constexpr std::size_t kStartTime = 22 - 3;  // field 22, counted from the state's 3
  if (f.size() <= kStartTime) return std::nullopt;
  return std::to_string(pid) + " " + f[kStartTime];
}

namespace {

constexpr std::string_view kRootPrefix = "locksim-live-";
constexpr const char* kOwnerFile = "owner";

bool abandoned(const fs::path& root) {
  std::ifstream in(root / kOwnerFile);
  std::string pid_text, start;
  if (!(in >> pid_text >> start)) {
    // No owner named: a root of a version before owners, or one being made
    // this instant. Only the first grows old.
    std::error_code ec;
    const auto modified = fs::last_write_time(root, ec);
    return !ec && fs::file_time_type::clock::now() - modified > std::chrono::hours(1);
  }
  pid_t pid = 0;
  const auto [end, err] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
  if (err != std::errc() || end != pid_text.data() + pid_text.size() || pid <= 0) return false;  // not ours to judge
  return process_identity(pid) != pid_text + " " + start;
}

}  // namespace

std::size_t remove_abandoned_roots(const fs::path& dir) {
  std::size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& root = it->path();
    const std::string name = root.filename().string();
    if (name.size() != kRootPrefix.size() + 6 || name.compare(0, kRootPrefix.size(), kRootPrefix) != 0) continue;
    struct stat st {};
    if (::lstat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) continue;
    if (!abandoned(root)) continue;
    std::error_code gone;
    if (fs::remove_all(root, gone) > 0 && !gone) ++removed;
  }
  return removed;
}

Supervisor::Supervisor(SupervisorOptions options) : options_(std::move(options)) {
  if (!options_.keep.empty()) {
    root_ = fs::absolute(options_.keep);
    fs::create_directories(root_);
    return;
  }
  remove_abandoned_roots(fs::temp_directory_path());
  std::string pattern = (fs::temp_directory_path() / (std::string(kRootPrefix) + "XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) throw Error(std::string("mkdtemp: ") + std::strerror(errno));
  root_ = pattern;
  remove_root_ = true;
  std::ofstream(root_ / kOwnerFile) << process_identity(::getpid()).value_or("") << "\n";
}

Supervisor::~Supervisor() {
  try {
    stop_all();
  } catch (...) {
    // A node that would not die has already been sent SIGKILL; nothing more to do here.
  }
  if (remove_root_) {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
}

const fs::path& Supervisor::binary(NodeKind kind) {
  switch (kind) {
    case NodeKind::Server:
      if (server_binary_.empty()) server_binary_ = find_binary(options_.redis_server, "redis-server", "redis-server");
      return server_binary_;
    case NodeKind::Sentinel:
      if (sentinel_binary_.empty())
        sentinel_binary_ = find_binary(options_.redis_sentinel, "redis-sentinel", "redis-sentinel");
      return sentinel_binary_;
    case NodeKind::ZooKeeper:
      if (java_binary_.empty()) java_binary_ = find_binary(options_.java, "java", "zookeeper");
      return java_binary_;
    case NodeKind::Etcd:
      if (etcd_binary_.empty()) etcd_binary_ = find_binary(options_.etcd, "etcd", "etcd-server");
      return etcd_binary_;
  }
  throw Error("no binary for this kind of node");
}

Supervisor::Node& Supervisor::node(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) throw Error("no node named '" + name + "'");
  return *it->second;
}

const Supervisor::Node& Supervisor::node(const std::string& name) const {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) throw Error("no node named '" + name + "'");
  return *it->second;
}

Supervisor::Node& Supervisor::add(const std::string& name, NodeKind kind, bool shim_clock) {
  check_name(name);
  if (nodes_.count(name)) throw Error("a node named '" + name + "' exists already");
  auto n = std::make_unique<Node>();
  n->name = name;
  n->kind = kind;
  n->dir = root_ / name;
  fs::remove_all(n->dir);  // --keep: an earlier run's node must not lend us its AOF
  fs::create_directories(n->dir);
  if (shim_clock) n->clock = std::make_unique<ClockControl>(n->clock_page());
  return *nodes_.emplace(name, std::move(n)).first->second;
}

void Supervisor::write_config(Node& n) {
  if (n.kind == NodeKind::ZooKeeper) return zk::write_config(n.config(), n.port, n.dir, n.zookeeper);
  std::ofstream out(n.config(), std::ios::trunc);
  out << "# Written by locksim for node " << n.name << ". Everything on loopback.\n"
      << "bind 127.0.0.1\n"
      << "port " << n.port << "\n"
      << "protected-mode yes\n"
      << "daemonize no\n"
      << "dir " << quoted(n.dir) << "\n"
      << "logfile " << quoted(n.log()) << "\n";
  if (n.kind == NodeKind::Server) {
    const ServerOptions& o = n.server;
    out << "save \"\"\n"
        << "appendonly " << (o.persistence == Persistence::None ? "no" : "yes") << "\n"
        << "appendfsync " << (o.persistence == Persistence::AofEverysec ? "everysec" : "always") << "\n"
        // No background AOF rewrite: a fork we did not ask for.
        << "auto-aof-rewrite-percentage 0\n"
        // A replica's full sync starts at once (7.0 waits 5 s for more replicas by default).
        << "repl-diskless-sync-delay 0\n";
    if (!o.replica_of.empty()) out << "replicaof 127.0.0.1 " << node(o.replica_of).port << "\n";
    for (const std::string& line : o.extra_config) out << line << "\n";
  } else {
    const SentinelOptions& o = n.sentinel;
    const std::string& g = o.group;
    out << "sentinel monitor " << g << " 127.0.0.1 " << node(o.master).port << " " << o.quorum << "\n"
        << "sentinel down-after-milliseconds " << g << " " << ms(o.down_after) << "\n"
        << "sentinel failover-timeout " << g << " " << ms(o.failover_timeout) << "\n"
        << "sentinel parallel-syncs " << g << " " << o.parallel_syncs << "\n";
  }
  if (!out) throw Error("cannot write " + n.config().string());
}

std::string Supervisor::log_tail(const Node& n) const {
  return file_tail(n.output(), 10) + file_tail(n.log(), 20);
}

void Supervisor::wait_ready(Node& n, const Deadline& deadline, bool first) {
  const auto died = [&](int status) {
    n.pid = 0;
    for (const char* clash : {"Address already in use", "address already in use"})  // Redis's, Go's
      if (file_mentions(n.output(), clash) || file_mentions(n.log(), clash)) throw PortClash{};
    throw Error(n.name + " " + exit_text(status) + " before it answered; its output and log:" + log_tail(n));
  };
  const auto check_alive = [&] {
    if (std::optional<int> status = try_reap(n.pid)) died(*status);
  };
  // 1. It answers (Redis: PING, not -LOADING while it reads its AOF; ZooKeeper: it serves; etcd: a range).
  for (;;) {
    check_alive();
    if (deadline.passed())
      throw Timeout(n.name + (n.kind == NodeKind::ZooKeeper ? " did not serve" : " did not answer") +
                    " in time; its log:" + log_tail(n));
    if (answers(n, min(deadline.left(), Duration::ms(500)))) break;
    sleep_for(Duration::ms(10));
  }
  // 2. It listens on loopback only.
  for (const Endpoint& e : listening_addresses(n.pid))
    if (e.host != "127.0.0.1")
      throw Error(n.name + " listens on " + e.text() + ", beyond 127.0.0.1; refusing to go on");
  // 3. A replica has its master's data. Not on a restart: its master may be
  // down too, or another node since a failover.
  if (first && n.kind == NodeKind::Server && !n.server.replica_of.empty() && n.server.wait_for_sync) {
    for (;;) {
      check_alive();
      if (deadline.passed())
        throw Timeout(n.name + " did not sync with " + n.server.replica_of + " in time; its log:" + log_tail(n));
      try {
        const resp::Value v = call(n.port, {"INFO", "replication"}, min(deadline.left(), Duration::ms(500)));
        if (v.str.find("master_link_status:up") != std::string::npos) break;
      } catch (const Error&) {
      }
      sleep_for(Duration::ms(20));
    }
  }
}

// Redis: PING answers PONG (not -LOADING while it reads its AOF). ZooKeeper:
// srvr says it serves. etcd: a
// linearizable range answers, so a leader is elected and the store loaded.
bool Supervisor::answers(const Node& n, Duration timeout) const {
  if (n.kind == NodeKind::Etcd)
    return etcd::post({"127.0.0.1", n.port}, {"/v3/kv/range", R"({"key":"bG9ja3NpbQ=="})"}, timeout).has_value();
  try {
    if (n.kind == NodeKind::ZooKeeper) return zk::serving(n.port, timeout);
    const resp::Value v = call(n.port, {"PING"}, timeout);
    return v.type == resp::Value::Type::Status && v.str == "PONG";
  } catch (const Error&) {
    return false;  // not listening yet, or busy loading
  }
}

// A redis-server or redis-sentinel reads its config file, ZooKeeper's JVM
// its class path and zoo.cfg (live/zookeeper/server.cpp); etcd takes flags:
// a one-member cluster of its own, named and tokened after the node and the
// root, on loopback (etcd 3.4's embed/config.go flags).
std::vector<std::string> Supervisor::arguments(const Node& n) const {
  if (n.kind == NodeKind::ZooKeeper) return zk::server_args(n.config(), n.zookeeper);
  if (n.kind != NodeKind::Etcd) return {n.config().string()};
  const std::string client = "http://127.0.0.1:" + std::to_string(n.port);
  const std::string peer = "http://127.0.0.1:" + std::to_string(n.peer_port);
  return {"--name", n.name,
          "--data-dir", (n.dir / "data").string(),
          "--listen-client-urls", client,
          "--advertise-client-urls", client,
          "--listen-peer-urls", peer,
          "--initial-advertise-peer-urls", peer,
          "--initial-cluster", n.name + "=" + peer,
          "--initial-cluster-token", "locksim-" + root_.filename().string() + "-" + n.name,
          "--initial-cluster-state", "new",
          "--heartbeat-interval", std::to_string(n.etcd.heartbeat.whole_ms()),
          "--election-timeout", std::to_string(n.etcd.election_timeout.whole_ms()),
          "--logger", "zap",
          "--log-outputs", n.log().string()};
}

void Supervisor::launch(Node& n, bool first) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    // etcd reads its flags from ETCD_* variables too: none of the caller's.
    if (n.kind == NodeKind::Etcd && entry.rfind("ETCD", 0) == 0) continue;
    // A node reads a clock page only if it is given its own.
    if (entry.rfind(LOCKSIM_CLOCK_FILE_ENV "=", 0) == 0) continue;
    if (n.clock && entry.rfind("LD_PRELOAD=", 0) == 0) continue;
    env.emplace_back(entry);
  }
  if (n.clock) {
    const char* preload = std::getenv("LD_PRELOAD");
    env.push_back("LD_PRELOAD=" + clockshim_path().string() + (preload && *preload ? std::string(":") + preload : ""));
    env.push_back(n.clock->env_entry());
  }
  const fs::path& exe = binary(n.kind);
  const Deadline deadline(n.kind == NodeKind::ZooKeeper ? max(options_.start_timeout, zk::kStartTimeout)
                                                        : options_.start_timeout);
  for (int attempt = 0;; ++attempt) {
    if (first) {
      n.port = free_port();
      if (n.kind == NodeKind::Etcd) n.peer_port = free_port();
      else write_config(n);
    }
    n.pid = spawn(exe, arguments(n), env, n.output());
    n.paused = false;
    try {
      wait_ready(n, deadline, first);
      return;
    } catch (const PortClash&) {
      if (!first || attempt >= 4 || deadline.passed())
        throw Error(n.name + " could not bind port " + std::to_string(n.port) + "; its log:" + log_tail(n));
    } catch (...) {
      kill_and_reap(n);
      throw;
    }
  }
}

std::uint16_t Supervisor::start_server(const std::string& name, const ServerOptions& options) {
  if (!options.replica_of.empty()) {
    const Node& master = node(options.replica_of);
    if (master.kind != NodeKind::Server) throw Error(name + ": " + options.replica_of + " is not a redis-server");
  }
  Node& n = add(name, NodeKind::Server, options.shim_clock);
  n.server = options;
  return launch_added(n);
}

// A node just added: started, or forgotten again if it will not start.
std::uint16_t Supervisor::launch_added(Node& n) {
  try {
    launch(n, true);
  } catch (...) {
    const std::string name = n.name;  // not a reference into the node being erased
    nodes_.erase(name);
    throw;
  }
  return n.port;
}

std::uint16_t Supervisor::start_zookeeper(const std::string& name, const ZooKeeperServerOptions& options) {
  zk::check_installed();
  Node& n = add(name, NodeKind::ZooKeeper, options.shim_clock);
  n.zookeeper = options;
  return launch_added(n);
}

std::uint16_t Supervisor::start_etcd(const std::string& name, const EtcdNodeOptions& options) {
  if (options.heartbeat < Duration::ms(1) || options.election_timeout < options.heartbeat * 5)
    throw Error(name + ": etcd needs a heartbeat of at least 1 ms and an election timeout of at least 5 heartbeats");
  Node& n = add(name, NodeKind::Etcd, false);
  n.etcd = options;
  return launch_added(n);
}

std::uint16_t Supervisor::start_sentinel(const std::string& name, const SentinelOptions& options) {
  if (node(options.master).kind != NodeKind::Server) throw Error(name + ": " + options.master + " is not a redis-server");
  Node& n = add(name, NodeKind::Sentinel, options.shim_clock);
  n.sentinel = options;
  return launch_added(n);
}

void Supervisor::kill_and_reap(Node& n) {
  if (n.pid == 0) return;
  // The whole group: a fork of the node (a replication child) goes with it.
  ::kill(-n.pid, SIGKILL);
  ::kill(n.pid, SIGKILL);
  const Deadline deadline(Duration::s(10));
  const pid_t pid = n.pid;
  n.pid = 0;
  n.paused = false;
  while (!try_reap(pid)) {
    if (deadline.passed()) throw Timeout("process " + std::to_string(pid) + " of " + n.name + " did not die on SIGKILL");
    sleep_for(Duration::ms(1));
  }
}

void Supervisor::pause(const std::string& name) {
  Node& n = node(name);
  if (n.pid == 0) throw Error("pause: " + name + " is not running");
  ::kill(-n.pid, SIGSTOP);
  n.paused = true;
  const Deadline deadline(Duration::s(5));
  while (process_state(n.pid) != 'T') {
    if (deadline.passed()) throw Timeout("pause: " + name + " did not stop");
    sleep_for(Duration::ms(1));
  }
}

void Supervisor::resume(const std::string& name) {
  Node& n = node(name);
  if (n.pid == 0) throw Error("resume: " + name + " is not running");
  ::kill(-n.pid, SIGCONT);
  n.paused = false;
  const Deadline deadline(Duration::s(5));
  while (process_state(n.pid) == 'T') {
    if (deadline.passed()) throw Timeout("resume: " + name + " did not continue");
    sleep_for(Duration::ms(1));
  }
}

void Supervisor::crash(const std::string& name) {
  Node& n = node(name);
  if (n.pid == 0) throw Error("crash: " + name + " is not running");
  kill_and_reap(n);
}

void Supervisor::restart(const std::string& name) {
  Node& n = node(name);
  if (n.pid != 0) throw Error("restart: " + name + " is still running (crash it first)");
  launch(n, false);
}

void Supervisor::stop_all() {
  std::optional<Error> first;
  for (auto& [name, n] : nodes_) {
    try {
      kill_and_reap(*n);
    } catch (const Error& e) {
      if (!first) first = e;
    }
  }
  if (first) throw *first;
}

std::uint16_t Supervisor::port(const std::string& name) const { return node(name).port; }
pid_t Supervisor::pid(const std::string& name) const { return node(name).pid; }
bool Supervisor::paused(const std::string& name) const { return node(name).paused; }

std::optional<std::string> Supervisor::name_at(std::uint16_t port) const {
  for (const auto& [name, n] : nodes_)
    if (n->port == port) return name;
  return std::nullopt;
}

std::vector<NodeInfo> Supervisor::nodes() const {
  std::vector<NodeInfo> out;
  for (const auto& [name, n] : nodes_) out.push_back({name, n->kind, n->port, n->pid, n->dir});
  return out;
}

ClockControl& Supervisor::clock(const std::string& name) {
  Node& n = node(name);
  if (!n.clock) throw Error(name + " was not started with shim_clock");
  return *n.clock;
}

resp::Names Supervisor::names() const {
  resp::Names names;
  names.address_of = [this](std::string_view name) -> std::optional<Endpoint> {
    auto it = nodes_.find(std::string(name));
    if (it == nodes_.end()) return std::nullopt;
    return Endpoint{"127.0.0.1", it->second->port};
  };
  names.name_at = [this](const Endpoint& e) -> std::optional<std::string> {
    if (e.host != "127.0.0.1") return std::nullopt;
    return name_at(e.port);
  };
  return names;
}

std::optional<Endpoint> Supervisor::master_address(const std::string& sentinel, const std::string& group) {
  const resp::Value v =
      call(node(sentinel).port, {"SENTINEL", "get-master-addr-by-name", group}, options_.command_timeout);
  if (v.type == resp::Value::Type::Nil) return std::nullopt;
  if (v.type != resp::Value::Type::Array || v.elements.size() != 2)
    throw Error(sentinel + ": get-master-addr-by-name answered " + resp::describe(v));
  const std::string& port = v.elements[1].str;
  unsigned long n = 0;
  if (std::from_chars(port.data(), port.data() + port.size(), n).ec != std::errc{} || n == 0 || n > 65535)
    throw Error(sentinel + ": get-master-addr-by-name answered " + resp::describe(v));
  return Endpoint{v.elements[0].str, static_cast<std::uint16_t>(n)};
}

std::string Supervisor::failover(const std::string& sentinel, const std::string& group, Duration timeout) {
  const Deadline deadline(timeout);
  const std::optional<Endpoint> before = master_address(sentinel, group);
  for (;;) {
    const resp::Value v = call(node(sentinel).port, {"SENTINEL", "FAILOVER", group}, options_.command_timeout);
    if (v.type != resp::Value::Type::Error || v.str.rfind("INPROG", 0) == 0) break;
    // A sentinel learns of replicas from the master's INFO: until then there is none to promote.
    if (v.str.rfind("NOGOODSLAVE", 0) != 0 || deadline.passed())
      throw Error(sentinel + ": SENTINEL FAILOVER " + group + " answered " + v.str);
    sleep_for(Duration::ms(100));
  }
  for (;;) {
    const std::optional<Endpoint> now = master_address(sentinel, group);
    if (now && now != before) {
      const auto name = now->host == "127.0.0.1" ? name_at(now->port) : std::nullopt;
      return name ? *name : now->text();
    }
    if (deadline.passed()) throw Timeout(sentinel + ": the failover of " + group + " did not finish in time");
    sleep_for(Duration::ms(20));
  }
}

}  // namespace locksim::live
