// Everything about the fault kinds that is not one kind's own: read from the
// table (table.hpp), once each.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "harness/faults/kind.hpp"
#include "sim/word_ids.hpp"

namespace locksim {

namespace {

#define LOCKSIM_FAULT_ENTRY(Name) &k##Name##Fault,
constexpr std::array kTable = {LOCKSIM_FAULT_KINDS(LOCKSIM_FAULT_ENTRY)};
#undef LOCKSIM_FAULT_ENTRY

}  // namespace

std::span<const FaultKindInfo* const> fault_kinds() { return kTable; }

const FaultKindInfo& fault_kind(FaultKind k) { return *kTable.at(static_cast<std::size_t>(k)); }

std::string_view fault_kind_name(FaultKind k) { return fault_kind(k).name; }

std::optional<FaultKind> find_fault_kind(std::string_view name) {
  for (const FaultKindInfo* k : kTable)
    if (k->name == name) return k->kind;
  return std::nullopt;
}

std::vector<FaultKind> drawn_kinds(const Scenario& base) {
  std::vector<FaultKind> out;
  for (const FaultKindInfo* k : kTable)
    if (k->draw && (!k->offered || k->offered(base))) out.push_back(k->kind);
  return out;
}

std::string fault_kind_names(std::string_view separator, bool drawn_only) {
  std::string out;
  for (const FaultKindInfo* k : kTable)
    if (!drawn_only || k->draw) out += (out.empty() ? "" : std::string(separator)) + std::string(k->name);
  return out;
}

bool undoes(const FaultSpec& later, const FaultSpec& earlier) {
  return fault_kind(later.kind).undoes == earlier.kind && later.target == earlier.target;
}

Phrase describe_fault(const FaultSpec& f) {
  Phrase what = fault_kind(f.kind).describe(f);
  if (f.at) return Phrase(W::FaultAt).duration("t", *f.at).part("what", std::move(what));
  // The file's notation for the n-th time the event comes: "read#2".
  const std::string event = f.on_occurrence != 1 ? f.on_event + "#" + std::to_string(f.on_occurrence) : f.on_event;
  Phrase when(f.after.is_zero() ? W::FaultOn : W::FaultOnAfter);
  when.name("process", f.on_process).name("event", event);
  if (!f.after.is_zero()) when.duration("d", f.after);
  return when.part("what", std::move(what));
}

void sort_faults(std::vector<FaultSpec>& faults) {
  FaultSortScratch scratch;
  sort_faults(faults, scratch);
}

void sort_faults(std::vector<FaultSpec>& faults, FaultSortScratch& scratch) {
  // Stable by `at` (a fault on an event counts as at zero). Explore sorts
  // every run's schedule: the keys and positions are sorted, and each
  // FaultSpec (strings and all) moved once, if the order changes at all.
  auto key = [](const FaultSpec& f) { return f.at.value_or(Duration::zero()); };
  if (std::is_sorted(faults.begin(), faults.end(), [&](const FaultSpec& a, const FaultSpec& b) { return key(a) < key(b); }))
    return;
  std::vector<std::pair<Duration, std::size_t>>& order = scratch.order;
  order.clear();
  for (std::size_t i = 0; i < faults.size(); ++i) order.emplace_back(key(faults[i]), i);
  std::sort(order.begin(), order.end());  // (key, position): the stable order
  std::vector<FaultSpec>& sorted = scratch.sorted;
  sorted.clear();
  for (const auto& [at, i] : order) sorted.push_back(std::move(faults[i]));
  faults.swap(sorted);  // the moved-from ones stay in the scratch until the next sort
}

}  // namespace locksim
