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
#include "harness/toml_guard.hpp"
#include "lockalgos/libraries.hpp"
#include "lockalgos/registry.hpp"
#include "sim/servers/table.hpp"

namespace locksim {

std::string_view job_name(JobKind k) { return k == JobKind::Hold ? "hold" : "read-modify-write"; }

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
  // `line_map`: the reported line of each line of the text (set_lock_option's
  // edited [lock] table); empty: the text is the file.
  explicit Loader(std::string path, std::vector<int> line_map = {})
      : path_(std::move(path)), line_map_(std::move(line_map)) {}

  Scenario load(std::string_view text) {
    // What toml++ 3.3.0 would assert on rather than report (harness/toml_guard.hpp).
    refuse_control_characters(text, path_);
    refuse_bad_table_headers(text, path_);
    text_ = text;
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
  using enum Sign;

  [[noreturn]] void fail(int line, const std::string& where, const std::string& key, const std::string& what) const {
    if (line > 0 && static_cast<std::size_t>(line) < line_map_.size()) line = line_map_[line];
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

  // [lock]: the table as written (for the writer), the common part, then the
  // algorithm's own options, which it parses itself through a LockReader.
  void lock(const toml::table& root, Scenario& s) {
    const toml::table& t = *table(root, "lock", true);
    s.lock.written = written(t);
    s.lock.line = line_of(t);
    lock_table(t, s.lock);
  }

 public:
  // REQUIRES: `c` is fresh but for its line.
  void lock_table(const toml::table& t, LockConfig& c) const {
    const std::string w = "[lock]";
    const LibraryInfo* lib = library(t, c);
    if (auto a = str(t, "algorithm", w, c.line, !lib)) {
      if (lib && *a != lib->algorithm)
        fail(key_line(t, "algorithm"), w, "algorithm",
             "\"" + *a + "\" contradicts library = \"" + c.library + "\", which is algorithm \"" +
                 std::string(lib->algorithm) + "\" (leave algorithm out: the library chooses it)");
      c.algorithm = *a;
    } else {
      c.algorithm = lib->algorithm;
    }
    const AlgorithmInfo* algo = find_algorithm(c.algorithm);
    if (!algo) {
      std::vector<std::string> known;
      for (const AlgorithmInfo& a : algorithms()) known.emplace_back(a.name);
      fail(key_line(t, "algorithm"), w, "algorithm", "unknown algorithm \"" + c.algorithm + "\" (known: " + join(known) + ")");
    }
    std::vector<std::string> allowed{"library", "algorithm", "flavour", "fencing"};
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
      if (lib && *f != lib->flavour)
        fail(key_line(t, "flavour"), w, "flavour",
             "\"" + *f + "\" contradicts library = \"" + c.library + "\", which is flavour \"" +
                 std::string(lib->flavour) + "\" of " + c.algorithm + " (leave flavour out: the library chooses it)");
      c.flavour = *f;
    } else if (lib) {
      c.flavour = lib->flavour;
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
    LockReader reader(*this, t, c.line);
    c.options = algo->parse(reader, c);
  }

  // [lock] library: a known id, or nothing. Unknown: the nearest id, and the list.
  const LibraryInfo* library(const toml::table& t, LockConfig& c) const {
    const auto id = str(t, "library", "[lock]", c.line);
    if (!id) return nullptr;
    const LibraryInfo* lib = find_library(*id);
    if (!lib) {
      std::vector<std::string> known;
      for (const LibraryInfo& l : libraries()) known.emplace_back(l.id);
      const std::string_view near = nearest_library(*id);
      fail(key_line(t, "library"), "[lock]", "library",
           "unknown library \"" + *id + "\"" + (near.empty() ? "" : " (did you mean \"" + std::string(near) + "\"?)") +
               "; known: " + join(known) + " (`locksim list`)");
    }
    c.library = *id;
    return lib;
  }

  // Only a model that replicates (Redis) takes replica_of (the lock's algorithm decides what the nodes are).
  void check_replicas(const Scenario& s) const {
    for (const NodeConfig& n : s.nodes)
      if (!n.replica_of.empty() && !server_model(find_algorithm(s.lock.algorithm)->server).replicates)
        fail(n.line, "[[node]]", "replica_of", "only Redis nodes replicate; " + s.lock.algorithm + " models its ensemble as one service");
    if (s.sentinel.present && !server_model(find_algorithm(s.lock.algorithm)->server).replicates)
      fail(s.sentinel.line, "[sentinel]", "sentinels", "Sentinel watches Redis masters; " + s.lock.algorithm + " has none");
  }

 private:
  // The algorithm's view of [lock]: typed getters whose rejections are the loader's.
  class LockReader final : public OptionReader {
   public:
    LockReader(const Loader& loader, const toml::table& t, int line) : l_(loader), t_(t), line_(line) {}
    bool has(std::string_view key) const override { return t_.get(key) != nullptr; }
    std::optional<Duration> duration(std::string_view key, Sign sign) override {
      return l_.duration(t_, key, kWhere, line_, false, sign);
    }
    std::optional<DurationRange> range(std::string_view key) override { return l_.range(t_, key, kWhere); }
    std::optional<int> count(std::string_view key, int lo) override { return l_.count(t_, key, kWhere, lo); }
    std::optional<double> number(std::string_view key) override { return l_.number(t_, key, kWhere); }
    std::optional<std::int64_t> integer(std::string_view key, std::int64_t lo, std::int64_t hi) override {
      return l_.integer(t_, key, kWhere, lo, hi);
    }
    std::optional<bool> boolean(std::string_view key) override { return l_.boolean(t_, key, kWhere); }
    std::optional<std::size_t> choice_index(std::string_view key, const std::vector<std::string_view>& names) override {
      const std::vector<std::string> options(names.begin(), names.end());
      const auto v = l_.choice(t_, key, kWhere, options);
      if (!v) return std::nullopt;
      return static_cast<std::size_t>(std::find(options.begin(), options.end(), *v) - options.begin());
    }
    [[noreturn]] void fail(std::string_view key, const std::string& what) override {
      l_.fail(l_.key_line(t_, key), kWhere, std::string(key), what);
    }

   private:
    inline static const std::string kWhere = "[lock]";
    const Loader& l_;
    const toml::table& t_;
    int line_;
  };

  // A table's keys with their values' text as the file has it, in file order.
  std::vector<LockConfig::Written> written(const toml::table& t) const {
    std::vector<LockConfig::Written> out;
    for (auto&& [k, v] : t)
      out.push_back({std::string(k.str()), source_text(v.source()), static_cast<int>(k.source().begin.line)});
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
    return out;
  }

  // The text of a region of the file (toml++ counts columns in code points).
  std::string source_text(const toml::source_region& r) const {
    auto offset = [this](const toml::source_position& p) {
      std::size_t at = 0;
      for (std::uint32_t line = 1; line < p.line && at < text_.size(); ++line) at = text_.find('\n', at) + 1;
      for (std::uint32_t col = 1; col < p.column && at < text_.size(); ++col) {
        ++at;  // past one code point: its lead byte, then its continuation bytes
        while (at < text_.size() && (static_cast<unsigned char>(text_[at]) & 0xC0) == 0x80) ++at;
      }
      return std::min(at, text_.size());
    };
    const std::size_t begin = offset(r.begin), end = offset(r.end);
    return std::string(text_.substr(begin, end > begin ? end - begin : 0));
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
    check_replicas(s);
  }

  // [sentinel]: the Sentinel processes watching every master that has a
  // replica (sim/servers/redis/sentinel.hpp). One by default; `sentinels = 3` is the
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
      check_keys(*t, w, {"name", "initial", "clock", "fenced_reads"});
      if (t->get("name")) name(*t, w, s.storage.name);
      else name_default(s.storage.name, w);
      if (auto i = integer(*t, "initial", w, INT64_MIN / 4, INT64_MAX / 4)) s.storage.initial = *i;
      if (auto c = clock(*t, w)) s.storage.clock = *c;
      if (auto f = boolean(*t, "fenced_reads", w)) {
        if (*f && s.lock.fencing != Fencing::Token)
          fail(key_line(*t, "fenced_reads"), w, "fenced_reads",
               "fenced reads check the lock's fencing token: they need [lock] fencing = \"token\"");
        s.storage.fenced_reads = *f;
      }
    } else {
      name_default(s.storage.name, "[storage]");
    }
  }

  void clients(const toml::table& root, Scenario& s) {
    const auto tables = array_of_tables(root, "client");
    if (tables.empty()) fail(1, "top level", "[[client]]", "missing: a scenario needs at least one client");
    for (const toml::table* t : tables) {
      const std::string w = "[[client]]";
      std::vector<std::string> keys{"name", "count", "start", "job", "work", "hold", "repeat", "think",
                                    "check_before_write", "storage_timeout", "clock"};
      const LibraryInfo* lib = find_library(s.lock.library);
      library_keys_named(*t, w, lib, keys);
      check_keys(*t, w, keys);
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
      if (auto j = choice(*t, "job", w, {"read-modify-write", "hold"}))
        c.job = *j == "hold" ? JobKind::Hold : JobKind::ReadModifyWrite;
      for (const char* key : {"work", "check_before_write", "storage_timeout"})
        if (c.job == JobKind::Hold && t->get(key))
          fail(key_line(*t, key), w, key, "applies to job = \"read-modify-write\", not to job = \"hold\"");
      if (c.job != JobKind::Hold && t->get("hold"))
        fail(key_line(*t, "hold"), w, "hold",
             "applies to job = \"hold\" (this client's job is " + std::string(job_name(c.job)) + ")");
      if (auto r = range(*t, "hold", w)) c.hold = *r;
      if (auto r = range(*t, "work", w)) c.work = *r;
      if (auto n = count(*t, "repeat", w, 1)) c.repeat = *n;
      if (auto r = range(*t, "think", w)) c.think = *r;
      if (auto b = boolean(*t, "check_before_write", w)) c.check_before_write = *b;
      if (auto d = duration(*t, "storage_timeout", w, c.line)) c.storage_timeout = *d;
      if (lib) library_use(*t, w, *lib, c);
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

  // A library's own [[client]] keys are allowed where [lock] names a library
  // that takes them; elsewhere the message says which libraries do.
  void library_keys_named(const toml::table& t, const std::string& w, const LibraryInfo* lib,
                          std::vector<std::string>& keys) const {
    if (lib)
      for (const LibraryOption& o : lib->options)
        if (std::find(keys.begin(), keys.end(), o.key) == keys.end()) keys.emplace_back(o.key);
    for (auto&& [k, v] : t) {
      const std::string key(k.str());
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
      std::vector<std::string> takers;
      for (const LibraryInfo& l : libraries())
        for (const LibraryOption& o : l.options)
          if (o.key == key) takers.emplace_back(l.id);
      if (takers.empty()) continue;  // check_keys says what it is
      fail(static_cast<int>(k.source().begin.line), w, key,
           (lib ? "not an option of library " + std::string(lib->id) : std::string("an option of a library scenario")) +
               " ([lock] library = ...; libraries that take it: " + join(takers) + ")");
    }
  }

  // The library's own keys of one [[client]], typed.
  void library_use(const toml::table& t, const std::string& w, const LibraryInfo& lib, ClientConfig& c) const {
    if (auto u = boolean(t, "using", w); u && *u) {
      c.library.using_routine = true;
      c.library.check = LibraryCheck::Aborted;  // the routine reads signal.aborted before its write
    }
    std::vector<std::string> names;
    for (const LibraryCheckInfo& k : lib.checks) names.emplace_back(k.name);
    if (auto k = choice(t, "check", w, names)) {
      if (c.library.using_routine)
        fail(key_line(t, "check"), w, "check", "using = true already checks signal.aborted before the write");
      for (const LibraryCheckInfo& known : lib.checks)
        if (known.name == *k) c.library.check = known.check;
    }
    if (c.job == JobKind::Hold && t.get("check"))
      fail(key_line(t, "check"), w, "check", "applies to job = \"read-modify-write\": a check comes before the write");
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
      return l_.duration(t_, key, where_, line_of(t_), required, sign);
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
  std::vector<int> line_map_;
  std::string_view text_;  // the file, while it is loaded
  std::vector<std::string> names_;  // every process, in declaration order
  std::string storage_name_ = "storage";
  bool storage_named_ = false;
  std::vector<std::string> sentinel_names_;  // the sentinel processes' names; empty: no [sentinel]
};

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string& path) { return Loader(path).load(text); }

void set_lock_option(Scenario& s, std::string_view key, std::optional<std::string> value_text) {
  set_lock_options(s, {{std::string(key), std::move(value_text)}});
}

void set_lock_options(Scenario& s, const std::vector<LockOptionChange>& changes) {
  std::vector<LockConfig::Written> written = s.lock.written;
  int line = s.lock.line;  // where a failure is told, if no key's line is better
  for (const LockOptionChange& change : changes) {
    // Named references, not a structured binding: clang 14 cannot capture one in a lambda.
    const std::string& key = change.key;
    const std::optional<std::string>& value_text = change.value_text;
    auto it = std::find_if(written.begin(), written.end(), [&](const auto& w) { return w.key == key; });
    const int at = it != written.end() ? it->line : s.lock.line;
    if (changes.size() == 1) line = at;
    if (!value_text) {
      if (it != written.end()) written.erase(it);
      continue;
    }
    try {
      const std::string probe = "v = " + *value_text;
      (void)toml::parse(std::string_view(probe));
    } catch (const toml::parse_error&) {
      throw ScenarioError(s.path + ":" + std::to_string(at) + ": [lock] '" + key + "': " + *value_text +
                          " is not a TOML value (a string keeps its quotes: \"10s\")");
    }
    if (it != written.end()) it->text = *value_text;
    else written.push_back({key, *value_text, s.lock.line});
  }
  // The edited table as a document, each key on the line the file has it
  // (a new key on [lock]'s), so that errors name the file's lines.
  std::string doc;
  std::vector<int> reported{0};  // by the document's line, from 1
  auto emit = [&](const std::string& text, int at) {
    doc += text + "\n";
    reported.push_back(at);
    for (char c : text)
      if (c == '\n') reported.push_back(at);
  };
  while (reported.size() < static_cast<std::size_t>(s.lock.line)) emit("", static_cast<int>(reported.size()));
  emit("[lock]", s.lock.line);
  for (const LockConfig::Written& w : written) {
    while (reported.size() < static_cast<std::size_t>(w.line)) emit("", static_cast<int>(reported.size()));
    emit(w.key + " = " + w.text, w.line);
  }
  toml::table root;
  try {
    root = toml::parse(std::string_view(doc), std::string_view(s.path));
  } catch (const toml::parse_error& e) {
    throw ScenarioError(s.path + ":" + std::to_string(line) + ": [lock]: the table does not read as TOML: " +
                        std::string(e.description()));
  }
  LockConfig lock;
  lock.line = s.lock.line;
  lock.written = std::move(written);
  Loader(s.path, std::move(reported)).lock_table(*root["lock"].as_table(), lock);
  std::swap(s.lock, lock);
  try {
    Loader(s.path).check_replicas(s);
  } catch (const ScenarioError&) {
    std::swap(s.lock, lock);
    throw;
  }
}

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
