// The resolver: where the metadata of each model a plan names comes from. The served model, the
// draft model (vLLM speculative-config model, SGLang --speculative-draft-model-path) and a separate
// tokenizer are looked up in this order:
//   1. --model DIR (the served model) and --model-dir ID=DIR mappings;
//   2. a local path (a config's path only inside the config's directory tree; SECURITY.md);
//   3. the local Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub);
//   4. the Hugging Face Hub, metadata only, through specprobe's own cache (resolve/hub.hpp),
//      unless --no-resolve (or offline with nothing cached).
// Every answer says where it came from; one that cannot be read says why, naming the repo, the
// cause and the fix, and leaves the model's facts unknown. Never writes into the user's caches.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "resolve/hub.hpp"

namespace specprobe::resolve {

// A model the plan names.
struct ModelRef {
  std::string role;             // "model" | "draft" | "tokenizer"
  std::string id;               // as the plan names it: a path or a Hub repo id
  std::string revision;         // the plan's revision for it ("" = main)
  std::string revision_source;  // e.g. "--revision", "speculative-config revision"
  bool headers = true;          // fetch the safetensors headers (not for a tokenizer)
};

struct Resolution {
  std::string role, id;
  // Where it was found: "--model", "--model-dir", "local path", "hf-cache", "hub", "hub (cached)",
  // "hub (offline cache)"; "" when not found.
  std::string origin;
  std::string dir;  // a directory holding config.json (or the --model file); "" when unresolved
  // Hub answers.
  std::string repo, revision, commit, endpoint_host, fetched_at;
  size_t requests = 0;
  uint64_t bytes = 0;
  size_t shards = 0;
  uint64_t header_bytes = 0;
  // Not found: the kind (hub.hpp's failure kinds, or "not-local", "outside-tree", "no-resolve",
  // "not-an-id") and one line naming the model, the cause and the fix.
  std::string failure_kind;
  std::string failure;
  // Lines for the report (info), e.g. the Hub's "answered from the cache" fallback.
  std::vector<std::string> notes;

  bool resolved() const { return !dir.empty(); }
  // One line: where the metadata came from ("the Hub (huggingface.co) at commit 1a2b3c4 (main)").
  std::string describe() const;
};

struct ResolveOptions {
  std::string model_flag;                         // --model DIR: the served model
  std::map<std::string, std::string> model_dirs;  // --model-dir ID=DIR
  std::string config_file;  // the config under review ("" for a command line): its paths are read inside its tree
  bool no_resolve = false;  // --no-resolve: local directories and the HF cache only
  // The deploy downloads from ModelScope (VLLM_USE_MODELSCOPE / SGLANG_USE_MODELSCOPE): the
  // variable and value, said with a Hub failure.
  std::string modelscope;
};

class Resolver {
 public:
  // HUB may be null: then nothing beyond the local disk is asked (as --no-resolve).
  explicit Resolver(std::shared_ptr<Hub> hub) : hub_(std::move(hub)) {}

  Resolution resolve(const ModelRef& ref, const ResolveOptions& options, Clock::time_point deadline,
                     const std::function<void(const std::string&)>& progress = {}) const;

  const Hub* hub() const { return hub_.get(); }

 private:
  std::shared_ptr<Hub> hub_;
};

}  // namespace specprobe::resolve
