// The stack table (see stack_kinds.hpp). A new library is one entry here; its StackKind lives in
// probes/stack_<library>.cpp, beside its adapter probes/stack_<library>.py.
#include "probes/stack_kinds.hpp"

#include <algorithm>

#include "facts/answers.hpp"
#include "probes/probe_common.hpp"

namespace specprobe::probes {

const std::vector<StackKind>& stack_kinds() {
  static const std::vector<StackKind> kKinds = {
      kDeepGemmStack,
      kFlashInferStack,
      kTritonStack,
      kTorchStack,
  };
  return kKinds;
}

const StackKind* find_stack_kind(const std::string& library) {
  for (const auto& k : stack_kinds())
    if (library == k.library) return &k;
  return nullptr;
}

Json stack_run_spec(const std::string& library, Json params) {
  return {{"probe", "stack_" + library}, {"library", library}, {"params", std::move(params)}};
}

Json stack_skip_spec(const std::string& library, const std::string& why) {
  return {{"probe", "stack_" + library}, {"library", library}, {"skip_reason", why}};
}

std::optional<StackGqaShape> stack_gqa_shape(const Json& facts) {
  const auto heads = int_fact(facts, "model.num_attention_heads");
  const auto kv_heads = int_fact(facts, "model.num_kv_heads");
  const auto head_dim = int_fact(facts, "model.head_dim");
  auto gqa = int_fact(facts, "model.gqa_ratio");
  if (!gqa && heads && kv_heads && *kv_heads > 0) gqa = *heads / *kv_heads;
  if (!gqa || !head_dim || !kv_heads) return std::nullopt;
  const int next_n = static_cast<int>(int_fact(facts, "spec.next_n").value_or(1));
  return StackGqaShape{*gqa, *kv_heads, *head_dim, std::max(0, next_n - 1)};
}

std::string stack_version_text(const Json& result, const std::string& fallback) {
  const Json v = result.value("version", Json());
  return v.is_string() ? v.get<std::string>() : fallback;
}

std::string stack_cached_words(const Json& result) {
  return result.value("cached", false) ? " (answer cached from an earlier run: same build, GPU)" : "";
}

void append_plan_shape_stack_answer(const Json& r, Json& facts, const std::string& library) {
  const std::string st = r.value("status", std::string(kError));
  Json rec = {{"probe", "stack_" + library}, {"status", st}};
  if (!r.value("reason", "").empty()) rec["reason"] = r["reason"];
  const std::string version = stack_version_text(r, "?");
  Json& a = append_answer(facts, rec, fmt::format("{} {} at the plan's shape", library, version), "stack." + library,
                          Json::object(), true, kStackAnswers);
  a["says"] = fmt::format("{} {} {} at the plan's shape{}", library, version, st == kPass ? "ran clean" : "failed",
                          stack_cached_words(r));
}

}  // namespace specprobe::probes
