// The resolution order (see resolver.hpp).
#include "resolve/resolver.hpp"

#include <filesystem>

#include "common/excerpt.hpp"
#include "common/paths.hpp"
#include "inputs/checkpoint/model_config.hpp"

namespace fs = std::filesystem;

namespace specprobe::resolve {
namespace {

std::string role_word(const std::string& role) {
  return role == "draft" ? "draft model" : role == "tokenizer" ? "tokenizer" : "model";
}

// How to supply a model of ROLE by hand.
std::string supply(const ModelRef& ref) {
  if (ref.role == "model") return "pass --model DIR";
  return fmt::format("pass --model-dir {}=DIR", excerpt_name(ref.id, 64));
}

}  // namespace

std::string Resolution::describe() const {
  if (origin == "--model") return fmt::format("--model {}", dir);
  if (origin == "--model-dir") return fmt::format("--model-dir {}", dir);
  if (origin == "local path") return fmt::format("the local directory {}", dir);
  if (origin == "hf-cache") return fmt::format("the Hugging Face cache ({})", dir);
  const std::string at = fmt::format("at commit {}{}", commit.substr(0, 12),
                                     revision.empty() || revision == commit ? "" : " (" + excerpt(revision) + ")");
  if (origin == "hub") return fmt::format("the Hub ({}) {}", endpoint_host, at);
  if (origin == "hub (cached)")
    return fmt::format("the Hub ({}) {}, answered from specprobe's cache of {}", endpoint_host, at, fetched_at);
  if (origin == "hub (offline cache)")
    return fmt::format("specprobe's cache of the Hub ({}) {}, fetched {} (offline)", endpoint_host, at, fetched_at);
  return origin;
}

Resolution Resolver::resolve(const ModelRef& ref, const ResolveOptions& o, Clock::time_point deadline,
                             const std::function<void(const std::string&)>& progress) const {
  Resolution r;
  r.role = ref.role;
  r.id = ref.id;
  const std::string what = role_word(ref.role);
  const std::string name = excerpt_name(ref.id, 64);
  std::error_code ec;
  if (ref.role == "model" && !o.model_flag.empty()) {
    r.origin = "--model";
    r.dir = o.model_flag;
    return r;
  }
  if (auto it = o.model_dirs.find(ref.id); it != o.model_dirs.end()) {
    r.origin = "--model-dir";
    r.dir = it->second;
    return r;
  }
  if (!ref.id.empty() && fs::exists(ref.id, ec)) {
    // A command line is named by the user; a config's path is read inside its own tree only.
    if (o.config_file.empty() || inside_tree(ref.id, fs::path(o.config_file).parent_path())) {
      r.origin = "local path";
      r.dir = ref.id;
      return r;
    }
    r.failure_kind = "outside-tree";
    r.failure = fmt::format("{} '{}' lies outside the directory of {}: not read ({} to check that checkpoint)", what,
                            name, fs::path(o.config_file).filename().string(), supply(ref));
    return r;
  }
  if (auto cached = find_in_hf_cache(ref.id)) {
    r.origin = "hf-cache";
    r.dir = *cached;
    return r;
  }
  if (!looks_like_repo_id(ref.id)) {
    r.failure_kind = "not-local";
    r.failure = fmt::format(
        "{} '{}' is not a local directory: its facts are unknown ({} with the checkpoint or its "
        "config.json)",
        what, name, supply(ref));
    return r;
  }
  if (o.no_resolve || !hub_) {
    r.failure_kind = "no-resolve";
    r.failure = fmt::format(
        "{} '{}' is not a local directory and not in the Hugging Face cache, and the Hub is not "
        "asked (--no-resolve): its facts are unknown ({}, or drop --no-resolve)",
        what, name, supply(ref));
    return r;
  }
  HubAnswer a = hub_->snapshot(ref.id, ref.revision, ref.headers, deadline, progress);
  r.notes = a.notes;
  if (!a.snapshot) {
    r.failure_kind = a.failure.kind;
    r.failure = fmt::format("{} {}", what, a.failure.message);
    if (!o.modelscope.empty() && (a.failure.kind == "not-found" || a.failure.kind == "revision-not-found"))
      r.failure += fmt::format(
          "; the deploy downloads from ModelScope ({}), whose ids need not exist on the Hugging "
          "Face Hub: {}",
          o.modelscope, supply(ref));
    else if (a.failure.kind == "offline")
      r.failure += fmt::format(": run once with the network, or {}", supply(ref));
    else if (a.failure.kind == "network" || a.failure.kind == "timeout")
      r.failure += fmt::format(
          ": {}, or run where the Hub is reachable (--offline then answers from specprobe's cache)", supply(ref));
    else
      r.failure += fmt::format(" ({} to check it without the Hub)", supply(ref));
    return r;
  }
  const HubSnapshot& s = *a.snapshot;
  r.origin = s.offline ? "hub (offline cache)" : s.from_cache ? "hub (cached)" : "hub";
  r.dir = s.dir;
  r.repo = s.repo;
  r.revision = s.revision;
  r.commit = s.commit;
  r.endpoint_host = s.endpoint_host;
  r.fetched_at = s.fetched_at;
  r.requests = s.requests;
  r.bytes = s.bytes;
  r.shards = s.shards;
  r.header_bytes = s.header_bytes;
  if (!o.modelscope.empty())
    r.notes.push_back(
        fmt::format("the deploy downloads {} from ModelScope ({}); specprobe read the Hugging Face Hub's "
                    "repository of that name",
                    name, o.modelscope));
  return r;
}

}  // namespace specprobe::resolve
