// Scenario files to typed scenarios. Every rejection is one line naming the
// file, the line and the key: "x.toml:12: [[client]] 'wrok': unknown key (did you mean 'work'?)".
#include "harness/scenario.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/faults.hpp"
#include "lockalgos/registry.hpp"

namespace locksim {

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "true/false";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
  }
}

class Loader {
 public:
  explicit Loader(std::string path) : path_(std::move(path)) {}

  Scenario load(std::string_view text) {
    // toml++ 3.3.0 asserts on a table header key that starts with a control
    // character ("[[\x1D..."; impl/parser.inl parse_key, TOML_ASSERT_ASSUME):
    // an abort without NDEBUG, undefined behaviour with it. TOML allows none
    // but tab, LF and CR outside escapes, so none reaches the parser.
    int line = 1;
    for (const char c : text) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte == '\n') ++line;
      if ((byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') || byte == 0x7F) {
        const char* digits = "0123456789ABCDEF";
        const std::string hex = {'0', 'x', digits[byte >> 4], digits[byte & 0xF]};
        throw ScenarioError(path_ + ":" + std::to_string(line) + ": byte " + hex +
                            " (a control character) is not allowed in a scenario file");
      }
    }
    toml::table root;
    try {
      root = toml::parse(text, path_);
    } catch (const toml::parse_error& e) {
      throw ScenarioError(path_ + ":" + std::to_string(e.source().begin.line) + ":" +
                          std::to_string(e.source().begin.column) + ": TOML syntax error: " +
                          std::string(e.description()));
    }
    Scenario s;
    s.path = path_;
    const std::string top = "top level";
    check_keys(root, top, {"title", "about", "source", "seed", "duration", "lock", "network", "node", "sentinel",
                           "storage", "client", "fault", "expect"});
    s.title = str(root, "title", top, 1, true).value();
    s.about = str(root, "about", top, 1, true).value();
    s.source = str(root, "source", top, 1, true).value();
    if (auto seed = integer(root, "seed", top, 0, INT64_MAX)) s.seed = static_cast<std::uint64_t>(*seed);
    s.duration = duration(root, "duration", top, 1, true, Positive).value();

    // The storage's name is known before any process is named, so a clash is
    // reported where it happens.
    if (const toml::table* st = root["storage"].as_table())
      if (const auto* n = st->get("name"); n && n->is_string()) {
        storage_name_ = n->as_string()->get();
        storage_named_ = true;
      }
    if (const toml::table* se = root["sentinel"].as_table()) {
      SentinelConfig names;
      if (const auto* n = se->get("name"); n && n->is_string()) names.name = n->as_string()->get();
      if (const auto* n = se->get("sentinels"); n && n->is_integer())
        names.sentinels = static_cast<int>(std::clamp<std::int64_t>(n->as_integer()->get(), 1, kMaxSentinels));
      for (int i = 0; i < names.sentinels; ++i) sentinel_names_.push_back(names.process_name(i));
    }
    lock(root, s);
    network(root, s);
    nodes(root, s);
    sentinel(root, s);
    storage(root, s);
    clients(root, s);
    faults(root, s);
    expect(root, s);
    return s;
  }

 private:
  enum Sign { Any, NonNegative, Positive, NonZero };

  [[noreturn]] void fail(int line, const std::string& where, const std::string& key, const std::string& what) const {
    std::string msg = path_ + ":" + std::to_string(line) + ": " + where;
    if (!key.empty()) msg += " '" + key + "'";
    throw ScenarioError(msg + ": " + what);
  }

  int key_line(const toml::table& t, std::string_view key) const {
    for (auto&& [k, v] : t)
      if (k.str() == key) return static_cast<int>(k.source().begin.line);
    return line_of(t);
  }

  void check_keys(const toml::table& t, const std::string& where, const std::vector<std::string>& allowed,
                  const std::string& why = "unknown key") const {
    for (auto&& [k, v] : t) {
      const std::string key(k.str());
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string msg = why;
      std::string best;
      std::size_t best_d = 3;
      for (const auto& a : allowed)
        if (const auto d = edit_distance(key, a); d < best_d) {
          best_d = d;
          best = a;
        }
      if (!best.empty()) msg += " (did you mean '" + best + "'?)";
      fail(static_cast<int>(k.source().begin.line), where, key, msg);
    }
  }

  const toml::node* get(const toml::table& t, std::string_view key, const std::string& where, int table_line,
                        bool required) const {
    const toml::node* n = t.get(key);
    if (!n && required) fail(table_line, where, std::string(key), "missing (it is required)");
    return n;
  }

  std::optional<std::string> str(const toml::table& t, std::string_view key, const std::string& where,
                                 int table_line, bool required = false) const {
    const toml::node* n = get(t, key, where, table_line, required);
    if (!n) return std::nullopt;
    if (!n->is_string()) fail(key_line(t, key), where, std::string(key), std::string("expected a string, found ") + type_name(*n));
    return n->as_string()->get();
  }

  std::optional<std::string> choice(const toml::table& t, std::string_view key, const std::string& where,
                                    const std::vector<std::string>& options) const {
    auto v = str(t, key, where, 0);
    if (v && std::find(options.begin(), options.end(), *v) == options.end()) {
      std::string opts;
      for (const auto& o : options) opts += (opts.empty() ? "" : " | ") + ("\"" + o + "\"");
      fail(key_line(t, key), where, std::string(key), "\"" + *v + "\" is not one of " + opts);
    }
    return v;
  }

  std::optional<bool> boolean(const toml::table& t, std::string_view key, const std::string& where) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_boolean()) fail(key_line(t, key), where, std::string(key), std::string("expected true or false, found ") + type_name(*n));
    return n->as_boolean()->get();
  }

  std::optional<std::int64_t> integer(const toml::table& t, std::string_view key, const std::string& where,
                                      std::int64_t lo, std::int64_t hi) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_integer()) fail(key_line(t, key), where, std::string(key), std::string("expected an integer, found ") + type_name(*n));
    const std::int64_t v = n->as_integer()->get();
    if (v < lo || v > hi)
      fail(key_line(t, key), where, std::string(key),
           std::to_string(v) + " is out of range (" + std::to_string(lo) + (hi == INT64_MAX ? " or more" : " to " + std::to_string(hi)) + ")");
    return v;
  }

  // An integer count, or "forever".
  std::optional<int> count(const toml::table& t, std::string_view key, const std::string& where, int lo) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (n->is_string()) {
      if (n->as_string()->get() == "forever") return kForever;
      fail(key_line(t, key), where, std::string(key), "expected a whole number or \"forever\"");
    }
    return static_cast<int>(*integer(t, key, where, lo, 1'000'000'000));
  }

  std::optional<double> number(const toml::table& t, std::string_view key, const std::string& where) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (n->is_integer()) return static_cast<double>(n->as_integer()->get());
    if (n->is_floating_point()) return n->as_floating_point()->get();
    fail(key_line(t, key), where, std::string(key), std::string("expected a number, found ") + type_name(*n));
  }

  Duration check_sign(Duration d, Sign sign, const toml::table& t, std::string_view key, const std::string& where) const {
    const bool ok = sign == Any || (sign == NonNegative && d >= Duration::zero()) ||
                    (sign == Positive && d > Duration::zero()) || (sign == NonZero && !d.is_zero());
    if (!ok)
      fail(key_line(t, key), where, std::string(key),
           format_duration(d) + " is not allowed here (it must be " +
               (sign == NonNegative ? "zero or more" : sign == Positive ? "more than zero" : "nonzero") + ")");
    return d;
  }

  static constexpr const char* kDurationHelp = "(write e.g. \"250ms\", \"10s\", \"1.5s\", \"2m\")";
  // Why `text` is not a duration, for the error message.
  static std::string not_a_duration(const std::string& text) {
    if (duration_too_long(text))
      return "\"" + text + "\" is too long: the longest duration locksim can simulate is " + longest_duration();
    return "\"" + text + "\" is not a duration " + kDurationHelp;
  }

  std::optional<Duration> duration(const toml::table& t, std::string_view key, const std::string& where,
                                   int table_line, bool required = false, Sign sign = NonNegative) const {
    const toml::node* n = get(t, key, where, table_line, required);
    if (!n) return std::nullopt;
    if (!n->is_string())
      fail(key_line(t, key), where, std::string(key),
           std::string("expected a duration string, found ") + type_name(*n) + " " + kDurationHelp);
    const std::string text = n->as_string()->get();
    const auto d = parse_duration(text);
    if (!d) fail(key_line(t, key), where, std::string(key), not_a_duration(text));
    return check_sign(*d, sign, t, key, where);
  }

  std::optional<DurationRange> range(const toml::table& t, std::string_view key, const std::string& where) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_string())
      fail(key_line(t, key), where, std::string(key),
           std::string("expected a duration or a range like \"1ms..3ms\", found ") + type_name(*n));
    const std::string text = n->as_string()->get();
    const auto dots = text.find("..");
    if (dots == std::string::npos) {
      const auto d = parse_duration(text);
      if (!d) fail(key_line(t, key), where, std::string(key), not_a_duration(text));
      return DurationRange::fixed(check_sign(*d, NonNegative, t, key, where));
    }
    if (text.compare(dots, 3, "...") == 0)
      fail(key_line(t, key), where, std::string(key), "\"" + text + "\": a range has two dots (write e.g. \"1ms..3ms\")");
    const auto lo = parse_duration(text.substr(0, dots));
    const auto hi = parse_duration(text.substr(dots + 2));
    for (const std::string_view end : {text.substr(0, dots), text.substr(dots + 2)})
      if (duration_too_long(end)) fail(key_line(t, key), where, std::string(key), not_a_duration(std::string(end)));
    if (!lo || !hi)
      fail(key_line(t, key), where, std::string(key), "\"" + text + "\" is not a range (write e.g. \"1ms..3ms\")");
    check_sign(*lo, NonNegative, t, key, where);
    if (*hi < *lo) fail(key_line(t, key), where, std::string(key), "\"" + text + "\": the range ends before it starts");
    return DurationRange{*lo, *hi};
  }

  std::optional<ClockSpec> clock(const toml::table& t, const std::string& where) const {
    const toml::node* n = t.get("clock");
    if (!n) return std::nullopt;
    if (!n->is_table())
      fail(key_line(t, "clock"), where, "clock", "expected a table like { offset = \"0s\", drift_ppm = 0 }");
    const toml::table& c = *n->as_table();
    const std::string w = where + " clock";
    check_keys(c, w, {"offset", "drift_ppm", "wall_drift_ppm"});
    ClockSpec spec;
    if (auto off = duration(c, "offset", w, line_of(c), false, Any)) spec.offset = *off;
    if (auto ppm = number(c, "drift_ppm", w)) {
      if (!(*ppm > -1e6 && *ppm < 1e9)) fail(key_line(c, "drift_ppm"), w, "drift_ppm", "a clock must run forward (more than -1000000 ppm)");
      spec.drift_ppb = std::llround(*ppm * 1000.0);
    }
    // The wall clock's own drift, on top of drift_ppm (sim/clock.hpp ClockSpec).
    if (auto ppm = number(c, "wall_drift_ppm", w)) {
      const double wall = *ppm + static_cast<double>(spec.drift_ppb) / 1000.0;
      if (!(wall > -1e6 && *ppm < 1e9))
        fail(key_line(c, "wall_drift_ppm"), w, "wall_drift_ppm",
             "the wall clock must run forward (drift_ppm + wall_drift_ppm more than -1000000 ppm)");
      spec.wall_drift_ppb = std::llround(*ppm * 1000.0);
    }
    return spec;
  }

  const toml::table* table(const toml::table& root, std::string_view key, bool required) const {
    const toml::node* n = root.get(key);
    if (!n) {
      if (required) fail(1, "top level", std::string("[") + std::string(key) + "]", "missing (it is required)");
      return nullptr;
    }
    if (!n->is_table()) fail(key_line(root, key), "top level", std::string(key), "expected a table [" + std::string(key) + "]");
    return n->as_table();
  }

  std::vector<const toml::table*> array_of_tables(const toml::table& root, std::string_view key) const {
    std::vector<const toml::table*> out;
    const toml::node* n = root.get(key);
    if (!n) return out;
    const toml::array* arr = n->as_array();
    if (!arr) fail(key_line(root, key), "top level", std::string(key), "expected [[" + std::string(key) + "]] tables");
    for (const toml::node& item : *arr) {
      if (!item.is_table()) fail(line_of(item), "top level", std::string(key), "expected [[" + std::string(key) + "]] tables");
      out.push_back(item.as_table());
    }
    return out;
  }

  void lock(const toml::table& root, Scenario& s) {
    const toml::table& t = *table(root, "lock", true);
    const std::string w = "[lock]";
    LockConfig& c = s.lock;
    c.line = line_of(t);
    c.algorithm = str(t, "algorithm", w, c.line, true).value();
    const AlgorithmInfo* algo = find_algorithm(c.algorithm);
    if (!algo) {
      std::vector<std::string> known;
      for (const AlgorithmInfo& a : algorithms()) known.emplace_back(a.name);
      fail(key_line(t, "algorithm"), w, "algorithm", "unknown algorithm \"" + c.algorithm + "\" (known: " + join(known) + ")");
    }
    std::vector<std::string> allowed{"algorithm", "flavour", "fencing"};
    if (algo->takes_ttl) allowed.emplace_back("ttl");
    std::vector<std::string> option_names;
    for (const OptionInfo& o : algo->options) option_names.emplace_back(o.key);
    allowed.insert(allowed.end(), option_names.begin(), option_names.end());
    for (auto&& [k, v] : t) {
      const std::string key(k.str());
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      if (key == "ttl")
        fail(key_line(t, key), w, key, c.algorithm + " sets no expiry on its lock, so it takes no ttl");
      check_keys(t, w, allowed, "not an option of " + c.algorithm + " (its options: " + join(option_names) + ")");
    }
    if (auto f = str(t, "flavour", w, c.line)) {
      if (algo->flavours.empty()) fail(key_line(t, "flavour"), w, "flavour", c.algorithm + " has no flavours");
      std::vector<std::string> fl;
      for (const OptionInfo& known : algo->flavours) fl.emplace_back(known.key);
      if (std::find(fl.begin(), fl.end(), *f) == fl.end()) {
        fail(key_line(t, "flavour"), w, "flavour", "\"" + *f + "\" is not a flavour of " + c.algorithm + " (flavours: " + join(fl) + ")");
      }
      c.flavour = *f;
    }
    if (auto f = choice(t, "fencing", w, {"none", "token", "lock-value"})) {
      c.fencing = *f == "token" ? Fencing::Token : *f == "lock-value" ? Fencing::LockValue : Fencing::None;
      if (c.fencing == Fencing::Token && !algo->monotonic_token)
        fail(key_line(t, "fencing"), w, "fencing",
             c.algorithm + " offers no monotonic fencing token: its values are random (Kleppmann 2016); use "
             "fencing = \"lock-value\" for antirez's check-and-set proposal, or an algorithm that issues tokens");
    }
    c.ttl = duration(t, "ttl", w, c.line, algo->needs_ttl, Positive);
    if (auto k = str(t, "key", w, c.line)) {
      if (k->empty()) fail(key_line(t, "key"), w, "key", "the key must not be empty");
      c.key = *k;
    }
    if (auto r = choice(t, "release", w, {"compare-and-delete", "del", "get-then-del"})) c.release = *r;
    if (auto r = range(t, "retry_delay", w)) c.retry_delay = *r;
    if (auto n = count(t, "retry_count", w, 0)) c.retry_count = *n;
    if (auto d = duration(t, "request_timeout", w, c.line, false, Positive)) c.request_timeout = *d;
    if (auto n = integer(t, "first_token", w, 0, INT64_MAX / 2)) c.first_token = *n;
    if (auto d = number(t, "drift_factor", w)) {
      if (!(*d >= 0.0 && *d < 1.0)) fail(key_line(t, "drift_factor"), w, "drift_factor", "a fraction of the ttl, from 0 up to 1");
      c.drift_factor = *d;
    }
    c.auto_extend = duration(t, "auto_extend", w, c.line, false, Positive);
    if (c.auto_extend && c.flavour != "redsync" && c.flavour != "node-redlock-v5")
      fail(key_line(t, "auto_extend"), w, "auto_extend",
           "only the redsync and node-redlock-v5 flavours extend a lock (" +
               (c.flavour.empty() ? std::string("redlock-rb") : c.flavour) + " has no extension)");
    if (auto v = choice(t, "fanout", w, {"sequential", "parallel"})) c.fanout = *v;
    if (auto v = choice(t, "collect", w, {"quorum", "all"})) {
      if (c.fanout == "sequential" || (c.fanout.empty() && c.flavour != "redsync" && c.flavour != "node-redlock-v5"))
        fail(key_line(t, "collect"), w, "collect", "applies to a parallel fan-out (fanout = \"parallel\")");
      c.collect = *v;
    }
    if (auto v = choice(t, "unlock", w, {"wait", "no-wait"})) c.unlock = *v;
    for (const char* key : {"fanout", "collect", "unlock"})
      if (t.get(key) && c.flavour == "redisson")
        fail(key_line(t, key), w, key, "not an option of the redisson flavour (RedissonRedLock locks node by node)");
    if (auto d = duration(t, "watchdog_timeout", w, c.line, false, Positive)) c.watchdog_timeout = *d;
    c.lease_time = duration(t, "lease_time", w, c.line, false, Positive);
    c.wait_time = duration(t, "wait_time", w, c.line, false, NonNegative);
    if (auto d = duration(t, "session_timeout", w, c.line, false, Positive)) c.session_timeout = *d;
    if (auto d = duration(t, "tick_time", w, c.line, false, Positive)) c.tick_time = *d;
    if (auto v = choice(t, "on_suspended", w, {"continue", "stop"})) c.on_suspended = *v;
    if (auto v = choice(t, "watch", w, {"predecessor", "parent"})) c.watch = *v;
    if (auto d = duration(t, "lease_ttl", w, c.line, false, Positive)) c.lease_ttl = *d;
    if (auto v = choice(t, "version", w, {"3.4", "3.5"})) c.version = *v;
  }

  void network(const toml::table& root, Scenario& s) {
    const toml::table* t = table(root, "network", false);
    if (!t) return;
    const std::string w = "[network]";
    check_keys(*t, w, {"delay", "loss", "fifo"});
    if (auto r = range(*t, "delay", w)) s.network.delay = *r;
    if (auto l = number(*t, "loss", w)) {
      if (!(*l >= 0.0 && *l < 1.0)) fail(key_line(*t, "loss"), w, "loss", "a probability from 0 up to (not including) 1");
      s.network.loss = *l;
    }
    if (auto f = boolean(*t, "fifo", w)) s.network.fifo = *f;
  }

  // A process's name: checked, unique, and not the name the storage will take.
  void name(const toml::table& t, const std::string& w, std::string& out, bool is_prefix = false) {
    out = str(t, "name", w, line_of(t), true).value();
    if (out.empty() || out.find_first_of(" #\t") != std::string::npos)
      fail(key_line(t, "name"), w, "name", "\"" + out + "\": a name needs at least one character and no spaces or '#'");
    if (is_prefix) return;  // count = N: the names are <name>1..<name>N, checked one by one
    if (std::find(names_.begin(), names_.end(), out) != names_.end())
      fail(key_line(t, "name"), w, "name", "\"" + out + "\" is already the name of another process");
    if (w != "[storage]" && out == storage_name_)
      fail(key_line(t, "name"), w, "name",
           "\"" + out + "\" is the storage's name" + (storage_named_ ? "" : " (by default; [storage] name = ... changes it)"));
    if (w != "[sentinel]" && std::find(sentinel_names_.begin(), sentinel_names_.end(), out) != sentinel_names_.end())
      fail(key_line(t, "name"), w, "name", "\"" + out + "\" is a sentinel's name ([sentinel] name = ... changes it)");
    names_.push_back(out);
  }

  void nodes(const toml::table& root, Scenario& s) {
    const auto tables = array_of_tables(root, "node");
    if (tables.empty()) fail(1, "top level", "[[node]]", "missing: the lock service needs at least one node");
    for (const toml::table* t : tables) {
      const std::string w = "[[node]]";
      check_keys(*t, w, {"name", "clock", "persistence", "restart_delay", "replica_of", "replication_lag",
                         "expiry_propagation", "replica_priority"});
      NodeConfig n;
      n.line = line_of(*t);
      name(*t, w, n.name);
      if (auto c = clock(*t, w)) n.clock = *c;
      if (auto p = choice(*t, "persistence", w, {"none", "aof-always", "aof-everysec"}))
        n.persistence = *p == "aof-always"     ? Persistence::AofAlways
                        : *p == "aof-everysec" ? Persistence::AofEverysec
                                               : Persistence::None;
      if (auto d = duration(*t, "restart_delay", w, n.line)) n.restart_delay = *d;
      if (auto r = str(*t, "replica_of", w, n.line)) {
        const bool known = std::any_of(s.nodes.begin(), s.nodes.end(), [&](const NodeConfig& m) { return m.name == *r; });
        if (!known) fail(key_line(*t, "replica_of"), w, "replica_of", "no node named \"" + *r + "\" is declared before this one");
        n.replica_of = *r;
      }
      if (auto r = range(*t, "replication_lag", w)) n.replication_lag = *r;
      // "pxat": Redis >= 7.0 replicates every expiry as PXAT (#8474); "px":
      // 6.0 and 6.2 replicate the relative PX the client sent.
      if (auto e = choice(*t, "expiry_propagation", w, {"pxat", "px"})) n.expiry_as_pxat = *e == "pxat";
      if (auto p = integer(*t, "replica_priority", w, 0, 1'000'000)) n.replica_priority = static_cast<int>(*p);
      s.nodes.push_back(n);
    }
    for (const NodeConfig& n : s.nodes)
      if (!n.replica_of.empty() && find_algorithm(s.lock.algorithm)->service != Service::Redis)
        fail(n.line, "[[node]]", "replica_of", "only Redis nodes replicate; " + s.lock.algorithm + " models its ensemble as one service");
  }

  // [sentinel]: the Sentinel processes watching every master that has a
  // replica (sim/sentinel.hpp). One by default; `sentinels = 3` is the
  // smallest deployment the Redis docs recommend.
  void sentinel(const toml::table& root, Scenario& s) {
    const toml::table* t = table(root, "sentinel", false);
    if (!t) return;
    const std::string w = "[sentinel]";
    check_keys(*t, w, {"name", "sentinels", "quorum", "down_after", "failover_timeout", "ping_period", "clock"});
    SentinelConfig& c = s.sentinel;
    c.present = true;
    c.line = line_of(*t);
    if (auto n = integer(*t, "sentinels", w, 1, kMaxSentinels)) c.sentinels = static_cast<int>(*n);
    if (t->get("name")) name(*t, w, c.name, c.sentinels > 1);
    if (c.sentinels == 1 && !t->get("name")) {
      name_default(c.name, w);
    } else if (c.sentinels > 1) {
      for (int i = 0; i < c.sentinels; ++i) {
        const std::string n = c.process_name(i);
        if (std::find(names_.begin(), names_.end(), n) != names_.end() || n == storage_name_)
          fail(t->get("name") ? key_line(*t, "name") : key_line(*t, "sentinels"), w, "sentinels",
               "\"" + n + "\" is already the name of another process");
        names_.push_back(n);
      }
    }
    if (auto q = integer(*t, "quorum", w, 1, c.sentinels)) c.quorum = static_cast<int>(*q);
    if (auto d = duration(*t, "down_after", w, c.line, false, Positive)) c.down_after = *d;
    if (auto d = duration(*t, "failover_timeout", w, c.line, false, Positive)) c.failover_timeout = *d;
    if (auto d = duration(*t, "ping_period", w, c.line, false, Positive)) c.ping_period = *d;
    if (auto cl = clock(*t, w)) c.clock = *cl;
    if (std::none_of(s.nodes.begin(), s.nodes.end(), [](const NodeConfig& n) { return !n.replica_of.empty(); }))
      fail(c.line, w, "", "a sentinel needs a master with at least one replica (replica_of = ...)");
  }

  void name_default(const std::string& n, const std::string& w) {
    if (std::find(names_.begin(), names_.end(), n) != names_.end())
      fail(1, w, "name", "\"" + n + "\" is taken by another process: name this one explicitly");
    names_.push_back(n);
  }

  void storage(const toml::table& root, Scenario& s) {
    const toml::table* t = table(root, "storage", false);
    if (t) {
      const std::string w = "[storage]";
      check_keys(*t, w, {"name", "initial", "clock"});
      if (t->get("name")) name(*t, w, s.storage.name);
      else name_default(s.storage.name, w);
      if (auto i = integer(*t, "initial", w, INT64_MIN / 4, INT64_MAX / 4)) s.storage.initial = *i;
      if (auto c = clock(*t, w)) s.storage.clock = *c;
    } else {
      name_default(s.storage.name, "[storage]");
    }
  }

  void clients(const toml::table& root, Scenario& s) {
    const auto tables = array_of_tables(root, "client");
    if (tables.empty()) fail(1, "top level", "[[client]]", "missing: a scenario needs at least one client");
    for (const toml::table* t : tables) {
      const std::string w = "[[client]]";
      check_keys(*t, w, {"name", "count", "start", "job", "work", "hold", "repeat", "think", "check_before_write",
                         "storage_timeout", "clock"});
      ClientConfig c;
      c.line = line_of(*t);
      // count = N: N clients alike, named <name>1 .. <name>N.
      const int copies = static_cast<int>(integer(*t, "count", w, 1, 1'000'000).value_or(0));
      if (copies == 0) {
        name(*t, w, c.name);
      } else {
        name(*t, w, c.name, true);
        for (int i = 1; i <= copies; ++i) {
          const std::string n = c.name + std::to_string(i);
          if (std::find(names_.begin(), names_.end(), n) != names_.end() || n == storage_name_)
            fail(key_line(*t, "count"), w, "count", "\"" + n + "\" is already the name of another process");
          names_.push_back(n);
        }
      }
      if (auto r = range(*t, "start", w)) {
        c.start = *r;
        if (c.start.hi >= s.duration)
          fail(key_line(*t, "start"), w, "start",
               format_range(c.start) + " is not within the run (duration = " + format_duration(s.duration) + ")");
      }
      if (auto j = choice(*t, "job", w, {"read-modify-write", "hold"})) c.job = *j;
      for (const char* key : {"work", "check_before_write", "storage_timeout"})
        if (c.job == "hold" && t->get(key))
          fail(key_line(*t, key), w, key, "applies to job = \"read-modify-write\", not to job = \"hold\"");
      if (c.job != "hold" && t->get("hold"))
        fail(key_line(*t, "hold"), w, "hold", "applies to job = \"hold\" (this client's job is " + c.job + ")");
      if (auto r = range(*t, "hold", w)) c.hold = *r;
      if (auto r = range(*t, "work", w)) c.work = *r;
      if (auto n = count(*t, "repeat", w, 1)) c.repeat = *n;
      if (auto r = range(*t, "think", w)) c.think = *r;
      if (auto b = boolean(*t, "check_before_write", w)) c.check_before_write = *b;
      if (auto d = duration(*t, "storage_timeout", w, c.line)) c.storage_timeout = *d;
      if (auto cl = clock(*t, w)) c.clock = *cl;
      if (copies == 0) {
        s.clients.push_back(c);
      } else {
        const std::string prefix = c.name;
        for (int i = 1; i <= copies; ++i) {
          c.name = prefix + std::to_string(i);
          s.clients.push_back(c);
        }
      }
    }
  }

  std::string process(const toml::table& t, std::string_view key, const std::string& w, bool required) const {
    auto v = str(t, key, w, line_of(t), required);
    if (!v) return "";
    if (std::find(names_.begin(), names_.end(), *v) == names_.end())
      fail(key_line(t, key), w, std::string(key), "no process named \"" + *v + "\" (processes: " + join(names_) + ")");
    return *v;
  }

  // A [[fault]] table as its kind reads it (harness/faults/kind.hpp): the
  // getters above, at this table, under "[[fault]] <kind>".
  class FaultFields final : public FaultReader {
   public:
    FaultFields(const Loader& l, const toml::table& t, const std::string& where, const Scenario& s)
        : l_(l), t_(t), where_(where), s_(s) {}
    bool has(std::string_view key) const override { return t_.get(key) != nullptr; }
    std::string process(std::string_view key, bool required) const override { return l_.process(t_, key, where_, required); }
    std::optional<Duration> duration(std::string_view key, bool required, FaultReader::Sign sign) const override {
      return l_.duration(t_, key, where_, line_of(t_), required, static_cast<Loader::Sign>(sign));
    }
    std::optional<double> number(std::string_view key) const override { return l_.number(t_, key, where_); }
    std::optional<std::int64_t> integer(std::string_view key, std::int64_t lo, std::int64_t hi) const override {
      return l_.integer(t_, key, where_, lo, hi);
    }
    std::optional<bool> boolean(std::string_view key) const override { return l_.boolean(t_, key, where_); }
    std::vector<std::vector<std::string>> process_groups(std::string_view key) const override {
      return l_.groups(t_, key, where_);
    }
    [[noreturn]] void fail(std::string_view key, const std::string& what) const override {
      l_.fail(l_.key_line(t_, key), where_, std::string(key), what);
    }
    const Scenario& scenario() const override { return s_; }

   private:
    const Loader& l_;
    const toml::table& t_;
    const std::string& where_;
    const Scenario& s_;
  };
  static_assert(static_cast<int>(FaultReader::Any) == Any && static_cast<int>(FaultReader::NonNegative) == NonNegative &&
                static_cast<int>(FaultReader::Positive) == Positive && static_cast<int>(FaultReader::NonZero) == NonZero);

  void faults(const toml::table& root, Scenario& s) {
    for (const toml::table* t : array_of_tables(root, "fault")) {
      const std::string w = "[[fault]]";
      FaultSpec f;
      f.line = line_of(*t);
      const std::string kind = str(*t, "kind", w, f.line, true).value();
      const auto k = find_fault_kind(kind);
      if (!k) fail(key_line(*t, "kind"), w, "kind", "\"" + kind + "\" is not a fault kind (" + fault_kind_names(" | ") + ")");
      f.kind = *k;
      const FaultKindInfo& info = fault_kind(*k);
      const std::string wk = "[[fault]] " + kind;
      std::vector<std::string> allowed{"kind", "at", "on", "after"};
      allowed.insert(allowed.end(), info.keys.begin(), info.keys.end());
      check_keys(*t, wk, allowed, "does not apply to a " + kind + " fault");
      when(*t, wk, s, f);
      info.parse(FaultFields(*this, *t, wk, s), f);
      s.faults.push_back(f);
    }
  }

  // Exactly one of at = "<time>" and on = "<process> <event>" (with after).
  void when(const toml::table& t, const std::string& w, const Scenario& s, FaultSpec& f) const {
    const bool has_at = t.get("at") != nullptr, has_on = t.get("on") != nullptr;
    if (has_at == has_on)
      fail(f.line, w, has_at ? "on" : "at", "a fault needs exactly one of at = \"<time>\" and on = \"<process> <event>\"");
    if (has_at) {
      f.at = duration(t, "at", w, f.line);
      if (*f.at >= s.duration)
        fail(key_line(t, "at"), w, "at",
             format_duration(*f.at) + " is not within the run (duration = " + format_duration(s.duration) + ")");
      if (t.get("after")) fail(key_line(t, "after"), w, "after", "goes with on = \"...\", not with at");
    } else {
      trigger(t, w, f);
      if (auto a = duration(t, "after", w, f.line)) f.after = *a;
    }
  }

  void trigger(const toml::table& t, const std::string& w, FaultSpec& f) const {
    const std::string on = str(t, "on", w, f.line).value();
    const auto space = on.find(' ');
    if (space == std::string::npos)
      fail(key_line(t, "on"), w, "on", "\"" + on + "\": write on = \"<process> <event>\", e.g. \"client1 acquired\"");
    f.on_process = on.substr(0, space);
    std::string event = on.substr(space + 1);
    if (const auto hash = event.find('#'); hash != std::string::npos) {
      const std::string n = event.substr(hash + 1);
      event = event.substr(0, hash);
      if (n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos || std::stoi(n) < 1)
        fail(key_line(t, "on"), w, "on", "\"#" + n + "\": the occurrence must be a whole number from 1");
      f.on_occurrence = std::stoi(n);
    }
    f.on_event = event;
    if (std::find(names_.begin(), names_.end(), f.on_process) == names_.end())
      fail(key_line(t, "on"), w, "on", "no process named \"" + f.on_process + "\" (processes: " + join(names_) + ")");
    const auto ev = event_from_name(event);
    if (!ev || !fault_may_wait_for(*ev))
      fail(key_line(t, "on"), w, "on", "\"" + event + "\" is not an event a fault can wait for (see `locksim list`)");
  }

  // Partition groups: two or more non-empty arrays of process names, none in two.
  std::vector<std::vector<std::string>> groups(const toml::table& t, std::string_view key, const std::string& w) const {
    const std::string k(key);
    const toml::node* n = t.get(key);
    if (!n) fail(line_of(t), w, k, "missing: write " + k + " = [[\"client1\"], [\"redis1\", \"redis2\"]]");
    const toml::array* arr = n->as_array();
    const int line = key_line(t, key);
    if (!arr || arr->size() < 2) fail(line, w, k, "expected at least two groups, e.g. [[\"client1\"], [\"redis1\"]]");
    std::vector<std::vector<std::string>> out;
    std::vector<std::string> seen;
    for (const toml::node& g : *arr) {
      const toml::array* ga = g.as_array();
      if (!ga || ga->empty()) fail(line, w, k, "each group is a non-empty array of process names");
      out.emplace_back();
      for (const toml::node& name : *ga) {
        if (!name.is_string()) fail(line, w, k, "each group is an array of process names (strings)");
        const std::string p = name.as_string()->get();
        if (std::find(names_.begin(), names_.end(), p) == names_.end())
          fail(line, w, k, "no process named \"" + p + "\" (processes: " + join(names_) + ")");
        if (std::find(seen.begin(), seen.end(), p) != seen.end()) fail(line, w, k, "\"" + p + "\" is in two groups");
        seen.push_back(p);
        out.back().push_back(p);
      }
    }
    return out;
  }

  void expect(const toml::table& root, Scenario& s) const {
    const toml::table* t = table(root, "expect", false);
    if (!t) return;
    const std::string w = "[expect]";
    check_keys(*t, w, {"violations", "liveness_window"});
    s.expect.present = true;
    const toml::node* v = t->get("violations");
    if (!v) fail(line_of(*t), w, "violations", "missing: write violations = [] for a safe run");
    const toml::array* arr = v->as_array();
    if (!arr) fail(key_line(*t, "violations"), w, "violations", "expected an array of violation kinds");
    for (const toml::node& item : *arr) {
      const int line = key_line(*t, "violations");
      if (!item.is_string()) fail(line, w, "violations", "expected violation kinds as strings");
      const std::string name = item.as_string()->get();
      const auto kind = parse_violation(name);
      if (!kind) {
        std::vector<std::string> known;
        for (ViolationKind k : kAllViolationKinds) known.emplace_back(violation_name(k));
        fail(line, w, "violations", "\"" + name + "\" is not a violation kind (" + join(known) + ")");
      }
      if (!s.expect.violations.insert(*kind).second) fail(line, w, "violations", "\"" + name + "\" is listed twice");
    }
    s.expect.liveness_window = duration(*t, "liveness_window", w, line_of(*t), false, Positive);
  }

  std::string path_;
  std::vector<std::string> names_;  // every process, in declaration order
  std::string storage_name_ = "storage";
  bool storage_named_ = false;
  std::vector<std::string> sentinel_names_;  // the sentinel processes' names; empty: no [sentinel]
};

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string& path) { return Loader(path).load(text); }

Scenario load_scenario(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ScenarioError(path + ": is a directory, not a scenario file (`locksim check " + path + "` runs every one in it)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path + ": cannot read the file");
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_scenario(buf.str(), path);
}

}  // namespace locksim
