// Serving-configuration readers: vLLM --config files (YAML or JSON), deploy scripts holding a
// `vllm serve ...` or `python -m sglang.launch_server ...` command line, and a command line given
// directly after `specprobe check --`. Each reader detects its form, normalizes options into the
// plan subtree of the facts document and remembers where in the user's file each fact was set.
// Pure functions: no GPU, no network, reads only the named file.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {

enum class InputForm { vllm_yaml, vllm_json, vllm_command, sglang_command };
std::string_view to_string(InputForm form);  // "vllm-yaml", "vllm-json", "vllm-command", "sglang-command"

// An option specprobe does not model: kept and reported as info, never dropped.
struct UnknownOption {
  std::string name;   // as written, without leading dashes
  Json value;         // parsed value (string when it was a bare token)
  SourceLocation where;
};

// A non-fatal remark from the reader (deprecated spelling, ignored env var, duplicate key ...).
struct ReaderNote {
  std::string severity;  // "info" | "warning"
  std::string message;
  SourceLocation where;
};

struct ParsedServing {
  InputForm form = InputForm::vllm_yaml;
  std::string path;  // the file read, or "<command line>"
  // The plan, as a facts subtree: the facts whose writer is inputs.serving in
  // src/facts/registry.yaml (input.*, engine.name, model.id, spec.* as given, serve.*,
  // attention.requested*, env.*). Every plan carries input.*, engine.name, spec.enabled,
  // serve.tp/pp/dp (1), serve.expert_parallel (false), serve.kv_cache_dtype and serve.dtype
  // ("auto"), serve.enforce_eager (false), serve.cudagraph_mode and attention.requested (null);
  // defaults are located at the file itself (line 0). Command lines given as argv are laid out as
  // one line "<command line>", words joined by one space; columns index that line.
  Json facts = Json::object();
  // Dotted fact name -> where it was set in the user's file ("spec.k" -> the speculative-config
  // line; derived facts are located where their inputs were given). Findings anchor here.
  std::map<std::string, SourceLocation> locations;
  std::vector<UnknownOption> unknown;
  std::vector<ReaderNote> notes;
};

// Reads FILE; the form (YAML/JSON config or shell script with a command line) is detected from
// content. Errors are input errors naming the file and line/column where known.
Expected<ParsedServing> read_serving_file(const std::string& path);

// Reads a command line given as argv (everything after `specprobe check --`).
Expected<ParsedServing> read_serving_argv(const std::vector<std::string>& argv);

}  // namespace specprobe
