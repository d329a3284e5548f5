#include "reports/quiz.hpp"

#include <fmt/format.h>

#include <vector>

#include "harness/faults/kind.hpp"
#include "harness/scenario_writer.hpp"
#include "lockalgos/registry.hpp"
#include "reports/words.hpp"

namespace locksim {

namespace {

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : std::string(separator)) + p;
  return out;
}

// "key = value" lines (as the scenario writer and the fault table write them) on one line.
std::string one_line(const std::string& toml_lines) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  while (from < toml_lines.size()) {
    const std::size_t end = toml_lines.find('\n', from);
    const std::string line = toml_lines.substr(from, end - from);
    if (!line.empty()) parts.push_back(line);
    from = end == std::string::npos ? toml_lines.size() : end + 1;
  }
  return join(parts, ", ");
}

std::string ppm_words(std::int64_t ppb, Lang lang) {
  const std::string ppm = ppb % 1000 == 0 ? std::to_string(std::abs(ppb) / 1000) : fmt::format("{}", std::abs(ppb) / 1000.0);
  return say(lang, ppb > 0 ? W::QuizClockFast : W::QuizClockSlow, {{"ppm", ppm}});
}

std::string clock_words(const ClockSpec& c, Lang lang) {
  std::vector<std::string> parts;
  if (!c.offset.is_zero())
    parts.push_back(say(lang, W::QuizClockOff, {{"d", std::string(c.offset > Duration::zero() ? "+" : "") + format_duration(c.offset)}}));
  if (c.drift_ppb != 0) parts.push_back(ppm_words(c.drift_ppb, lang));
  return join(parts, ", ");
}

// The [lock] keys beyond algorithm, flavour, ttl and fencing, as the writer puts them.
std::string lock_options(const Scenario& s) {
  Scenario lock_only;
  lock_only.lock = s.lock;
  const std::string toml = to_toml(lock_only);
  const std::size_t begin = toml.find("\n[lock]\n");
  if (begin == std::string::npos) return "";
  const std::size_t end = toml.find("\n\n", begin + 1);
  const auto shown_elsewhere = [](const std::string& line) {
    for (const char* key : {"algorithm ", "flavour ", "ttl ", "fencing "})
      if (line.rfind(key, 0) == 0) return true;
    return false;
  };
  std::string lines;
  for (std::size_t from = begin + 8; from < end;) {
    const std::size_t eol = toml.find('\n', from);
    const std::string line = toml.substr(from, eol - from);
    if (!shown_elsewhere(line)) lines += line + "\n";
    from = eol + 1;
  }
  return one_line(lines);
}

std::string lock_line(const Scenario& s) {
  const LockConfig& l = s.lock;
  std::string out = l.algorithm;
  if (!l.flavour.empty()) out += " (" + l.flavour + ")";
  if (l.ttl) out += ", ttl " + format_duration(*l.ttl);
  out += ", fencing " + std::string(fencing_name(l.fencing));
  const std::string more = lock_options(s);
  return more.empty() ? out : out + "; " + more;
}

std::string node_words(const NodeConfig& n, Lang lang) {
  std::vector<std::string> parts;
  if (!n.replica_of.empty())
    parts.push_back(say(lang, W::QuizReplicaOf, {{"master", n.replica_of}, {"lag", format_range(n.replication_lag)}}) +
                    (n.expiry_as_pxat ? "" : say(lang, W::QuizExpiryAsPx)));
  if (n.persistence == Persistence::AofAlways) parts.push_back(say(lang, W::QuizAofAlways));
  if (!n.restart_delay.is_zero()) parts.push_back(say(lang, W::QuizRestartDelay, {{"d", format_duration(n.restart_delay)}}));
  if (const std::string c = clock_words(n.clock, lang); !c.empty()) parts.push_back(c);
  return parts.empty() ? n.name : n.name + " (" + join(parts, "; ") + ")";
}

std::string client_words(const ClientConfig& c, Lang lang) {
  std::string job = c.job == JobKind::Hold ? say(lang, W::QuizJobHold, {{"range", format_range(c.hold)}})
                                           : say(lang, W::QuizJobWork,
                                                 {{"range", format_range(c.work)}, {"check", c.check_before_write ? say(lang, W::QuizJobCheck) : ""}});
  std::string out = say(lang, W::QuizClientFrom, {{"range", format_range(c.start)}, {"job", job}});
  if (c.repeat == kForever) out += say(lang, W::QuizForever);
  else if (c.repeat != 1) out += say(lang, W::QuizTimes, {{"n", std::to_string(c.repeat)}});
  if (!(c.think.is_fixed() && c.think.lo.is_zero())) out += say(lang, W::QuizApart, {{"range", format_range(c.think)}});
  if (!c.storage_timeout.is_zero()) out += say(lang, W::QuizStorageWait, {{"d", format_duration(c.storage_timeout)}});
  if (const std::string clock = clock_words(c.clock, lang); !clock.empty()) out += "; " + clock;
  return out;
}

std::string fault_words(const FaultSpec& f, Lang lang) {
  const std::string event = f.on_event + (f.on_occurrence != 1 ? fmt::format("#{}", f.on_occurrence) : "");
  const std::string when = f.at ? say(lang, W::QuizFaultAt, {{"t", format_duration(*f.at)}})
                                : say(lang, f.after.is_zero() ? W::QuizFaultOn : W::QuizFaultOnAfter,
                                      {{"process", f.on_process}, {"event", event}, {"d", format_duration(f.after)}});
  std::string keys;
  FaultWriter w(keys);
  fault_kind(f.kind).write(w, f);
  // Padded as shown: a CJK character is two columns wide.
  const std::size_t pad = 22 - std::min<std::size_t>(22, display_width(when));
  return fmt::format("{}{} {:<12} {}", when, std::string(pad, ' '), fault_kind_name(f.kind), one_line(keys));
}

// Consecutive clients set up alike, as one line: "client1..client20 (20 alike)".
std::vector<std::string> client_lines(const std::vector<ClientConfig>& clients, Lang lang) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < clients.size();) {
    const std::string words = client_words(clients[i], lang);
    std::size_t j = i + 1;
    while (j < clients.size() && client_words(clients[j], lang) == words) ++j;
    const std::string who = j - i == 1 ? clients[i].name
                                       : say(lang, W::QuizAlike, {{"first", clients[i].name}, {"last", clients[j - 1].name}, {"n", std::to_string(j - i)}});
    lines.push_back(who + ", " + words);
    i = j;
  }
  return lines;
}

void quiz_block(std::string& out, std::string_view heading, const std::vector<std::string>& lines) {
  for (std::size_t i = 0; i < lines.size(); ++i)
    out += fmt::format("  {:<12}{}\n", i == 0 ? heading : "", lines[i]);
}

}  // namespace

std::string setup_text(const Scenario& s, Lang lang) {
  // The headings in the language; the set-up's lines as the scenario file words them.
  const auto block = [&out_lang = lang](std::string& out, W heading, const std::vector<std::string>& lines) {
    quiz_block(out, say(out_lang, heading), lines);
  };
  std::string out = say(lang, W::QuizSetup, {{"path", s.path}});
  block(out, W::QuizLock, {lock_line(s)});
  std::vector<std::string> nodes;
  for (const NodeConfig& n : s.nodes) nodes.push_back(node_words(n, lang));
  block(out, W::QuizNodes, nodes);
  if (s.sentinel.present)
    block(out, W::QuizSentinel,
          {say(lang, W::QuizSentinelLine, {{"name", s.sentinel.name}, {"ping", format_duration(s.sentinel.ping_period)},
                                           {"down", format_duration(s.sentinel.down_after)}})});
  std::string network = say(lang, W::QuizNetworkDelay, {{"range", format_range(s.network.delay)}});
  if (s.network.loss > 0) network += say(lang, W::QuizNetworkLoss, {{"p", fmt::format("{:g}", 100 * s.network.loss)}});
  if (!s.network.fifo) network += say(lang, W::QuizNetworkReorder);
  block(out, W::QuizNetwork, {network});
  std::string storage = say(lang, W::QuizStorageStart, {{"name", s.storage.name}, {"n", std::to_string(s.storage.initial)}});
  if (const std::string c = clock_words(s.storage.clock, lang); !c.empty()) storage += "; " + c;
  block(out, W::QuizStorage, {storage});
  block(out, W::QuizClients, client_lines(s.clients, lang));
  std::vector<std::string> faults;
  for (const FaultSpec& f : s.faults) faults.push_back(fault_words(f, lang));
  block(out, W::QuizFaults, faults.empty() ? std::vector<std::string>{say(lang, W::QuizNone)} : faults);
  block(out, W::QuizSimulated, {say(lang, W::QuizSeed, {{"d", format_duration(s.duration)}, {"seed", std::to_string(s.seed)}})});
  return out;
}

std::string prediction_question(Lang lang) {
  std::string out = say(lang, W::QuizQuestion);
  for (ViolationKind k : kAllViolationKinds) out += fmt::format("  {:<16} {}\n", violation_name(k), kind_help(lang, k));
  return out;
}

std::optional<std::set<ViolationKind>> parse_prediction(std::string_view text, std::string& error) {
  std::set<ViolationKind> kinds;
  std::string word;
  const auto take = [&]() -> bool {
    if (word.empty() || word == "none") return true;
    const auto k = parse_violation(word);
    if (!k) {
      std::vector<std::string> names;
      for (ViolationKind v : kAllViolationKinds) names.emplace_back(violation_name(v));
      error = "\"" + word + "\" is not a violation kind (" + join(names, ", ") + ", or none)";
      return false;
    }
    kinds.insert(*k);
    return true;
  };
  for (char c : text) {
    if (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!take()) return std::nullopt;
      word.clear();
    } else {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (!take()) return std::nullopt;
  return kinds;
}

std::string score_text(const std::set<ViolationKind>& predicted, const std::set<ViolationKind>& found, Lang lang) {
  const auto names = [lang](const std::set<ViolationKind>& kinds) {
    std::vector<std::string> v;
    for (ViolationKind k : kinds) v.emplace_back(kind_words(lang, k));
    return v.empty() ? say(lang, W::NoViolation) : join(v, word(lang, W::KindSeparator));
  };
  std::set<ViolationKind> missed, extra;
  for (ViolationKind k : found)
    if (!predicted.count(k)) missed.insert(k);
  for (ViolationKind k : predicted)
    if (!found.count(k)) extra.insert(k);
  std::string out = say(lang, W::QuizPredicted, {{"predicted", names(predicted)}, {"found", names(found)}});
  if (missed.empty() && extra.empty()) return out + say(lang, W::QuizRight);
  out += say(lang, W::QuizNotQuite);
  if (!missed.empty()) out += say(lang, W::QuizAlsoShows, {{"kinds", names(missed)}}) + say(lang, extra.empty() ? W::QuizStop : W::QuizSemicolon);
  if (!extra.empty()) out += say(lang, W::QuizDoesNotShow, {{"kinds", names(extra)}});
  return out + "\n";
}

void drop_expectation(Scenario& s) {
  s.expect.present = false;
  s.expect.violations.clear();
}

}  // namespace locksim
