// Derived facts (see derive.hpp). The version knowledge lives in rules/data/builds.yaml, loaded
// once from the embedded copy.
#include "facts/derive.hpp"

#include <algorithm>
#include <mutex>

#include "common/ascii.hpp"
#include "common/embedded.hpp"
#include "common/version.hpp"
#include "facts/answers.hpp"
#include "facts/backends.hpp"
#include "facts/derive_dsa_shapes.hpp"
#include "facts/derive_memory.hpp"
#include "facts/derive_sglang.hpp"
#include "facts/derive_spec_validation.hpp"
#include "gpu/gpu_info.hpp"
#include "inputs/options/check.hpp"
#include "inputs/options/tables.hpp"

namespace specprobe {
namespace {

constexpr const char* kBuildsFile = "rules/data/builds.yaml";

// A set of next_n values per arch family; any = every next_n.
struct NextNSet {
  bool any = false;
  std::vector<int> values;
  bool contains(int n) const { return any || std::find(values.begin(), values.end(), n) != values.end(); }
  Json to_json() const { return any ? Json("any") : Json(values); }
};

struct PerArch {
  NextNSet sm90, sm100, sm12x, other;
  const NextNSet& for_family(const std::string& fam) const {
    if (fam == "sm90") return sm90;
    if (fam == "sm100") return sm100;
    if (fam == "sm12x") return sm12x;
    return other;
  }
};

struct RangeRule {
  std::string versions;
  std::string evidence;
  std::string note;
  PerArch native;
  std::string commit, line;  // for pins
};

struct Tables {
  struct Build {
    std::string hash, line, note;
  };
  std::vector<Build> passthrough;
  std::vector<RangeRule> indexer_rules;
  std::vector<RangeRule> pins;
  std::map<std::string, PerArch> lines;
  std::map<std::string, std::string> line_sources;
  std::vector<std::pair<std::string, std::string>> commits;  // hash prefix -> line
  std::map<std::string, std::vector<std::string>> versions;
  std::string error;
};

NextNSet read_set(const Json& n) {
  NextNSet s;
  if (n.is_string() && n.get<std::string>() == "any")
    s.any = true;
  else if (n.is_array())
    for (const auto& v : n) s.values.push_back(v.get<int>());
  return s;
}

PerArch read_per_arch(const Json& n) {
  PerArch p;
  p.sm90 = read_set(n.value("sm90", Json()));
  p.sm100 = read_set(n.value("sm100", Json()));
  p.sm12x = read_set(n.value("sm12x", Json()));
  p.other = read_set(n.value("other", Json()));
  return p;
}

// A text field; a hash or version written unquoted that YAML reads as a number is an error (its
// digits would not survive: 0123456 is 123456), as is a missing field without a default.
std::string text(const Json& n, const char* key, const char* fallback = nullptr) {
  if (!n.is_object() || !n.contains(key)) {
    if (fallback) return fallback;
    throw std::runtime_error(fmt::format("`{}` is missing in {}", key, n.dump()));
  }
  const Json& v = n[key];
  if (!v.is_string()) throw std::runtime_error(fmt::format("`{}` must be a quoted string in {}", key, n.dump()));
  return v.get<std::string>();
}

const Json& list(const Json& root, const char* key) {
  static const Json kEmpty = Json::array();
  const auto it = root.find(key);
  if (it == root.end()) return kEmpty;
  if (!it->is_array() && !it->is_object())
    throw std::runtime_error(fmt::format("`{}` must be a list or a mapping", key));
  return *it;
}

const Tables& tables() {
  static Tables t;
  static std::once_flag once;
  std::call_once(once, [] {
    auto doc = embedded_yaml_document(kBuildsFile);
    if (!doc) {
      t.error = doc.error().str();
      return;
    }
    try {
      const Json& root = *doc;
      if (!root.is_object()) throw std::runtime_error("the file must be a mapping");
      for (const auto& b : list(root, "vllm_passthrough_builds"))
        t.passthrough.push_back({text(b, "hash"), text(b, "line"), text(b, "note", "")});
      for (const auto& r : list(root, "vllm_indexer_rules")) {
        RangeRule rr;
        rr.versions = text(r, "versions");
        rr.evidence = text(r, "evidence", "");
        rr.note = text(r, "note", "");
        rr.native = read_per_arch(r.value("native", Json::object()));
        t.indexer_rules.push_back(rr);
      }
      for (const auto& r : list(root, "vllm_deep_gemm_pins")) {
        RangeRule rr;
        rr.versions = text(r, "versions");
        rr.evidence = text(r, "evidence", "");
        rr.commit = text(r, "commit");
        rr.line = text(r, "line");
        t.pins.push_back(rr);
      }
      for (const auto& [name, line] : list(root, "deep_gemm_lines").items()) {
        t.lines[name] = read_per_arch(line);
        t.line_sources[name] = text(line, "source", "");
      }
      for (const auto& c : list(root, "deep_gemm_commits")) t.commits.emplace_back(text(c, "hash"), text(c, "line"));
      for (const auto& [version, lines] : list(root, "deep_gemm_versions").items()) {
        std::vector<std::string> names;
        for (const auto& l : lines) names.push_back(l.get<std::string>());
        t.versions[version] = names;
      }
    } catch (const std::exception& e) {
      t.error = fmt::format("{}: {}", kBuildsFile, e.what());
    }
  });
  return t;
}

bool hash_matches(const std::string& have, const std::string& known) {
  if (have.size() < 7) return false;
  const size_t n = std::min(have.size(), known.size());
  return have.compare(0, n, known, 0, n) == 0;
}

// spec.k and spec.next_n from the plan as given: vLLM's num_speculative_tokens (defaulting to the
// MTP draft's n_predict, the model's MTP depth), SGLang's num_draft_tokens - 1 (tokens verified
// per step minus the bonus token), else its num_steps (a chain with topk 1 drafts num_steps
// tokens; SGLang adjusts draft tokens to steps + 1 then).
void derive_spec(Json& f) {
  Json& spec = f["spec"];
  if (!spec.is_object()) spec = Json::object();
  for (const char* key : {"k", "k_source", "next_n"}) spec.erase(key);
  // Null: a variable the file leaves to its environment decides whether drafting is on
  // (`--speculative-algorithm $ALGO`); k is unknown too (rules/plan_path.cpp names the fact).
  const Json* enabled = find_fact(f, "spec.enabled");
  if (enabled && enabled->is_null()) {
    spec["k"] = nullptr;
    spec["next_n"] = nullptr;
    return;
  }
  if (!fact_bool(f, "spec.enabled").value_or(false)) {
    spec["k"] = 0;
    spec["next_n"] = 1;
    return;
  }
  Json k = nullptr;
  std::string source;
  if (fact_string(f, "engine.name").value_or("vllm") == "sglang") {
    if (auto n = fact_int(f, "spec.num_draft_tokens")) {
      k = *n - 1;
      source = "num_draft_tokens";
    } else if (auto st = fact_int(f, "spec.num_steps")) {
      k = *st;
      source = "num_steps";
    }
  } else if (auto given = fact_int(f, "spec.num_speculative_tokens")) {
    k = *given;
    source = "given";
  } else if (fact_string(f, "spec.method").value_or("") == "mtp") {
    // vLLM: k defaults to the draft's n_predict; for MTP that is the model's MTP depth.
    if (auto d = fact_int(f, "model.mtp_depth"); d && *d > 0) {
      k = *d;
      source = "n_predict";
    }
  }
  spec["k"] = k;
  spec["k_source"] = source.empty() ? Json(nullptr) : Json(source);
  spec["next_n"] = k.is_null() ? Json(nullptr) : Json(k.get<int64_t>() + 1);
}

void derive_engine(Json& f) {
  const std::string engine = fact_string(f, "engine.name").value_or("vllm");
  const auto version = fact_string(f, fmt::format("lib.{}.version", engine));
  f["engine"]["version"] = version ? Json(*version) : Json(nullptr);
  if (engine != "vllm") {
    f["engine"]["build"] = version ? "release" : "unknown";
    return;
  }
  std::string build = "unknown";
  std::string note;
  if (version) {
    auto v = parse_version(*version);
    auto hash = v ? v->git_hash() : std::nullopt;
    if (hash) {
      build = "unknown-commit";
      for (const auto& b : tables().passthrough)
        if (hash_matches(*hash, b.hash)) {
          build = b.line;
          note = b.note;
        }
    } else if (v && !v->dev) {
      build = "release";
    } else if (v) {
      build = "dev";  // a main-branch snapshot without a hash
    }
  }
  f["engine"]["build"] = build;
  f["engine"]["build_note"] = note.empty() ? Json(nullptr) : Json(note);
}

void derive_kv(Json& f) {
  // Null: the file leaves it to a variable or to a --config that was not read; unknown, not auto.
  if (const Json* given = find_fact(f, "serve.kv_cache_dtype"); given && given->is_null()) {
    for (const char* key : {"dtype", "effective", "fp8", "turboquant", "forced_by"}) f["kv"][key] = nullptr;
    return;
  }
  std::string kv = fact_string(f, "serve.kv_cache_dtype").value_or("auto");
  std::string eff = kv;
  std::string why;
  if (kv == "auto") {
    if (fact_bool(f, "model.kv_cache_scheme").value_or(false)) {
      eff = "fp8_e4m3";
      why = "checkpoint kv_cache_scheme forces fp8";
    } else {
      const std::string dt = fact_string(f, "serve.dtype").value_or("auto");
      const std::string mdt = fact_string(f, "model.dtype").value_or("bfloat16");
      const std::string d = (dt == "auto") ? mdt : dt;
      eff = (d == "float16" || d == "half") ? "float16" : "bfloat16";
    }
  } else if (kv == "fp8") {
    eff = "fp8_e4m3";
  } else if (kv == "bf16") {
    eff = "bfloat16";
  }
  f["kv"]["dtype"] = kv;
  f["kv"]["effective"] = eff;
  f["kv"]["fp8"] = eff.rfind("fp8", 0) == 0;
  f["kv"]["turboquant"] = kv.rfind("turboquant_", 0) == 0;
  f["kv"]["forced_by"] = why.empty() ? Json(nullptr) : Json(why);
}

void derive_sglang_attention(Json& f) {
  // SGLang default backends (_handle_attention_backend_compatibility, knowledge C).
  const auto requested = fact_string(f, "attention.effective_request");
  if (requested && !requested->empty()) {
    f["attention"]["selected"] = *requested;
    f["attention"]["selected_by"] = "requested";
    return;
  }
  if (fact_string(f, "gpu.vendor").value_or("nvidia") == "amd") {  // ROCm defaults are not emulated
    f["attention"]["selected"] = nullptr;
    f["attention"]["selected_by"] = "unknown";
    return;
  }
  const std::string fam = fact_string(f, "gpu.arch_family").value_or("");
  const bool mla = fact_bool(f, "model.mla").value_or(false);
  const bool dsa = fact_bool(f, "model.dsa.present").value_or(false);
  const int64_t topk = fact_int(f, "spec.topk").value_or(1);
  const bool spec = fact_bool(f, "spec.enabled").value_or(false);
  std::string sel;
  if (dsa)
    sel = "dsa";
  else if (mla)
    sel = fam == "sm90" ? "fa3" : fam == "sm100" ? "flashinfer" : "triton";
  else if (fam == "sm90" && (!spec || topk == 1))
    sel = "fa3";
  else if (fam == "sm100" && (!spec || topk == 1))
    sel = "trtllm_mha";
  else
    sel = "flashinfer";
  f["attention"]["selected"] = sel;
  f["attention"]["selected_by"] = "auto";
}

// The DeepGEMM line(s) the installed (or pinned) DeepGEMM may belong to.
void derive_deep_gemm_line(Json& f, std::vector<std::string>& candidates, std::string& source) {
  const Tables& t = tables();
  const auto dg = fact_string(f, "lib.deep_gemm.version");
  if (dg) {
    auto v = parse_version(*dg);
    if (v) {
      if (auto h = v->git_hash())
        for (const auto& [hash, line] : t.commits)
          if (hash_matches(*h, hash)) {
            candidates = {line};
            source = "git hash " + *h;
            return;
          }
      for (const auto& seg : v->local_segments()) {
        std::string s = seg;
        if (s == "nvdev") s = "nv_dev";
        for (const auto& [name, _] : t.lines)
          if (s == name || (s == "dev" && v->local.find("nv") != std::string::npos && name == "nv_dev")) {
            candidates = {name};
            source = "local version label";
            return;
          }
        if (v->local.find("nv_dev") != std::string::npos || v->local.find("nv-dev") != std::string::npos) {
          candidates = {"nv_dev"};
          source = "local version label";
          return;
        }
      }
      auto it = t.versions.find(v->public_version().str());
      if (it != t.versions.end()) {
        candidates = it->second;
        source = "__version__ " + v->public_version().str();
        return;
      }
    }
    source = "unrecognized version " + *dg;
  }
  // Installed DeepGEMM unknown: assume the one the vLLM release pins.
  if (fact_string(f, "engine.name").value_or("") == "vllm") {
    if (auto ev = fact_string(f, "engine.version"); ev && fact_string(f, "engine.build").value_or("") == "release") {
      for (const auto& pin : t.pins)
        if (version_satisfies(*ev, pin.versions)) {
          candidates = {pin.line};
          source =
              fmt::format("pinned by vLLM {} ({}{})", *ev, pin.commit, pin.evidence == "inference" ? ", inferred" : "");
          return;
        }
    }
  }
  for (const auto& [name, _] : t.lines) candidates.push_back(name);
  if (source.empty()) source = "unknown";
}

void derive_dsa(Json& f) {
  // DeepGEMM's paged MQA logits is CUDA-only; ROCm builds index with their own kernels.
  if (!fact_bool(f, "model.dsa.present").value_or(false) || fact_string(f, "gpu.vendor").value_or("nvidia") == "amd") {
    f.erase("dsa");
    return;
  }
  const Tables& t = tables();
  Json& d = f["dsa"];
  d = Json::object();
  const std::string fam = fact_string(f, "gpu.arch_family").value_or("unknown");
  const int next_n = static_cast<int>(fact_int(f, "spec.next_n").value_or(1));
  d["next_n"] = next_n;

  std::vector<std::string> lines;
  std::string line_source;
  derive_deep_gemm_line(f, lines, line_source);
  d["deep_gemm"]["candidates"] = lines;
  d["deep_gemm"]["line"] = lines.size() == 1 ? Json(lines[0]) : Json(lines.size() > 1 ? "ambiguous" : "unknown");
  d["deep_gemm"]["line_source"] = line_source;
  // next_n accepted by the kernel on this arch, per candidate line; decided when all agree.
  auto known_accepts = [&](int n) -> std::optional<bool> {
    if (fam == "unknown" || lines.empty()) return std::nullopt;
    int yes = 0, no = 0;
    for (const auto& l : lines) {
      auto it = t.lines.find(l);
      if (it == t.lines.end()) continue;
      (it->second.for_family(fam).contains(n) ? yes : no)++;
    }
    if (yes && !no) return true;
    if (no && !yes) return false;
    return std::nullopt;
  };
  // Stack probe (probes/stack_probes.hpp): the installed DeepGEMM's own answer on this GPU wins
  // over version knowledge; "pass"/"fail" decide, skip/error leave it to the tables.
  auto probed = [&](int n) -> std::optional<bool> {
    const auto sm = fact_int(f, "stack.deep_gemm.device_sm");
    const auto gpu_sm = fact_int(f, "gpu.sm");
    if (!sm || (gpu_sm && *gpu_sm != *sm)) return std::nullopt;  // probed another GPU than the one evaluated
    const auto st = fact_string(f, fmt::format("stack.deep_gemm.next_n.{}.status", n));
    if (st == "pass") return true;
    if (st == "fail") return false;
    return std::nullopt;
  };
  auto accepts = [&](int n) -> std::optional<bool> {
    if (auto p = probed(n)) return p;
    return known_accepts(n);
  };
  Json kernel_native = Json::array();
  for (int n = 1; n <= 16; ++n)
    if (accepts(n).value_or(false)) kernel_native.push_back(n);
  d["deep_gemm"]["native_next_n"] = kernel_native;
  if (lines.size() == 1) {
    auto it = t.lines.find(lines[0]);
    if (it != t.lines.end()) d["deep_gemm"]["native_set"] = it->second.for_family(fam).to_json();
    d["deep_gemm"]["source"] = t.line_sources.count(lines[0]) ? t.line_sources.at(lines[0]) : "";
  }

  // How the engine hands next_n to the kernel.
  const std::string engine = fact_string(f, "engine.name").value_or("vllm");
  const std::string build = fact_string(f, "engine.build").value_or("unknown");
  std::string handling;  // "native" | "flatten" | "unknown"
  std::string handling_source;
  Json engine_native = nullptr;
  const bool fp4_cache = fact_bool(f, "attention.use_fp4_indexer_cache").value_or(false);
  if (engine == "sglang") {
    handling = next_n == 1 ? "native" : "flatten";
    handling_source = "SGLang flattens draft tokens into the batch (next_n = 1)";
    engine_native = Json::array({1});
  } else if (build == "dsv4-preview" || build == "jasl-ds4-sm12x") {
    handling = (fp4_cache && next_n > 2) ? "flatten" : "native";
    handling_source = fmt::format("vLLM build line {} hands next_n through", build);
    engine_native = "any";
  } else if (build == "release") {
    const std::string ev = fact_string(f, "engine.version").value_or("");
    const RangeRule* rule = nullptr;
    for (const auto& r : t.indexer_rules)
      if (version_satisfies(ev, r.versions)) {
        rule = &r;
        break;
      }
    if (rule) {
      const NextNSet& s = rule->native.for_family(fam);
      engine_native = s.to_json();
      handling = s.contains(next_n) ? "native" : "flatten";
      handling_source =
          fmt::format("vLLM {} ({}{})", ev, rule->note, rule->evidence == "inference" ? "; inferred" : "");
    } else {
      handling = "unknown";
      handling_source = fmt::format("vLLM {} predates the DSA next_n handling specprobe knows", ev);
    }
  } else {
    handling = next_n <= 1 ? "native" : "unknown";
    if (build == "unknown-commit")
      handling_source = "vLLM build from a commit specprobe does not know (upstream main flattens, forks may not)";
    else if (build == "dev")
      handling_source = "vLLM development snapshot without a commit hash (upstream main flattens, forks may not)";
    else
      handling_source = "vLLM version unknown (give --python, --site-packages or --lib vllm=VERSION)";
  }
  d["engine_handling"] = handling;
  d["engine_handling_source"] = handling_source;
  d["engine_native_next_n"] = engine_native;

  // The outcome for this next_n.
  int kernel_next_n = next_n;
  if (handling == "flatten") kernel_next_n = 1;
  d["kernel_next_n"] = kernel_next_n;
  auto mode_with = [&](const auto& acc) -> std::string {
    const auto ok = acc(kernel_next_n);
    if (handling == "unknown") {
      // Both outcomes: flattened (kernel sees 1) or passed through (kernel sees next_n).
      return acc(next_n).value_or(false) ? "native" : "unknown";
    }
    if (!ok.has_value()) return "unknown";
    if (!*ok) return "blocked";
    return (handling == "flatten" && next_n > 1) ? "flattened" : "native";
  };
  const std::string mode = mode_with(accepts);
  d["indexer_mode"] = mode;
  // Whether the kernel takes the next_n the engine hands it; null when specprobe cannot tell (an
  // engine build or DeepGEMM line it does not know): SP3001 requires it, so such a plan, and such
  // a matrix cell, is unknown rather than a pass.
  d["kernel_accepts"] = mode == "unknown" ? Json(nullptr) : Json(mode != "blocked");
  // Which source decided (rules say which they used), and what version knowledge alone says.
  const int decisive_n = handling == "unknown" ? next_n : kernel_next_n;
  const bool by_probe = probed(decisive_n).has_value();
  d["decided_by"] = by_probe ? "stack-probe" : "version-knowledge";
  d["version_knowledge_mode"] = mode_with(known_accepts);
  if (by_probe) {
    const std::string key = fmt::format("stack.deep_gemm.next_n.{}", decisive_n);
    d["stack_probe"] = {{"next_n", decisive_n},
                        {"status", fact_string(f, key + ".status").value_or("")},
                        {"error_text", fact_string(f, key + ".error_text").value_or("")},
                        {"version", fact_string(f, "stack.deep_gemm.version").value_or("unknown")},
                        {"device", fact_string(f, "stack.deep_gemm.device_name").value_or("this GPU")}};
  } else {
    d["stack_probe"] = nullptr;
  }
  // k values (0..8) that run natively end to end (engine passes next_n, kernel accepts it), and
  // those the kernel alone accepts (what a pass-through build could run).
  Json native_k = Json::array(), kernel_k = Json::array();
  for (int k = 0; k <= 8; ++k) {
    const int n = k + 1;
    const bool kernel_ok = accepts(n).value_or(false);
    bool engine_ok = false;
    if (engine_native.is_string())
      engine_ok = true;
    else if (engine_native.is_array())
      engine_ok = std::find(engine_native.begin(), engine_native.end(), Json(n)) != engine_native.end();
    if (kernel_ok) kernel_k.push_back(k);
    if (kernel_ok && engine_ok) native_k.push_back(k);
  }
  d["native_k"] = native_k;
  d["kernel_native_k"] = kernel_k;
  d["pass_through_would_assert"] = !accepts(next_n).value_or(true);
}

// Features whose default depends on the engine, its version and the model: the value the engine
// will run with. Unknown engine version: the newest release's default (what an unpinned deploy
// gets), said in the source.
void derive_defaults(Json& f) {
  Json& e = f["effective"];
  e = Json::object();
  const std::string engine = fact_string(f, "engine.name").value_or("vllm");
  const auto version = fact_string(f, "engine.version");
  const bool hybrid = fact_bool(f, "model.hybrid").value_or(false);
  auto at_least = [&](const char* v) { return !version || version_satisfies(*version, std::string(">=") + v); };
  const std::string unknown_note =
      version ? "engine default" : "default of the newest release (engine version unknown)";
  if (auto given = fact_bool(f, "serve.enable_prefix_caching")) {
    e["prefix_caching"] = *given;
    e["prefix_caching_source"] = "given";
  } else if (engine == "sglang") {
    e["prefix_caching"] = true;  // the radix cache, unless --disable-radix-cache
    e["prefix_caching_source"] = unknown_note;
  } else {
    // vLLM V1 caches prefixes by default (0.8+); hybrid (Mamba / linear-attention) models only
    // from 0.26.0 (ModelConfig.is_prefix_caching_supported returned False for them before).
    e["prefix_caching"] = hybrid ? at_least("0.26.0") : at_least("0.8.0");
    e["prefix_caching_source"] = unknown_note;
  }
  if (auto given = fact_bool(f, "serve.enable_chunked_prefill")) {
    e["chunked_prefill"] = *given;
    e["chunked_prefill_source"] = "given";
  } else if (engine == "sglang") {
    const auto size = fact_int(f, "serve.chunked_prefill_size");
    e["chunked_prefill"] = !size || *size > 0;
    e["chunked_prefill_source"] = size ? "given" : unknown_note;
  } else {
    e["chunked_prefill"] = at_least("0.8.0");  // V1 always chunks prefills of generative models
    e["chunked_prefill_source"] = unknown_note;
  }
}

// The attention backend the engine is asked for, and what it selects. vLLM: the request
// upper-cased; VLLM_ATTENTION_BACKEND was deprecated in v0.14 and is ignored by current releases,
// so a request from the environment counts only on an older, known engine version.
void derive_attention(Json& f) {
  Json& a = f["attention"];
  if (!a.is_object()) a = Json::object();
  auto requested = fact_string(f, "attention.requested");
  if (fact_string(f, "engine.name").value_or("vllm") == "sglang") {
    a["effective_request"] = requested ? Json(*requested) : Json(nullptr);
    derive_sglang_attention(f);
    return;
  }
  if (requested) requested = ascii_upper(*requested);
  if (fact_string(f, "gpu.vendor").value_or("nvidia") == "amd") {
    // ROCm backend selection is not emulated: a requested backend is known, and what the installed
    // engine's own ROCm selector chose when the engine check accepted the plan (engine_check.facts).
    // An engine asked without AITER while the deploy turns AITER on chose for another install.
    const std::string aiter_env = ascii_lower(fact_string(f, "env.VLLM_ROCM_USE_AITER").value_or(""));
    const bool aiter_on = aiter_env == "1" || aiter_env == "true";  // vLLM's envs.py reading
    const bool engine_ok = fact_bool(f, "engine_check.ran").value_or(false) &&
                           fact_string(f, "engine_check.status").value_or("") == "ok" &&
                           !(aiter_on && fact_bool(f, "engine_check.platform.aiter") == std::optional<bool>(false));
    auto engine_said = [&](const char* key) -> std::optional<std::string> {
      if (!engine_ok) return std::nullopt;
      return fact_string(f, std::string("engine_check.facts.") + key);
    };
    a.erase("env_honoured");
    a["effective_request"] = requested ? Json(*requested) : Json(nullptr);
    if (requested) {
      a["selected"] = *requested;
      a["selected_by"] = "requested";
    } else if (auto said = engine_said("attention_backend")) {
      a["selected"] = *said;
      a["selected_by"] = "engine";
    } else {
      a["selected"] = nullptr;
      a["selected_by"] = "unknown";
    }
    a["candidates"] = Json::array();
    a["offered"] = Json::array();
    if (auto d = fact_string(f, "spec.attention_backend"))
      a["drafter"] = ascii_upper(*d);
    else if (auto said = engine_said("drafter_attention_backend"))
      a["drafter"] = *said;
    else
      a["drafter"] = a["selected"];
    for (const char* key : {"requested_known", "requested_valid", "invalid_reasons", "cg_support", "spec_as_decode"})
      a.erase(key);
    auto resolved = engine_said("cudagraph_mode");
    f["cudagraph"] = {
        {"requested", find_fact(f, "serve.cudagraph_mode") ? *find_fact(f, "serve.cudagraph_mode") : Json(nullptr)},
        {"resolved", resolved ? Json(*resolved) : Json(nullptr)}};
    return;
  }
  if (fact_string(f, "attention.requested_source").value_or("") == "env") {
    const auto ev = fact_string(f, "engine.version");
    const bool honoured = ev && version_satisfies(*ev, "<0.14.0");
    a["env_honoured"] = honoured;
    if (!honoured) requested.reset();
  } else {
    a.erase("env_honoured");
  }
  a["effective_request"] = requested ? Json(*requested) : Json(nullptr);
  derive_vllm_attention(f);
}

}  // namespace

const std::vector<DeriveStep>& derive_steps() {
  static const std::vector<DeriveStep> kSteps = {
      {"facts.spec", derive_spec},
      {"facts.engine", derive_engine},
      {"facts.options", derive_option_checks},
      {"facts.kv", derive_kv},
      {"facts.defaults", derive_defaults},
      {"facts.backends", derive_attention},
      {"facts.dsa", derive_dsa},
      {"facts.dsa_shapes", derive_dsa_shapes},
      {"facts.sglang", derive_sglang},
      {"facts.spec_validation", derive_spec_validation},
      {"facts.memory", derive_memory},
      {"facts.answers", derive_answers},
  };
  return kSteps;
}

Status check_version_tables() {
  const Tables& t = tables();
  if (!t.error.empty()) return internal_error(t.error);
  for (const char* engine : {"vllm", "sglang"})  // rules/data/options/<engine>.yaml
    if (auto table = options::engine_table(engine); !table) return table.error();
  return Ok{};
}

void derive_facts(Json& f, const FactAudit& audit) {
  if (!f.is_object()) f = Json::object();
  for (const auto& step : derive_steps()) {
    if (!audit) {
      step.run(f);
      continue;
    }
    const Json before = f;
    step.run(f);
    audit(step.writer, before, f);
  }
}

}  // namespace specprobe
