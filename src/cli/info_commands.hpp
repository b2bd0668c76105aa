// The informational subcommands: `gpu` (what the Driver API reports), `rules list`, `explain`, `facts`.
#pragma once
#include <string>
#include <vector>

namespace specprobe {

int run_gpu_command(const std::string& format);
int run_rules_list_command(const std::string& format, const std::string& rules_dir);
int run_explain_command(const std::string& id, const std::string& rules_dir);
// `advisories`: the known-issues database, filtered by engine, library versions (the advisories
// that affect them) and GPU.
struct AdvisoriesOptions {
  std::string engine;             // vllm | sglang
  std::vector<std::string> libs;  // NAME=VERSION: only advisories affecting these versions
  std::string gpu;                // a declared GPU: only advisories for its arch (or any GPU)
  std::string format = "text";    // text | json
  std::string advisories_dir;     // development: load from DIR
};
int run_advisories_command(const AdvisoriesOptions& o);

// The full text of one advisory (`explain SPA-...`).
struct Advisory;
std::string describe_advisory(const Advisory& a);

// `facts`: the facts registry (what rules and advisories may read), as text, JSON or the Markdown
// of docs/facts.md.
int run_facts_command(const std::string& format);

}  // namespace specprobe
