#include "sim/message.hpp"

#include "sim/rng.hpp"

namespace locksim {

std::string describe(const Payload& p) {
  return std::visit([](const auto& x) { return describe(x); }, p);
}

std::uint64_t fingerprint(const redis::Request& r) {
  std::uint64_t h = hash_mix(1, static_cast<std::uint64_t>(r.op) | std::uint64_t{r.nx} << 8 |
                               std::uint64_t{r.replicated} << 9 | std::uint64_t{r.no_reply} << 10);
  h = hash_mix(h, r.key);
  h = r.value.mix_into(h);  // its words, not its hex
  h = hash_mix(h, static_cast<std::uint64_t>(r.px.count_ns()));
  if (r.pxat) h = hash_mix(h, static_cast<std::uint64_t>(r.pxat->ns()));
  if (!r.token_key.empty()) h = hash_mix(h, r.token_key);
  if (r.offset != 0) h = hash_mix(h, static_cast<std::uint64_t>(r.offset));
  if (r.holds != 0) h = hash_mix(h, static_cast<std::uint64_t>(r.holds));
  return hash_mix(h, r.setter);
}

std::uint64_t fingerprint(const redis::Reply& r) {
  std::uint64_t h = hash_mix(2, static_cast<std::uint64_t>(r.kind));
  h = hash_mix(h, static_cast<std::uint64_t>(r.integer));
  return r.str.empty() ? h : hash_mix(h, r.str);
}

// The storage's messages come in every run of a scenario with a counter:
// their fields, not their description (every field describe() shows).
std::uint64_t fingerprint(const storage::Request& r) {
  std::uint64_t h = hash_mix(3, static_cast<std::uint64_t>(r.op));
  h = hash_mix(h, static_cast<std::uint64_t>(r.value));
  h = hash_mix(h, static_cast<std::uint64_t>(r.token));
  return r.owner.empty() ? h : hash_mix(h, r.owner);
}

std::uint64_t fingerprint(const storage::Reply& r) {
  std::uint64_t h = hash_mix(4, static_cast<std::uint64_t>(r.accepted));
  h = hash_mix(h, static_cast<std::uint64_t>(r.value));
  return r.reason.empty() ? h : hash_mix(h, r.reason);
}

std::uint64_t fingerprint(const Payload& p) {
  if (const auto* r = std::get_if<redis::Request>(&p)) return fingerprint(*r);
  if (const auto* r = std::get_if<redis::Reply>(&p)) return fingerprint(*r);
  if (const auto* r = std::get_if<storage::Request>(&p)) return fingerprint(*r);
  if (const auto* r = std::get_if<storage::Reply>(&p)) return fingerprint(*r);
  // The rest are rare (coordination services): their description will do.
  return hash_mix(fnv1a64(describe(p)), p.index());
}

}  // namespace locksim
