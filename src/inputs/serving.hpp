// Serving-configuration readers: vLLM --config files (YAML or JSON), deploy scripts holding a
// `vllm serve ...` or `python -m sglang.launch_server ...` command line (also inside `docker run`,
// `sh -c`, eval and functions), docker compose files, Kubernetes manifests (Pod, Deployment,
// StatefulSet, Job, LeaderWorkerSet, KServe, Dynamo / AIBrix / OME resources: any container spec),
// a Dockerfile's ENTRYPOINT/CMD, vLLM / SGLang start-up logs, vLLM benchmark matrices, and a
// command line given directly after `specprobe check --`. Each reader detects its form,
// normalizes options into the plan subtree of the facts document and remembers where in the
// user's file each fact was set. One file may start several servers: each is one plan.
// Pure functions: no GPU, no network, nothing from the file is run; reads only the named file
// and, next to it, a --config file it names, an env file (--env-file, compose env_file/.env)
// and requirements / lock files for the engine version.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {

enum class InputForm {
  vllm_yaml,
  vllm_json,
  vllm_command,
  sglang_command,
  docker_run,
  compose,
  kubernetes,
  dockerfile,
  vllm_log,
  sglang_log,
  vllm_benchmark_json
};
// "vllm-yaml", "vllm-json", "vllm-command", "sglang-command", "docker-run", "compose",
// "kubernetes", "dockerfile", "vllm-log", "sglang-log", "vllm-benchmark-json"
std::string_view to_string(InputForm form);

// An option specprobe does not model: kept and reported as info, never dropped.
struct UnknownOption {
  std::string name;  // as written, without leading dashes
  Json value;        // parsed value (string when it was a bare token)
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
  // Which server of the file this is ("service vllm", "LeaderWorkerSet vllm leader container
  // vllm-leader", "line 12"); empty when the file starts one.
  std::string server;
  // Facts left unknown (null) because a shell variable or placeholder has no value here:
  // fact name -> the variables it depends on.
  std::map<std::string, std::vector<std::string>> unresolved;
};

// How to resolve what a deploy file leaves to its environment.
struct ReadOptions {
  std::map<std::string, std::string> env;  // --env NAME=VALUE: the environment the file runs in
  bool process_environment = true;         // specprobe's own environment, under --env
  // --engine: "vllm" | "sglang" to read a file that lists serve options without a command as that
  // engine's; "" = decided from the option names.
  std::string engine;
};

// Every server a file starts. A file that starts none is not an error here: PLANS is empty and
// NOTES says why (an interactive container, a client-only script, an external launcher).
struct ServingFile {
  std::string path;
  std::vector<ParsedServing> plans;
  std::vector<ReaderNote> notes;
};

// Reads FILE; the form is detected from content. Errors are input errors naming the file and
// line/column where known (unreadable file, invalid YAML/JSON, an unterminated quote ...).
Expected<ServingFile> read_serving_plans(const std::string& path, const ReadOptions& options = {});
// The same for TEXT read elsewhere (stdin: NAME "<stdin>"); NAME's extension, if any, hints the form.
Expected<ServingFile> read_serving_text(std::string text, const std::string& name, const ReadOptions& options = {});

// The first server of FILE; an input error when it starts none.
Expected<ParsedServing> read_serving_file(const std::string& path, const ReadOptions& options = {});

// Reads a command line given as argv (everything after `specprobe check --`).
Expected<ParsedServing> read_serving_argv(const std::vector<std::string>& argv, const ReadOptions& options = {});

}  // namespace specprobe
