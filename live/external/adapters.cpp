#include "live/external/adapters.hpp"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <sstream>

#include "live/common.hpp"

namespace locksim::live::external {

namespace {

constexpr std::string_view kNpm = "npm ci in its folder (scripts/install-deps), from its package-lock.json";

// node-redlock has two folders, not one with two lockfiles: 4.2.0's API
// (lock(), unlock(), bluebird promises) and 5.0.0-beta.2's (acquire(),
// release(), using() with an AbortSignal) share no code past the job, and
// `npm ci` installs one lockfile per folder.
constexpr std::array<AdapterInfo, 8> kAdapters{{
    {"node-redlock@4.2.0", "node-redlock-4", Language::Node, "adapter.js", Service::Redis, "%s", kNpm, false},
    {"node-redlock@5.0.0-beta.2", "node-redlock-5", Language::Node, "adapter.js", Service::Redis, "%s", kNpm, false},
    {"redis-semaphore@5.8.0", "redis-semaphore", Language::Node, "adapter.js", Service::Redis, "mutex:%s", kNpm, false},
    {"redis-semaphore-redlock@5.8.0", "redis-semaphore", Language::Node, "adapter.js", Service::Redis, "mutex:%s", kNpm, false},
    {"redis-py@4.3.4", "redis-py", Language::Python, "adapter.py", Service::Redis, "%s",
     "Debian's python3-redis (scripts/install-deps)", false},
    {"kazoo@2.8.0", "kazoo", Language::Python, "adapter.py", Service::ZooKeeper, "/locks/%s",
     "Debian's python3-kazoo (scripts/install-deps)", false},
    {"python-etcd3@0.12.0", "python-etcd3", Language::Python, "adapter.py", Service::Etcd, "/locks/%s",
     "Debian's python3-etcd3 (scripts/install-deps)", false},
    {"etcd3-node@1.1.2", "etcd3-node", Language::Node, "adapter.js", Service::Etcd, "%s", kNpm, true},
}};

std::filesystem::path find_on_path(const char* name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((std::filesystem::path(dir) / name).c_str(), X_OK) == 0)
      return std::filesystem::path(dir) / name;
  return {};
}

}  // namespace

std::string_view language_name(Language l) { return l == Language::Python ? "Python" : "Node"; }

std::span<const AdapterInfo> adapters() { return kAdapters; }

const AdapterInfo* find_adapter(std::string_view library) {
  for (const AdapterInfo& a : kAdapters)
    if (a.library == library) return &a;
  return nullptr;
}

std::filesystem::path adapters_dir() {
  if (const char* env = std::getenv("LOCKSIM_ADAPTERS"); env && *env) return env;
  return LOCKSIM_ADAPTERS_DIR;
}

std::filesystem::path adapter_folder(const AdapterInfo& a) { return adapters_dir() / a.folder; }

Command adapter_command(const AdapterInfo& a) {
  const std::filesystem::path program = adapter_folder(a) / a.program;
  if (a.language == Language::Python) return {"/usr/bin/python3", {"-I", "-B", "-u", program.string()}};
  std::filesystem::path node = find_on_path("node");
  if (node.empty()) node = "/usr/bin/node";
  return {node, {program.string()}};
}

std::string server_key(const AdapterInfo& a, std::string_view key) {
  std::string out(a.server_key);
  if (const auto at = out.find("%s"); at != std::string::npos) out.replace(at, 2, key);
  return out;
}

}  // namespace locksim::live::external
