// Files a command writes are whole or absent. Each is written under a
// temporary name beside its target (same directory, so rename(2) is atomic)
// and renamed over the target once complete. Until then an interrupt
// (SIGINT, SIGTERM, SIGHUP) removes the temporary files before the process
// dies with that signal, and a failure removes them too: nobody finds half a
// report, diagram or trace under the name they asked for.
#pragma once

#include <fstream>
#include <string>

namespace locksim {

// Once per process, before any OutputFile: the interrupt handlers.
void install_output_cleanup();

class OutputFile {
 public:
  explicit OutputFile(std::string path);  // throws ScenarioError naming `path` if it cannot be created
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // not committed: the temporary is removed

  std::ostream& stream() { return out_; }
  // For a program that writes the file itself (rsvg-convert -o): the temporary's name.
  const std::string& temporary_path() const { return tmp_; }
  // Flushes, closes and renames over the target; throws ScenarioError if any fails.
  void commit();

 private:
  std::string path_, tmp_;
  std::ofstream out_;
  int slot_ = -1;  // in the interrupt handler's table
  bool committed_ = false;
};

// The whole text to `path`, through an OutputFile.
void write_whole(const std::string& path, const std::string& text);

// A PNG of an SVG, rendered by rsvg-convert (Debian's librsvg2-bin, which
// scripts/install-deps installs), run directly, not through a shell. Throws
// ScenarioError saying how to get it when it is missing or fails.
void write_png(const std::string& svg, const std::string& png);

// Before the work whose picture `png` is: refuses at once, in write_png's
// words, when rsvg-convert is not on PATH (a sweep of minutes should not end
// in "cannot write the picture").
void require_png_renderer(const std::string& png);

}  // namespace locksim
