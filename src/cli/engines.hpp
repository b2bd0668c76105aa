// `specprobe engines`: install, list and remove engine environments (probes/engine_envs.hpp), one
// venv per vLLM / SGLang release, for `check --engine-env auto` (issue 50).
#pragma once
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace specprobe {

struct EnginesOptions {
  std::vector<std::string> requirements;  // install: vllm==0.29.0 [more requirements]
  std::vector<std::string> names;         // remove: vllm-0.29.0 ...
  std::string python = "python3";
  std::vector<std::string> find_links;
  std::string index_url;
  bool no_index = false;
  std::string installer = "auto";
  double timeout_s = 3600;
  std::string format = "text";
  std::string dir;  // --dir: instead of $XDG_CACHE_HOME/specprobe/engines
};

// Adds `engines` with `list`, `install`, `remove` to APP; returns the `engines` command.
CLI::App* add_engines_command(CLI::App& app, EnginesOptions& o);
// Runs whichever of them was parsed.
int run_engines_command(const CLI::App& engines, const EnginesOptions& o);

}  // namespace specprobe
