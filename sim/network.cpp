#include "sim/network.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

#include "sim/world.hpp"

namespace locksim {

std::size_t Network::link(ProcId from, ProcId to) {
  const Ends e = ends(from, to);
  if (e.hi >= link_rows_.size()) link_rows_.resize(std::max(world_.process_count(), std::size_t{e.hi} + 1));
  LinkRow& row = link_rows_[e.hi];
  const std::size_t pair = e.lo - row.lo < row.width ? row.at + (e.lo - row.lo)  // (unsigned: below lo wraps past width)
                                                     : widen(row, e.hi, e.lo);
  const std::size_t k = 2 * pair + e.down;
  if (!made(stream(k)) && !link_info_[k].used) {  // its first message (a made stream has carried one)
    link_info_[k].used = true;
    links_used_.emplace_back(from, to);
  }
  return k;
}

std::size_t Network::widen(LinkRow& row, ProcId hi, ProcId lo) {
  // To at least twice the width (so that a row is copied a few times
  // whatever order its pairs come in), never past the row's own process.
  std::uint64_t first = lo, last = lo;
  if (row.width != 0) {
    first = std::min<std::uint64_t>(row.lo, lo);
    last = std::max<std::uint64_t>(std::uint64_t{row.lo} + row.width - 1, lo);
    const std::uint64_t want = 2 * std::uint64_t{row.width};
    if (last - first + 1 < want) {
      if (lo < row.lo) first = last + 1 >= want ? last + 1 - want : 0;
      else last = std::min<std::uint64_t>(first + want - 1, hi);
    }
  }
  if (pairs_.empty()) {  // explore's worlds: made once per run
    pairs_.reserve(2 * world_.process_count());
    link_info_.reserve(4 * world_.process_count());
    links_used_.reserve(2 * world_.process_count());
  }
  const std::size_t at = pairs_.size();
  pairs_.resize(at + (last - first + 1));
  link_info_.resize(2 * pairs_.size());
  const auto from_at = static_cast<std::ptrdiff_t>(row.at), to_at = static_cast<std::ptrdiff_t>(at + (row.lo - first));
  std::copy_n(pairs_.begin() + from_at, row.width, pairs_.begin() + to_at);
  std::copy_n(link_info_.begin() + 2 * from_at, 2 * std::size_t{row.width}, link_info_.begin() + 2 * to_at);
  row = {static_cast<ProcId>(first), static_cast<std::uint32_t>(last - first + 1), at};
  return at + (lo - first);
}

std::optional<std::size_t> Network::find_link(ProcId from, ProcId to) const {
  const Ends e = ends(from, to);
  if (e.hi >= link_rows_.size()) return std::nullopt;
  const LinkRow& row = link_rows_[e.hi];
  if (e.lo - row.lo >= row.width) return std::nullopt;
  return 2 * (row.at + (e.lo - row.lo)) + e.down;
}

// Each link draws from its own stream: adding a client leaves every other
// link's draws alone. The stream "link/<from>-><to>", its name hashed in
// parts, not built (each run of explore makes its links anew).
Rng Network::fork_link_rng(ProcId from, ProcId to) const {
  return world_.fork_rng_parts({"link/", world_.trace().name(from), "->", world_.trace().name(to)});
}

bool Network::blocked(ProcId from, ProcId to) const {
  for (const Partition& p : partitions_) {
    int gf = -1, gt = -1;
    for (std::size_t g = 0; g < p.groups.size(); ++g) {
      if (std::find(p.groups[g].begin(), p.groups[g].end(), from) != p.groups[g].end()) gf = static_cast<int>(g);
      if (std::find(p.groups[g].begin(), p.groups[g].end(), to) != p.groups[g].end()) gt = static_cast<int>(g);
    }
    if (gf < 0 || gt < 0 || gf == gt) continue;
    if (!p.one_way || gf == 0) return true;
  }
  return false;
}

std::uint64_t Network::partition(std::vector<std::vector<ProcId>> groups, bool one_way, std::string label) {
  const std::uint64_t id = next_partition_++;
  partitions_.push_back({id, std::move(groups), one_way, std::move(label)});
  return id;
}

void Network::heal(std::optional<std::uint64_t> id) {
  if (!id) partitions_.clear();
  else std::erase_if(partitions_, [&](const Partition& p) { return p.id == *id; });
}

std::uint64_t Network::drop(ProcId from, ProcId to, std::uint64_t id, std::uint64_t slot, std::uint64_t content,
                           std::string_view why) {
  Process& src = world_.process(from);
  TraceEvent dropped{.peer = to, .value = static_cast<std::int64_t>(id), .content = content};
  if (src.detailed()) dropped.detail = std::string(why) + ": " + describe(world_.messages_[slot].body);
  src.note(Ev::Dropped, std::move(dropped));
  world_.free_messages_.push_back(slot);
  return id;
}

std::uint64_t Network::send_stored(ProcId from, ProcId to, std::uint64_t reply_to, std::uint64_t slot) {
  const std::uint64_t id = next_message_++;
  ++sent_;
  Process& src = world_.process(from);
  const Instant now = world_.now();
  Message& m = world_.messages_[slot];
  const Payload& body = m.body;
  Trace& trace = world_.trace();
  // Once per message, delivery reuses it; only the trace hash and the
  // world's digest read it (explore --exhaustive keeps hashing on).
  const std::uint64_t content = trace.hashing() ? fingerprint(body) : 0;
  if (trace.hash_only(Ev::Sent)) {
    src.note_hashed(Ev::Sent, to, static_cast<std::int64_t>(id), content);
  } else if (trace.wants(Ev::Sent)) {
    TraceEvent sent{.peer = to, .value = static_cast<std::int64_t>(id), .content = content};
    if (src.detailed()) sent.detail = describe(body);
    src.note(Ev::Sent, std::move(sent));
  } else {
    trace.skip();
  }
  // The common case (no partition, no rule, no loss) tests three things.
  if (!partitions_.empty() && blocked(from, to)) return drop(from, to, id, slot, content, "partition");
  const std::size_t k = link(from, to);
  for (LinkRule& r : rules_) {
    if (r.kind != LinkRule::Kind::Drop || !r.matches(from, to, now)) continue;
    if (!link_rng(k, from, to).chance(r.probability)) continue;
    if (r.remaining > 0) --r.remaining;
    return drop(from, to, id, slot, content, r.label);
  }
  if (config_.loss > 0.0 && link_rng(k, from, to).chance(config_.loss))
    return drop(from, to, id, slot, content, "lost (loss " + std::to_string(config_.loss) + ")");

  const Duration delay = config_.delay.is_fixed() ? config_.delay.lo : config_.delay.draw(link_rng(k, from, to));
  Instant at = now + delay;
  for (LinkRule& r : rules_) {
    if (r.kind == LinkRule::Kind::Drop || !r.matches(from, to, now)) continue;
    if (r.kind == LinkRule::Kind::Hold) at = max(at, r.until + delay);
    else at += r.extra;
    if (r.remaining > 0) --r.remaining;
  }
  if (config_.fifo) {
    Instant& last = link_info_[k].last_delivery;
    at = max(at, last);
    last = at;
  }
  m.id = id;
  m.reply_to = reply_to;
  m.from = from;
  m.to = to;
  m.content = content;
  world_.schedule(at, to, world_.process(to).epoch(), Event::Kind::Deliver, slot);
  return id;
}

void Network::digest(Digest& d) const {
  d.add(static_cast<std::uint64_t>(partitions_.size()));
  for (const Partition& p : partitions_) {
    d.add(p.one_way);
    for (const auto& g : p.groups) {
      d.add(static_cast<std::uint64_t>(g.size()));
      for (ProcId id : g) d.add(static_cast<std::uint64_t>(id));
    }
  }
  for (const auto& [from, to] : links_used_) {
    const std::size_t k = *find_link(from, to);
    Rng rng = fork_link_rng(from, to);  // its seed; its state as if it had been made, if it was not
    if (made(stream(k))) rng.set_state(stream(k));
    d.add(rng.position());
    d.add(link_info_[k].last_delivery);
  }
  d.add(static_cast<std::uint64_t>(rules_.size()));
  for (const LinkRule& r : rules_) {
    d.add(static_cast<std::uint64_t>(r.kind));
    d.add(static_cast<std::uint64_t>(r.from));
    d.add(static_cast<std::uint64_t>(r.to));
    d.add(r.from_time);
    d.add(r.until);
    d.add(r.remaining);
    d.add(r.extra);
  }
}

}  // namespace locksim
