// A lock's random value is kept as the words drawn (sim/lock_value.hpp): it
// must spell and compare exactly as the hex text it stands for, hash (the
// trace's fingerprint) by its words, and draw the same words from the stream
// as Rng::hex_token did, so runs and stories stay what they were.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/lock_value.hpp"
#include "sim/message.hpp"

namespace lock_value_test {

using namespace locksim;

TEST_CASE("a random lock value spells and draws as Rng::hex_token") {
  for (int bytes : {8, 16, 20, 24}) {
    Rng a(99), b(99);
    const LockValue v = LockValue::random(a, bytes);
    const std::string text = b.hex_token(bytes);
    CHECK(v.is_random());
    CHECK(v.text() == text);
    CHECK(a.next() == b.next());  // the same draws
    CHECK(v == LockValue(text));  // read back from its text: the same value
    CHECK(LockValue(text).is_random());
    CHECK(v.mix_into(7) == LockValue(text).mix_into(7));  // the hash follows the value, not how it was made
  }
  // Every size a random value may have: hashed by its words, one mix per word drawn.
  for (int bytes = LockValue::kMinBytes; bytes <= LockValue::kMaxBytes; ++bytes) {
    Rng rng(static_cast<std::uint64_t>(bytes));
    for (int i = 0; i < 50; ++i) {
      const LockValue v = LockValue::random(rng, bytes);
      CHECK(v.text().size() == static_cast<std::size_t>(2 * bytes));
      CHECK(v.mix_into(3) == LockValue(v.text()).mix_into(3));
      CHECK(v.mix_into(3) != hash_mix(3, v.text()));  // not its hex
    }
  }
  Rng a(5), b(5);
  const LockValue redisson = LockValue::random(a, 16, 1);
  CHECK(redisson.text() == b.hex_token(16) + ":1");
  CHECK(LockValue(redisson.text()) == redisson);
}

TEST_CASE("a lock value that is not a random one stays text, and equals only its own text") {
  Rng rng(3);
  const LockValue v = LockValue::random(rng, 20);
  std::string upper = v.text();
  upper[0] = 'F';
  for (const char* t : {"", "1", "42", "abc", "0123456789abcde", "0123456789abcdef0", "ab:cd", "F0123456789abcde",
                        "0123456789abcdef:01", "0123456789abcdef:", "0123456789abcdef:x", "a,b"}) {
    const LockValue text(t);
    CHECK_FALSE(text.is_random());
    CHECK(text.text() == t);
    CHECK(text.mix_into(1) == hash_mix(1, std::string(t)));
  }
  CHECK(LockValue("0123456789abcdef").is_random());
  CHECK(LockValue("0123456789abcdef:0").is_random());
  CHECK(LockValue("0123456789abcdef:12").text() == "0123456789abcdef:12");
  CHECK(LockValue(upper) != v);
  CHECK(LockValue("").empty());
  CHECK_FALSE(v.empty());
  // Unequal values of the same length, and the same words with another suffix.
  CHECK(LockValue("0123456789abcdef") != LockValue("0123456789abcdee"));
  CHECK(LockValue("0123456789abcdef:1") != LockValue("0123456789abcdef:2"));
  CHECK(LockValue("0123456789abcdef:1") != LockValue("0123456789abcdef"));
  // The trace hash tells them apart as their texts would.
  CHECK(LockValue("0123456789abcdef").mix_into(1) != LockValue("0123456789abcdee").mix_into(1));
  CHECK(LockValue("0123456789abcdef:1").mix_into(1) != LockValue("0123456789abcdef:2").mix_into(1));
  CHECK(LockValue("0123456789abcdef:1").mix_into(1) != LockValue("0123456789abcdef").mix_into(1));
  CHECK(LockValue("0123456789abcdef00").mix_into(1) != LockValue("0123456789abcdef").mix_into(1));  // a zero byte more
}

TEST_CASE("a Redis request's fingerprint and description see the value's text") {
  redis::Request fixed, text;
  fixed.op = text.op = redis::Op::Set;
  fixed.key = text.key = "lock";
  Rng rng(11);
  fixed.value = LockValue::random(rng, 20);
  text.value = LockValue::from_text(fixed.value.text());
  CHECK(fingerprint(fixed) == fingerprint(text));
  CHECK(describe(fixed) == "SET lock " + fixed.value.text());
  text.value = "something else";
  CHECK(fingerprint(fixed) != fingerprint(text));
}

TEST_CASE("a storage message's fingerprint changes whenever its description does") {
  // Hashed by its fields since the storage's messages came on every run's hot path.
  storage::Request read, write, claim;
  write.op = storage::Request::Op::Write;
  write.value = 5;
  claim.op = storage::Request::Op::Claim;
  claim.owner = "0123456789abcdef";
  std::vector<storage::Request> requests{read, write, claim};
  storage::Request w = write;
  w.value = 6;
  requests.push_back(w);
  w.token = 3;
  requests.push_back(w);
  w.owner = "0123456789abcdef";
  requests.push_back(w);
  storage::Request fenced_read = read;
  fenced_read.token = 3;
  requests.push_back(fenced_read);
  for (std::size_t i = 0; i < requests.size(); ++i)
    for (std::size_t j = i + 1; j < requests.size(); ++j) {
      REQUIRE(describe(requests[i]) != describe(requests[j]));
      CHECK(fingerprint(Payload(requests[i])) != fingerprint(Payload(requests[j])));
    }
  CHECK(fingerprint(Payload(write)) == fingerprint(Payload(storage::Request(write))));
  const storage::Reply ok{true, 5, ""}, other{true, 6, ""}, rejected{false, 5, "stale token 3 < 4"},
      rejected2{false, 5, "no owner"};
  const std::vector<storage::Reply> replies{ok, other, rejected, rejected2};
  for (std::size_t i = 0; i < replies.size(); ++i)
    for (std::size_t j = i + 1; j < replies.size(); ++j) {
      REQUIRE(describe(replies[i]) != describe(replies[j]));
      CHECK(fingerprint(Payload(replies[i])) != fingerprint(Payload(replies[j])));
    }
  CHECK(fingerprint(Payload(read)) != fingerprint(Payload(ok)));
}

}  // namespace lock_value_test
