// Project settings: `.specprobe.yaml` files from the repository root down to the config's folder,
// so that a repository states once what every check of its deploy files needs (the GPU, library
// versions, where models named by id are on disk, the gate) and `specprobe check deploy/*.yaml`
// needs no flags. The command line wins over every file; a nearer file wins over a farther one;
// `overrides:` entries apply to the configs their globs match.
//
//   gpu: H200                        # --gpu
//   lib: {vllm: 0.29.0, torch: 2.9.0}   # --lib NAME=VERSION (or a list of "NAME=VERSION")
//   model: models/dsv4               # --model DIR (relative to this file)
//   models:                          # --model-dir ID=DIR (DIR relative to this file)
//     deepseek-ai/DeepSeek-V4-Flash: models/dsv4
//   fail-on: risk                    # --fail-on
//   unknown-ok: true                 # --unknown-ok
//   ignore:                          # suppressions (pipeline/suppressions.hpp), reason required
//     - {id: SP3010, reason: "tracked in INFRA-1234", until: 2026-12-31}
//   overrides:
//     - files: ["deploy/gb10/**"]    # globs relative to this file's folder (*, **, ?)
//       gpu: GB10
//       ignore: [{id: SP30*, reason: "the GB10 line is experimental"}]
//
// Discovery: every `.specprobe.yaml` from the config's folder upwards to the repository root (the
// nearest folder with `.git`); outside a repository, the config's folder only. A plan given on the
// command line uses the working directory's. Files are read as the suppression file always was:
// at most 1 MiB, a regular file, no link out of its folder; every error names the file and line.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "pipeline/suppressions.hpp"

namespace specprobe {

struct ProjectSettings {
  std::vector<std::string> files;  // the files read, farthest (the root's) first
  std::optional<std::string> gpu;
  std::optional<std::string> model;  // a directory, absolute or relative to the working directory
  std::optional<std::string> fail_on;
  std::optional<bool> unknown_ok;
  std::vector<std::string> libs;        // NAME=VERSION, one per name (the nearest file's)
  std::vector<std::string> model_dirs;  // ID=DIR, one per id (the nearest file's)
  std::vector<IgnoreEntry> ignore;      // every file's, with its source
  std::vector<std::string> sources;     // "gpu from deploy/.specprobe.yaml:2", for the report's notes
};

// The `.specprobe.yaml` files that apply to CONFIG_PATH, farthest first.
std::vector<std::string> settings_files_for(const std::string& config_path);

// Reads one settings file; OVERRIDES_FOR (a config path) applies the `overrides:` entries whose
// globs match it. A file that does not exist gives empty settings.
Expected<ProjectSettings> read_settings_file(const std::string& path, const std::string& overrides_for = {});

// Every file of settings_files_for(CONFIG_PATH), merged (nearer wins).
Expected<ProjectSettings> project_settings_for(const std::string& config_path);

// Whether PATH (relative, '/'-separated) matches GLOB: `*` and `?` within a segment, `**` any
// number of segments.
bool glob_matches(std::string_view glob, std::string_view path);

// Inline suppressions in a config's or deploy script's comments (YAML and shell `#` comments):
//   serve_args: --kv-cache-dtype fp8   # specprobe: ignore SP3019 -- tested on our H200s
//   # specprobe: ignore SP3020, SPA-VLLM-* -- pinned build      (applies to the next line)
//   # specprobe: ignore-file SP3010 -- whole file
// The reason after ` -- ` is required. Each entry applies to the lines LINE..END_LINE (0: the
// file); an own-line comment above a shell command continued with `\` covers all its lines.
struct InlineSuppression {
  IgnoreEntry entry;
  int line = 0;
  int end_line = 0;
};
Expected<std::vector<InlineSuppression>> inline_suppressions(const std::string& path, const std::string& text);

}  // namespace specprobe
