// The informational subcommands: `gpu` (what the Driver API reports), `rules list`, `explain`, `facts`.
#pragma once
#include <string>

namespace specprobe {

int run_gpu_command(const std::string& format);
int run_rules_list_command(const std::string& format, const std::string& rules_dir);
int run_explain_command(const std::string& id, const std::string& rules_dir);
// `facts`: the facts registry (what rules and advisories may read), as text, JSON or the Markdown
// of docs/facts.md.
int run_facts_command(const std::string& format);

}  // namespace specprobe
