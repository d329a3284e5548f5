// RapidCheck inside doctest (Debian's librapidcheck-dev has no doctest
// integration): a property is checked with rc's own generation and
// shrinking, and a failure is the test's failure with rc's report (the
// shrunk counterexample) as its message.
//
// Runs are reproducible: the seed is fixed unless RC_PARAMS names one, as in
// RC_PARAMS="seed=42 max_success=1000" build/locksim_tests -tc="*FIFO*".
#pragma once

#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>

namespace locksim::testing {

inline constexpr std::uint64_t kPropertySeed = 0x10c451;

// Under AddressSanitizer (scripts/test --sanitize: a Debug build, where these
// ran 100 to 200 times slower) a twentieth of the cases: there they look for
// memory errors on the paths, which a few cases walk, not for rare inputs.
#if defined(__SANITIZE_ADDRESS__) || defined(LOCKSIM_SANITIZED_BUILD)
inline constexpr int kCaseDivisor = 20;
#else
inline constexpr int kCaseDivisor = 1;
#endif

// Checks `property` on `cases` generated inputs (RC_PARAMS may override).
template <typename Testable>
void check_property(const std::string& description, int cases, Testable&& property) {
  rc::detail::Configuration defaults;
  defaults.testParams.seed = kPropertySeed;
  defaults.testParams.maxSuccess = std::max(1, cases / kCaseDivisor);
  const char* env = std::getenv("RC_PARAMS");
  const rc::detail::Configuration config = rc::detail::configFromString(env ? env : "", defaults);
  rc::detail::TestMetadata metadata;
  metadata.id = description;
  metadata.description = description;
  // Our own (silent) listener and no reproduce map: rc's defaults would read
  // RC_PARAMS again, draw a seed of their own and print it.
  struct Silent : rc::detail::TestListener {
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
    void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  } silent;
  const rc::detail::TestResult result = rc::detail::checkProperty(
      rc::detail::toProperty(std::forward<Testable>(property)), metadata, config.testParams, silent, {});
  if (result.template is<rc::detail::SuccessResult>()) return;
  std::ostringstream report;
  rc::detail::printResultMessage(result, report);
  FAIL(description << " (seed " << config.testParams.seed << ")\n" << report.str());
}

}  // namespace locksim::testing
