// Internal to the form readers (src/inputs/config, command, deploy, log; the scripts they walk
// through shell/): the deploy forms around a serve command (scripts, docker run, compose,
// Kubernetes, Dockerfile, logs, benchmark matrices) and what they say about the deployment itself
// (image, GPUs, engine version). The command readers turn what they find into ParsedServing plans
// through ServeCollector.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "inputs/options/options.hpp"
#include "inputs/shell/script.hpp"

namespace specprobe::serving {

// What the deploy file says around the serve command.
struct DeployInfo {
  InputForm form = InputForm::vllm_command;  // the form the server was found in (docker-run, ...)
  bool form_set = false;                     // FORM given; else from the engine (vllm-/sglang-command)
  std::string server;                        // which server of the file ("service vllm")
  std::string image;                         // container image as written (markers possible)
  SourceLocation image_where;
  size_t image_offset = 0;  // in the collector's text
  Json gpus;                // null | integer | "all"
  SourceLocation gpus_where;
  // The GPU model the file asks for, as written: a Kubernetes nodeSelector / node affinity label
  // value (nvidia.com/gpu.product, cloud.google.com/gke-accelerator, amd.com/gpu.product-name).
  std::string gpu_product;
  std::string gpu_product_key;  // the label it is the value of
  SourceLocation gpu_product_where;
  std::vector<std::pair<std::string, EnvSetting>> env;  // the container's environment
  std::string engine_version;                           // stated in the file (image tag, pip line, log banner)
  std::string engine_version_source;                    // "image tag vllm/vllm-openai:v0.20.0", ...
  std::string engine_version_engine;                    // vllm | sglang: whose version it is
  SourceLocation engine_version_where;
  std::vector<ReaderNote> notes;  // about the version / image / GPUs
};

// Engine versions (deploy/stated_version.cpp).
struct EngineVersion {
  std::string engine;   // vllm | sglang ("" when the image is not an engine image)
  std::string version;  // "" when the tag names none
  std::string why;      // the source ("image tag X") or why there is none
};
// The engine and version an image reference states: vllm/vllm-openai:v0.20.0-x86_64-cu130 ->
// vllm 0.20.0; lmsysorg/sglang:v0.4.9.post6-cu126 -> sglang 0.4.9.post6; rocm/vllm:..._vllm_0.6.4
// -> vllm 0.6.4; latest / nightly-<sha> / model-named tags / NGC and vendor images -> no version.
EngineVersion image_engine_version(std::string_view image);
// `pip install vllm==0.10.1`, `uv pip install "sglang[all]==0.4.6"` among WORDS: engine + version.
std::optional<EngineVersion> pip_engine_version(const std::vector<ShellWord>& words);
// Pins in requirements*.txt / pyproject.toml / uv.lock / poetry.lock in DIR: key -> (version,
// "requirements.txt: vllm==0.10.1"). Keys: the engines and the tracked kernel libraries.
std::map<std::string, std::pair<std::string, std::string>> pinned_versions(const std::string& dir);
// Writes deploy.engine_version / deploy.engine_version_source (and a note) into PLAN when
// INFO names a version for the plan's engine; else a note on why none.
void write_engine_version(PlanWriter& w, const DeployInfo& info, const std::string& engine);

// Marker handling (deploy/unresolved.cpp): options whose values hold unresolved markers are
// made typable before the engine builder runs; afterwards the facts that came from them are null.
struct UnresolvedUse {
  SourceLocation where;            // the option (or env setting / positional)
  std::vector<std::string> names;  // the variables / placeholders
  std::string option;              // the option as written (without dashes)
  std::string text;                // its value as written, markers included
};
std::vector<UnresolvedUse> neutralize_unresolved(std::vector<RawOption>& options, ReadContext& ctx);
void apply_unresolved(ParsedServing& plan, const std::vector<UnresolvedUse>& uses,
                      const std::map<std::string, std::string>& reasons);

// Commands -> plans (command/command.cpp).
struct CollectorSource {
  std::string path;                        // the file (or "<command line>", "<stdin>")
  std::string text;                        // the whole file text (offsets index it)
  std::shared_ptr<const LineIndex> index;  // offsets -> line:col
  bool from_file = true;
  ReadOptions options;
};

class ServeCollector {
 public:
  explicit ServeCollector(std::shared_ptr<const CollectorSource> source) : src_(std::move(source)) {}

  // Reads one command the shell reached: a serve command, a container run, kubectl with a
  // here-document. CONTEXT (container, image, GPUs) applies to the plans it yields. REASONS says
  // why markers are unresolved.
  Status on_command(const ShellCommand& c, const DeployInfo& context,
                    const std::map<std::string, std::string>& reasons);

  // Reads a container's command (ARGV: entrypoint + command, expanded; may be empty) with the
  // container's environment in CONTEXT: sh -c scripts, serve commands, or the image's own
  // entrypoint (vllm/vllm-openai runs `vllm serve`).
  Status read_container(std::vector<ShellWord> argv, DeployInfo context, bool entrypoint_given, bool interactive);

  // Versions stated elsewhere in the file: a pip line before the command, pins next to the file.
  void set_fallback_version(const DeployInfo& v) { fallback_version_ = v; }

  // After the last command: option lists (option_list) are read when the file started no server
  // (a line of options after a command whose quoting split it is not a server of its own).
  Status finish();

  std::vector<ParsedServing>& plans() { return plans_; }
  std::vector<ReaderNote>& notes() { return notes_; }
  const CollectorSource& source() const { return *src_; }
  SourceLocation loc(size_t offset) const { return src_->index->at(offset); }

  // Every variable from the environment the reader was given (process env under --env).
  ShellVars base_vars() const;

 private:
  Status serve(const std::vector<ShellWord>& words, size_t begin, const ShellCommand& c, const DeployInfo& context,
               const std::map<std::string, std::string>& reasons);
  Status container_run(const ShellCommand& c, size_t at, const DeployInfo& context);
  // A command that is only options (`--tp 8 --speculative-config '{...}'`, as recipes, READMEs and
  // issue reports publish them): read as the serve arguments of the engine the option names (or
  // --engine) identify, with a note; which engines fit, when they do not decide.
  Status option_list(const ShellCommand& c, const DeployInfo& context,
                     const std::map<std::string, std::string>& reasons);
  void continuation_traps(size_t end);
  void markdown_links(size_t from, size_t to);

  static constexpr size_t kMaxServers = 64;
  std::shared_ptr<const CollectorSource> src_;
  bool servers_capped_ = false;
  DeployInfo fallback_version_;
  std::vector<ParsedServing> plans_;
  std::vector<ReaderNote> notes_;
  struct PendingOptions {
    ShellCommand command;
    DeployInfo context;
    std::map<std::string, std::string> reasons;
  };
  std::vector<PendingOptions> option_lists_;
};

// The forms (one file each).
Expected<ServingFile> read_script_text(std::shared_ptr<const CollectorSource> src);
Expected<std::optional<ServingFile>> read_deploy_yaml(
    std::shared_ptr<const CollectorSource> src);  // compose / k8s; nullopt: neither
// A line that starts a Kubernetes object (apiVersion:, kind:) or a compose file (services:).
bool looks_like_deploy_yaml(std::string_view text);
// Kubernetes YAML documents in TEXT, whose byte k sits at OFFSETS[k] of the collector's text
// (empty: TEXT is the collector's text): every container that starts a server (kubectl with a
// here-document in a script).
Status read_kubernetes_docs(const std::string& text, const std::vector<uint32_t>& offsets, ServeCollector& into);
bool looks_like_log(std::string_view text);
Expected<ServingFile> read_server_log(std::shared_ptr<const CollectorSource> src);
bool looks_like_dockerfile(std::string_view path, std::string_view text);
Expected<ServingFile> read_dockerfile(std::shared_ptr<const CollectorSource> src);
bool looks_like_benchmark_json(const Json& doc);
Expected<ServingFile> read_benchmark_json(std::shared_ptr<const CollectorSource> src, const Json& doc);

// Per-byte offsets of a YAML scalar's decoded VALUE in TEXT (the node starts at START): exact for
// one-line scalars, line by line for block and multi-line scalars; empty when it cannot tell.
std::vector<uint32_t> yaml_value_offsets(const std::string& text, size_t start, const std::string& value);

}  // namespace specprobe::serving
