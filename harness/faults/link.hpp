// Delay and drop act on the messages of one link (from -> to, either end
// "any"): the parts of them that are alike.
#pragma once

#include "harness/faults/kind.hpp"

namespace locksim::link_fault {

// from, to (one at least), duration, count.
void parse(const FaultReader& in, FaultSpec& f);
// The messages the fault acts on: its link, from now, within its duration, at most count.
LinkRule rule(FaultContext& ctx, const FaultSpec& f);
// "client1 -> *"
std::string name(const FaultSpec& f);
// Adds the rule and tells the trace what it does: `what`, and its count and
// window (no words when the trace keeps none: FaultContext::detailed).
void add(FaultContext& ctx, const FaultSpec& f, LinkRule r, std::string what);
// from, to, duration: the keys before the kind's own.
void write(FaultWriter& out, const FaultSpec& f);
// A link between a client and a server (a lock node or the storage), either way, and a window.
void draw(FaultDraw& d, FaultSpec& f);
// Every link between a client and a server, either way, with f's other keys.
void each_link(const FaultChoices& c, const FaultSpec& f, std::vector<FaultChoice>& out);

}  // namespace locksim::link_fault
