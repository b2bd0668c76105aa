// Derived facts (see derive.hpp). The version knowledge lives in rules/data/builds.yaml, loaded
// once from the embedded copy.
#include "facts/derive.hpp"

#include <algorithm>
#include <mutex>

#include <yaml-cpp/yaml.h>

#include "common/embedded.hpp"
#include "common/version.hpp"
#include "facts/backends.hpp"
#include "facts/derive_dsa_shapes.hpp"
#include "facts/derive_sglang.hpp"
#include "facts/derive_spec_validation.hpp"
#include "gpu/gpu_info.hpp"

namespace specprobe {
namespace {

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

NextNSet read_set(const YAML::Node& n) {
  NextNSet s;
  if (n.IsScalar() && n.as<std::string>() == "any") s.any = true;
  else if (n.IsSequence())
    for (const auto& v : n) s.values.push_back(v.as<int>());
  return s;
}

PerArch read_per_arch(const YAML::Node& n) {
  PerArch p;
  p.sm90 = read_set(n["sm90"]);
  p.sm100 = read_set(n["sm100"]);
  p.sm12x = read_set(n["sm12x"]);
  p.other = read_set(n["other"]);
  return p;
}

const Tables& tables() {
  static Tables t;
  static std::once_flag once;
  std::call_once(once, [] {
    auto text = embedded_file("rules/data/builds.yaml");
    if (!text) {
      t.error = "rules/data/builds.yaml is not embedded";
      return;
    }
    try {
      YAML::Node root = YAML::Load(std::string(*text));
      for (const auto& b : root["vllm_passthrough_builds"])
        t.passthrough.push_back({b["hash"].as<std::string>(), b["line"].as<std::string>(), b["note"].as<std::string>("")});
      for (const auto& r : root["vllm_indexer_rules"]) {
        RangeRule rr;
        rr.versions = r["versions"].as<std::string>();
        rr.evidence = r["evidence"].as<std::string>("");
        rr.note = r["note"].as<std::string>("");
        rr.native = read_per_arch(r["native"]);
        t.indexer_rules.push_back(rr);
      }
      for (const auto& r : root["vllm_deep_gemm_pins"]) {
        RangeRule rr;
        rr.versions = r["versions"].as<std::string>();
        rr.evidence = r["evidence"].as<std::string>("");
        rr.commit = r["commit"].as<std::string>();
        rr.line = r["line"].as<std::string>();
        t.pins.push_back(rr);
      }
      for (const auto& kv : root["deep_gemm_lines"]) {
        const std::string name = kv.first.as<std::string>();
        t.lines[name] = read_per_arch(kv.second);
        t.line_sources[name] = kv.second["source"].as<std::string>("");
      }
      for (const auto& c : root["deep_gemm_commits"])
        t.commits.emplace_back(c["hash"].as<std::string>(), c["line"].as<std::string>());
      for (const auto& kv : root["deep_gemm_versions"]) {
        std::vector<std::string> lines;
        for (const auto& l : kv.second) lines.push_back(l.as<std::string>());
        t.versions[kv.first.as<std::string>()] = lines;
      }
    } catch (const std::exception& e) {
      t.error = fmt::format("rules/data/builds.yaml: {}", e.what());
    }
  });
  return t;
}

bool hash_matches(const std::string& have, const std::string& known) {
  if (have.size() < 7) return false;
  const size_t n = std::min(have.size(), known.size());
  return have.compare(0, n, known, 0, n) == 0;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

void derive_spec(Json& f) {
  Json& spec = f["spec"];
  if (!spec.is_object()) spec = Json::object();
  const bool enabled = spec.value("enabled", false);
  spec["enabled"] = enabled;
  if (!enabled) {
    spec["k"] = 0;
    spec["next_n"] = 1;
    return;
  }
  if (!spec.contains("k") || spec["k"].is_null()) {
    // vLLM: k defaults to the draft's n_predict; for MTP that is the model's MTP depth (B.2).
    const auto method = fact_string(f, "spec.method").value_or("");
    if (method == "mtp") {
      if (auto d = fact_int(f, "model.mtp_depth"); d && *d > 0) {
        spec["k"] = *d;
        spec["k_source"] = "n_predict";
      }
    }
  }
  if (auto k = fact_int(f, "spec.k")) spec["next_n"] = *k + 1;
  else spec["next_n"] = nullptr;
}

void derive_engine(Json& f) {
  const std::string engine = fact_string(f, "engine.name").value_or("vllm");
  f["engine"]["name"] = engine;
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
  const auto requested = fact_string(f, "attention.requested");
  if (requested && !requested->empty()) {
    f["attention"]["selected"] = *requested;
    f["attention"]["selected_by"] = "requested";
    return;
  }
  const std::string fam = fact_string(f, "gpu.arch_family").value_or("");
  const bool mla = fact_bool(f, "model.mla").value_or(false);
  const bool dsa = fact_bool(f, "model.dsa.present").value_or(false);
  const int64_t topk = fact_int(f, "spec.topk").value_or(1);
  const bool spec = fact_bool(f, "spec.enabled").value_or(false);
  std::string sel;
  if (dsa) sel = "dsa";
  else if (mla) sel = fam == "sm90" ? "fa3" : fam == "sm100" ? "flashinfer" : "triton";
  else if (fam == "sm90" && (!spec || topk == 1)) sel = "fa3";
  else if (fam == "sm100" && (!spec || topk == 1)) sel = "trtllm_mha";
  else sel = "flashinfer";
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
          source = fmt::format("pinned by vLLM {} ({}{})", *ev, pin.commit,
                               pin.evidence == "inference" ? ", inferred" : "");
          return;
        }
    }
  }
  for (const auto& [name, _] : t.lines) candidates.push_back(name);
  if (source.empty()) source = "unknown";
}

void derive_dsa(Json& f) {
  if (!fact_bool(f, "model.dsa.present").value_or(false)) {
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
      handling_source = fmt::format("vLLM {} ({}{})", ev, rule->note, rule->evidence == "inference" ? "; inferred" : "");
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
    if (engine_native.is_string()) engine_ok = true;
    else if (engine_native.is_array())
      engine_ok = std::find(engine_native.begin(), engine_native.end(), Json(n)) != engine_native.end();
    if (kernel_ok) kernel_k.push_back(k);
    if (kernel_ok && engine_ok) native_k.push_back(k);
  }
  d["native_k"] = native_k;
  d["kernel_native_k"] = kernel_k;
  d["pass_through_would_assert"] = !accepts(next_n).value_or(true);
}

}  // namespace

Status check_version_tables() {
  const Tables& t = tables();
  if (!t.error.empty()) return internal_error(t.error);
  return Ok{};
}

void derive_facts(Json& f) {
  if (!f.is_object()) f = Json::object();
  // A declared GPU given by name in fixtures ("gpu": {"declared": "H200"}) expands to its facts.
  if (auto name = fact_string(f, "gpu.declared"); name && !find_fact(f, "gpu.sm")) {
    if (auto g = declared_gpu(*name)) {
      Json gf = gpu_facts(*g);
      gf["declared"] = *name;
      f["gpu"] = gf;
    }
  }
  derive_spec(f);
  derive_engine(f);
  derive_kv(f);
  if (fact_string(f, "engine.name").value_or("vllm") == "sglang") derive_sglang_attention(f);
  else {
    if (auto r = fact_string(f, "attention.requested")) f["attention"]["requested"] = upper(*r);
    // VLLM_ATTENTION_BACKEND was deprecated in v0.14 and is ignored by current releases
    // (vLLM PR #26315 made it --attention-backend; vllm-project/vllm issue #50292): it selects
    // only on an older, known engine version.
    if (fact_string(f, "attention.requested_source").value_or("") == "env") {
      const auto ev = fact_string(f, "engine.version");
      const bool honoured = ev && version_satisfies(*ev, "<0.14.0");
      f["attention"]["env_honoured"] = honoured;
      if (!honoured) f["attention"]["requested"] = nullptr;
    }
    derive_vllm_attention(f);
  }
  derive_dsa(f);
  derive_dsa_shapes(f);
  derive_sglang(f);
  derive_spec_validation(f);
}

}  // namespace specprobe
