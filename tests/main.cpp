// The suite's main: doctest's, inside a temporary directory of this test
// process's own. /tmp is shared by every build and suite on the machine, and
// a test that wrote a fixed name there left it behind (14 files a run, issue
// 38): TMPDIR points into a fresh directory under the temp dir for the whole
// run, so every temporary file a test or a program it starts makes
// (std::filesystem::temp_directory_path, mkstemp, the live supervisor's
// roots) lands there, and it is removed, with whatever is left in it, when
// the run ends.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

namespace {

class PrivateTemp {
 public:
  PrivateTemp() {
    std::string pattern = (std::filesystem::temp_directory_path() / "locksim-tests-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::cerr << "locksim_tests: cannot make a temporary directory under " << std::filesystem::temp_directory_path() << "\n";
      std::exit(2);
    }
    path_ = pattern;
    setenv("TMPDIR", path_.c_str(), 1);
  }
  PrivateTemp(const PrivateTemp&) = delete;
  PrivateTemp& operator=(const PrivateTemp&) = delete;
  ~PrivateTemp() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    if (ec) std::cerr << "locksim_tests: could not remove " << path_ << ": " << ec.message() << "\n";
  }

 private:
  std::filesystem::path path_;
};

}  // namespace

int main(int argc, char** argv) {
  const PrivateTemp temp;
  doctest::Context context(argc, argv);
  return context.run();
}
