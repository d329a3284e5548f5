// The libraries people deploy, each one version: `[lock] library = "<id>"`
// names one, and picks the algorithm and the flavour that model it (read from
// that version's shipped code; the flavour's file says where, line by line).
// A library line is added when its flavour is built, never before. `locksim
// list` and the scenario loader read this table; the live mode's external
// clients (one adapter per library) take the same ids and the same options.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "lockalgos/lock.hpp"
#include "lockalgos/registry.hpp"

namespace locksim {

// A [[client]] key a library scenario may give: the client's job keys every
// library takes, and the library's own (its check, its auto-extension).
struct LibraryOption {
  std::string_view key;
  std::string_view help;  // one line
};

// One value of [[client]] check: what the application asks the library
// before its write (LibraryCheck), named as the library names it.
struct LibraryCheckInfo {
  std::string_view name;  // as written: check = "exists"
  LibraryCheck check;
  std::string_view help;  // one line: what it is in the library's API
};

struct LibraryInfo {
  std::string_view id;         // "node-redlock@5.0.0-beta.2": the package's name as people know it, @ its version
  std::string_view algorithm;  // the registry's algorithm that models it
  std::string_view flavour;    // and its flavour (empty: the algorithm's default)
  std::string_view version;
  std::string_view origin;     // where its code comes from, as installed
  std::string_view help;       // one line
  std::vector<LibraryOption> options;        // [[client]] keys beyond name, start, count, clock
  std::vector<LibraryCheckInfo> checks;      // the values of [[client]] check; empty: none
};

std::span<const LibraryInfo> libraries();
const LibraryInfo* find_library(std::string_view id);
// The id nearest to `id` (a typo, or the version left out), or empty.
std::string_view nearest_library(std::string_view id);

}  // namespace locksim
