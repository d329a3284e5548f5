// The lab never rots: every command in docs/lab.md runs as printed, typed as
// a student types it (from the repository's directory, after the set-up line
// that scripts/demo prints and the lab gives at its top), and every answer in
// the instructor's key (docs/lab-key.md) is what a real run shows. The same
// for the Chinese lab (docs/lab.zh.md, docs/lab-key.zh.md), whose runs say
// `--lang zh`.
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/command_support.hpp"

namespace lab_test {

namespace fs = std::filesystem;
using locksim::testing::read_text;
using locksim::testing::run_command;

namespace {

// A scratch directory laid out as the repository after scripts/demo, as far
// as the lab reaches: scenarios/ is the catalogue and build/locksim the
// program (links to the real ones); the files a command writes stay here.
// A command runs from it after the lab's set-up line, in one shell.
class LabDir {
 public:
  LabDir(const std::string& name, std::string setup) : scratch_(name), root(scratch_.path()), setup_(std::move(setup)) {
    fs::create_directories(root / "build");
    fs::create_symlink(LOCKSIM_BINARY, root / "build" / "locksim");
    fs::create_directory_symlink(fs::path(LOCKSIM_SOURCE_DIR) / "scenarios", root / "scenarios");
  }
  std::string run(const std::string& command) const { return "cd " + root.string() + " && " + setup_ + " && " + command; }

 private:
  locksim::testing::ScratchDir scratch_;

 public:
  const fs::path root;

 private:
  std::string setup_;
};

std::string doc(const std::string& name) { return read_text(fs::path(LOCKSIM_SOURCE_DIR) / "docs" / name); }

// The commands of a document: the "$ " lines of its fenced blocks, as typed.
std::vector<std::string> typed_commands(const std::string& text);

// The lab's set-up line: its first command (`export PATH="$PWD/build:$PATH"`).
std::string setup_line(const std::string& lab_text) {
  const std::vector<std::string> commands = typed_commands(lab_text);
  return commands.empty() ? "" : commands.front();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Runs of spaces and tabs as one space, none at the ends: a report's column padding does not matter.
std::string collapse(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool blank = c == ' ' || c == '\t' || c == '\r';
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out += blank ? ' ' : c;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

struct KeyCommand {
  std::string section;                // "## 6. Redlock and clocks"
  std::string command;                // after "$ "
  std::vector<std::string> expected;  // lines its output shows, in this order
};

// The key's commands: in its fenced blocks, "$ " begins a command and the lines after it are its output's.
std::vector<KeyCommand> key_commands(const std::string& text) {
  std::vector<KeyCommand> out;
  std::string section;
  bool fenced = false;
  for (const std::string& line : lines_of(text)) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    else if (!fenced && line.rfind("## ", 0) == 0) section = line;
    else if (fenced && line.rfind("$ ", 0) == 0) out.push_back({section, line.substr(2), {}});
    else if (fenced && !line.empty() && !out.empty()) out.back().expected.push_back(collapse(line));
  }
  return out;
}

std::vector<std::string> typed_commands(const std::string& text) {
  std::vector<std::string> out;
  bool fenced = false;
  for (const std::string& line : lines_of(text)) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    else if (fenced && line.rfind("$ ", 0) == 0) out.push_back(line.substr(2));
  }
  return out;
}

// The file a command writes, where it names one (--html F, --svg F, -o F, cp A F).
std::string written_file(const std::string& command) {
  for (const char* flag : {" --html ", " --svg ", " -o "})
    if (const auto at = command.find(flag); at != std::string::npos) {
      const auto from = at + std::string(flag).size();
      return command.substr(from, command.find(' ', from) - from);
    }
  if (command.rfind("cp ", 0) == 0) return command.substr(command.rfind(' ') + 1);
  return "";
}

// "sed '...' IN > OUT": the two file names.
std::pair<std::string, std::string> sed_files(const std::string& command) {
  const auto gt = command.rfind(" > ");
  const std::string before = command.substr(0, gt);
  return {before.substr(before.rfind(' ') + 1), command.substr(gt + 3)};
}

// A lab and its key, in one language: the words its runs and its steps use.
struct Lab {
  const char* lab;          // docs/...
  const char* key;
  const char* as_expected;  // what a run as expected says
  const char* change;       // what a step that asks for a change says
};
constexpr Lab kLabs[] = {
    {"lab.md", "lab-key.md", "— as expected", "Change:"},
    {"lab.zh.md", "lab-key.zh.md", "——符合预期", "改动："},
};

}  // namespace

TEST_CASE("the lab's set-up line is the one scripts/demo prints, and it puts build/locksim on PATH") {
  const std::string demo = read_text(fs::path(LOCKSIM_SOURCE_DIR) / "scripts" / "demo");
  for (const Lab& lab : kLabs) {
    INFO(lab.lab);
    const std::string setup = setup_line(doc(lab.lab));
    CHECK(setup == "export PATH=\"$PWD/build:$PATH\"");
    CHECK(demo.find("setup='" + setup + "'") != std::string::npos);
    const LabDir dir("locksim-lab-setup", setup);
    const auto o = run_command(dir.run("command -v locksim"));
    CHECK(o.output == (dir.root / "build" / "locksim").string() + "\n");
  }
}

TEST_CASE("every command of the course lab runs as printed, with the outcome the lab gives it") {
  for (const Lab& lab : kLabs) {
    INFO(lab.lab);
    const std::vector<std::string> typed = typed_commands(doc(lab.lab));
    REQUIRE(typed.size() >= 28);
    const LabDir dir("locksim-lab", typed.front());
    for (std::size_t i = 1; i < typed.size(); ++i) {
      const std::string& command = typed[i];
      INFO(command);
      // Never a terminal on stdin: --quiz prints its question and the command that reveals the run.
      const std::string err = (dir.root / "stderr").string();
      const auto o = run_command(dir.run(command + " < /dev/null 2>" + err));
      const std::string said = read_text(err);
      INFO(o.output.substr(0, 300) << "\nstderr: " << said);
      const bool explore = command.rfind("locksim explore ", 0) == 0;
      const bool changed_copy = command.find(" my.toml --ignore-expect") != std::string::npos;
      if (changed_copy) {
        // The lab: "exit status 0 when there is no violation, 1 when there is one" (the copy, unedited, has three).
        CHECK(o.status == 1);
        CHECK(o.output.find("Verdict: no violation") == std::string::npos);
      } else if (explore && o.status == 1) {
        // A finding the scenario's [expect] does not allow, which the lab asks
        // the reader to predict: its last line says which.
        CHECK(said.rfind("locksim explore: NOT as expected: runs showed ", 0) == 0);
      } else {
        CHECK(o.status == 0);
      }
      if (const std::string file = written_file(command); !file.empty()) CHECK(fs::file_size(dir.root / file) > 0);
      if (command.rfind("locksim new ", 0) == 0) CHECK(o.output.find("[lock]") != std::string::npos);
      const auto quiz = command.find(" --quiz");
      if (quiz == std::string::npos) continue;
      CHECK(o.output.find("--predict KINDS") != std::string::npos);
      const auto plain = run_command(dir.run(command.substr(0, quiz) + " 2>&1"));
      CHECK(plain.status == 0);
      CHECK(plain.output.find(lab.as_expected) != std::string::npos);
    }
  }
}

TEST_CASE("the words the lab quotes from a run's story are the story's") {
  // Lab step 6: the narrative's "tries and fails" line, in the +6.5 s copy.
  for (const auto& [lab, quoted] : {std::pair{"lab.md", "tries and fails"}, std::pair{"lab.zh.md", "次均失败"}}) {
    INFO(lab);
    CHECK(doc(lab).find(quoted) != std::string::npos);
    const LabDir dir("locksim-lab-quote", setup_line(doc(lab)));
    const auto o = run_command(dir.run("sed 's/by = \"+15s\"/by = \"+6.5s\"/' scenarios/kleppmann/redlock-clock-jump.toml > my.toml && "
                                       "locksim run my.toml --ignore-expect" + std::string(lab == std::string("lab.zh.md") ? " --lang zh" : "")));
    CHECK(o.output.find(quoted) != std::string::npos);
  }
}

TEST_CASE("every answer in the lab's key is what a real run shows") {
  for (const Lab& lab : kLabs) {
    INFO(lab.key);
    const LabDir dir("locksim-lab-key", setup_line(doc(lab.lab)));
    const std::vector<KeyCommand> commands = key_commands(doc(lab.key));
    CHECK(commands.size() >= 40);
    for (const KeyCommand& k : commands) {
      INFO(k.section << ": " << k.command);
      const auto o = run_command(dir.run(k.command + " < /dev/null 2>&1"));
      CHECK(o.status >= 0);
      if (k.command.rfind("sed ", 0) == 0) {
        // A sed whose pattern no longer matches would leave the copy as it was, and the answer unchecked.
        CHECK(o.status == 0);
        const auto [in, out] = sed_files(k.command);
        CHECK(read_text(dir.root / in) != read_text(dir.root / out));
        continue;
      }
      std::vector<std::string> shown;
      for (const std::string& line : lines_of(o.output)) shown.push_back(collapse(line));
      std::size_t at = 0;
      for (const std::string& want : k.expected) {
        while (at < shown.size() && shown[at].find(want) == std::string::npos) ++at;
        INFO("output:\n" << o.output);
        CHECK_MESSAGE(at < shown.size(), "not shown (in this order): " << want);
        if (at == shown.size()) break;
        ++at;
      }
    }
  }
}

TEST_CASE("the lab's key answers every step, and every change with a run of the changed copy") {
  for (const Lab& lab : kLabs) {
    INFO(lab.key);
    const std::vector<KeyCommand> commands = key_commands(doc(lab.key));
    std::map<std::string, int> checked, changed;
    for (const KeyCommand& k : commands) {
      checked[k.section] += !k.expected.empty();
      changed[k.section] += k.command.find("--ignore-expect") != std::string::npos;
    }
    std::string section;
    bool has_change = false;
    const auto done = [&] {
      if (section.empty()) return;
      INFO(section);
      CHECK(checked[section] > 0);
      if (has_change) CHECK(changed[section] > 0);
    };
    for (const std::string& line : lines_of(doc(lab.lab))) {
      if (line.rfind("## ", 0) == 0) {
        done();
        // The numbered steps; "How to work", "The verdicts" and "The debate" ask nothing to predict.
        section = line.size() > 3 && std::isdigit(static_cast<unsigned char>(line[3])) ? line : "";
        has_change = false;
      }
      has_change = has_change || line.find(lab.change) != std::string::npos;
    }
    done();
    CHECK(checked.size() >= 10);
  }
}

}  // namespace lab_test
