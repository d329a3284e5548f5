// A lock's random value is kept as the words drawn (sim/lock_value.hpp): it
// must spell, compare and hash exactly as the hex text it stands for, and
// draw the same words from the stream as Rng::hex_token did, so runs, trace
// hashes and stories stay what they were.
#include <doctest/doctest.h>

#include <string>

#include "sim/lock_value.hpp"
#include "sim/message.hpp"

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
    CHECK(v.mix_into(7) == hash_mix(7, text));
  }
  // Every size a random value may have, hashed a word at a time as its text is.
  for (int bytes = LockValue::kMinBytes; bytes <= LockValue::kMaxBytes; ++bytes) {
    Rng rng(static_cast<std::uint64_t>(bytes));
    for (int i = 0; i < 50; ++i) {
      const LockValue v = LockValue::random(rng, bytes);
      CHECK(v.text().size() == static_cast<std::size_t>(2 * bytes));
      CHECK(v.mix_into(3) == hash_mix(3, v.text()));
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
