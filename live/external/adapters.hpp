// The live side of the library table: for each library id
// (lockalgos/libraries.hpp), the adapter that runs the real library as an
// external client — a short program in the library's own language, kept in
// adapters/<folder>/, that does a scenario's job with the library and nothing
// else (live/README.md: the protocol it speaks).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace locksim::live::external {

enum class Language : std::uint8_t { Python, Node };
std::string_view language_name(Language l);

// Which servers the library talks to (its service's proxies).
enum class Service : std::uint8_t { Redis, ZooKeeper, Etcd };

struct AdapterInfo {
  std::string_view library;      // the library table's id: "redis-py@4.3.4"
  std::string_view folder;       // under adapters/
  Language language;
  std::string_view program;      // the file run, in the folder
  Service service;
  // The name the library gives the lock's key on the servers, "%s" for the
  // scenario's [lock] key: "mutex:%s" for redis-semaphore.
  std::string_view server_key;
  std::string_view install;      // how it is installed (scripts/install-deps does it)
  // An etcd library whose release revokes the lease (etcd3 for Node): a
  // stream of one lease ID that the client closes is read as a revoke. Not
  // python-etcd3's: its refresh() is such a stream too (client.py
  // refresh_lease: LeaseKeepAlive over an iterator of one request), and its
  // release deletes the key.
  bool releases_by_revoke = false;
};

std::span<const AdapterInfo> adapters();
const AdapterInfo* find_adapter(std::string_view library);

// The folder that holds the adapters: $LOCKSIM_ADAPTERS if set, else the
// source tree's adapters/ this build was configured from.
std::filesystem::path adapters_dir();
std::filesystem::path adapter_folder(const AdapterInfo& a);

// The program and arguments that run the adapter: Debian's Python
// (/usr/bin/python3 -I: Debian's packages, never a pyenv's or the user's
// site), or node from PATH.
struct Command {
  std::filesystem::path exe;
  std::vector<std::string> args;
};
Command adapter_command(const AdapterInfo& a);

// The lock's key as the library writes it on the servers.
std::string server_key(const AdapterInfo& a, std::string_view key);

}  // namespace locksim::live::external
