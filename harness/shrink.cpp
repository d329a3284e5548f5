#include "harness/shrink.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "harness/faults/kind.hpp"
#include "harness/run.hpp"

namespace locksim {

namespace {

class Shrinker {
 public:
  Shrinker(ViolationKind kind, std::uint64_t max_events, const std::function<void(int)>& on_trial)
      : kind_(kind), max_events_(max_events), on_trial_(on_trial) {}

  bool fails(const Scenario& s) {
    ++trials;
    if (on_trial_) on_trial_(trials);
    RunOptions o;
    o.max_events = max_events_;
    o.keep_events = 0;
    return run_scenario(s, o).verdict.count(kind_) > 0;
  }

  // ddmin over units of faults (a crash travels with the restart that undoes it).
  void drop_faults(Scenario& s) {
    std::vector<std::vector<FaultSpec>> units;
    for (std::size_t i = 0; i < s.faults.size(); ++i) {
      if (fault_kind(s.faults[i].kind).undoes) continue;  // it travels with what it undoes
      units.push_back({s.faults[i]});
      for (std::size_t j = i + 1; j < s.faults.size(); ++j)
        if (undoes(s.faults[j], s.faults[i])) {
          units.back().push_back(s.faults[j]);
          break;
        }
    }
    auto with = [&](const std::vector<std::vector<FaultSpec>>& us) {
      Scenario t = s;
      t.faults.clear();
      for (const auto& u : us) t.faults.insert(t.faults.end(), u.begin(), u.end());
      sort_faults(t.faults);
      return t;
    };
    std::size_t n = 2;
    while (units.size() >= 2) {
      const std::size_t chunk = (units.size() + n - 1) / n;
      bool reduced = false;
      for (std::size_t start = 0; start < units.size(); start += chunk) {
        std::vector<std::vector<FaultSpec>> rest(units.begin(), units.begin() + static_cast<long>(start));
        rest.insert(rest.end(), units.begin() + static_cast<long>(std::min(units.size(), start + chunk)), units.end());
        if (fails(with(rest))) {
          units = std::move(rest);
          n = std::max<std::size_t>(n - 1, 2);
          reduced = true;
          break;
        }
      }
      if (!reduced) {
        if (n >= units.size()) break;
        n = std::min(units.size(), n * 2);
      }
    }
    if (units.size() == 1 && fails(with({}))) units.clear();
    s = with(units);
  }

  // The smallest value in [lo, value] for which `apply` still fails (bisection
  // at millisecond resolution).
  template <typename Apply>
  Duration smallest(Scenario& s, Duration lo, Duration value, Apply apply) {
    Duration hi = value;
    while (hi - lo > Duration::ms(1)) {
      const Duration mid = lo + (hi - lo) / 2;
      Scenario t = s;
      apply(t, mid);
      if (fails(t)) hi = mid;
      else lo = mid;
    }
    apply(s, hi);
    return hi;
  }

  void shorten(Scenario& s) {
    ceilings_.clear();
    for (const FaultSpec& f : s.faults) {
      const auto& m = fault_kind(f.kind).magnitude;
      ceilings_.push_back({f.duration.value_or(Duration::zero()), m ? m->size(f) : Duration::zero()});
    }
    for (std::size_t i = 0; i < s.faults.size(); ++i) {
      FaultSpec& f = s.faults[i];
      if (f.duration)
        smallest(s, Duration::zero(), *f.duration, [i](Scenario& t, Duration d) { t.faults[i].duration = max(d, Duration::ms(1)); });
      if (const auto& m = fault_kind(f.kind).magnitude)
        smallest(s, Duration::zero(), m->size(f), [i, resize = m->resize](Scenario& t, Duration d) { resize(t.faults[i], d); });
    }
  }

  // Each fault as late as it can come and still cause the failure (bisection,
  // 1 ms): what is left is the last moment the failure needed it.
  void later(Scenario& s) {
    for (std::size_t i = 0; i < s.faults.size(); ++i) {
      if (!s.faults[i].at) continue;
      Duration lo = *s.faults[i].at, hi = s.duration;  // lo fails; is there a later time that does?
      while (hi - lo > Duration::ms(1)) {
        const Duration mid = lo + (hi - lo) / 2;
        Scenario t = s;
        t.faults[i].at = mid;
        if (keeps_order(t, i) && fails(t)) lo = mid;
        else hi = mid;
      }
      s.faults[i].at = lo;
    }
  }
  // A fault that undoes another (a restart, a crash) must stay after it.
  static bool keeps_order(const Scenario& s, std::size_t i) {
    const FaultSpec& f = s.faults[i];
    for (std::size_t j = 0; j < s.faults.size(); ++j) {
      const FaultSpec& g = s.faults[j];
      if (j == i || g.target != f.target || !g.at) continue;
      if (undoes(g, f) && *g.at <= *f.at) return false;
      if (undoes(f, g) && *g.at >= *f.at) return false;
    }
    return true;
  }

  // Round times and durations to the coarsest unit that keeps the failure: a
  // schedule a person can read.
  void round(Scenario& s) {
    for (std::size_t i = 0; i < s.faults.size(); ++i) {
      bool done = false;
      for (Duration unit : {Duration::s(1), Duration::ms(100), Duration::ms(10), Duration::ms(1)}) {
        auto up = [unit](Duration d) { return Duration::ns((d.count_ns() + unit.count_ns() - 1) / unit.count_ns() * unit.count_ns()); };
        auto down = [unit](Duration d) { return Duration::ns(d.count_ns() / unit.count_ns() * unit.count_ns()); };
        for (bool round_up : {true, false}) {  // the time to the nearest unit either way
          Scenario t = s;
          FaultSpec& f = t.faults[i];
          if (f.at) f.at = round_up ? up(*f.at) : down(*f.at);
          // The loader takes only faults within the run: rounding a fault
          // moved to the last millisecond up to the end would make the file
          // unreadable.
          if (f.at && *f.at >= s.duration) continue;
          // Up to a readable unit, but never past what the run drew: a
          // shrunk schedule is no bigger than the one it came from (12.25 s
          // drawn, 12.25 s needed: 12 s is tried, never 13 s).
          auto fit = [&](Duration d, Duration ceiling) {
            const Duration u = max(up(d), unit), dn = down(d);
            if (u <= ceiling) return u;
            return dn.is_zero() ? d : dn;
          };
          if (f.duration) f.duration = fit(*f.duration, ceilings_[i].duration);
          const auto& m = fault_kind(f.kind).magnitude;
          const bool rounds = m && m->rounds;
          if (rounds) m->resize(f, fit(m->size(f), ceilings_[i].size));  // sizes are magnitudes; resize keeps the sign
          const bool same = t.faults[i].at == s.faults[i].at && t.faults[i].duration == s.faults[i].duration &&
                            (!rounds || m->size(t.faults[i]) == m->size(s.faults[i]));
          if (same) {
            done = true;
            break;
          }
          if (keeps_order(t, i) && fails(t)) {
            s = std::move(t);
            done = true;
            break;
          }
        }
        if (done) break;
      }
    }
  }

  // Clients that no fault names and that the failure does not need.
  void drop_clients(Scenario& s) {
    for (std::size_t i = s.clients.size(); i-- > 0 && s.clients.size() > 1;) {
      const std::string& name = s.clients[i].name;
      const bool named = std::any_of(s.faults.begin(), s.faults.end(), [&](const FaultSpec& f) {
        if (f.target == name || f.from == name || f.to == name || f.on_process == name) return true;
        for (const auto& g : f.groups)
          if (std::find(g.begin(), g.end(), name) != g.end()) return true;
        return false;
      });
      if (named) continue;
      Scenario t = s;
      t.clients.erase(t.clients.begin() + static_cast<long>(i));
      if (fails(t)) s = std::move(t);
    }
  }

  int trials = 0;

 private:
  // Each fault's duration and size as the failing run drew them (before
  // shorten), indexed like the faults: rounding never goes past them.
  struct Ceiling {
    Duration duration, size;
  };
  std::vector<Ceiling> ceilings_;
  ViolationKind kind_;
  std::uint64_t max_events_;
  const std::function<void(int)>& on_trial_;
};

}  // namespace

ShrinkResult shrink(const Scenario& failing, ViolationKind kind, std::uint64_t max_events,
                    const std::function<void(int trials)>& on_trial) {
  Shrinker k(kind, max_events, on_trial);
  Scenario s = failing;
  k.drop_faults(s);
  k.shorten(s);
  k.later(s);
  k.round(s);
  k.drop_clients(s);

  RunOptions o;
  o.max_events = max_events;
  s.expect = Expectation{};
  s.expect.present = true;
  s.expect.liveness_window = failing.expect.liveness_window;
  s.expect.violations = run_scenario(s, o).verdict;

  return {std::move(s), k.trials};
}

}  // namespace locksim
