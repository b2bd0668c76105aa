// The quantization phase: the quantization config read as the engine reads it (quant.method,
// .ignore, ...), then per runtime module its stored scheme against what the config makes of it
// (stored_mismatch, fused_disagree, unmatched_layers), modules the engine never quantizes, FP8
// block kernels without weight_scale_inv, MTP modules stored unlike their main-model role,
// ignore entries that match no module, and draft modules built without a prefix by older engines.
#include "common/excerpt.hpp"
#include "inputs/checkpoint/analysis_internal.hpp"

namespace specprobe::checkpoint {
namespace {

// What one run of the phase shares between its steps.
struct QuantCheck {
  QuantCheck(Analysis& an, const QuantSpec& spec, bool sg) : a(an), q(spec), sglang(sg), match{spec, an.arch, sg, re} {}

  Analysis& a;
  const QuantSpec& q;
  bool sglang;
  RegexCache re;
  Matcher match;
  std::vector<std::string> mapped_skip;                          // the skip list as the engine sees it
  bool modelled = false;                                         // the method's matching is modelled
  std::set<std::string> candidate_names;                         // every name an ignore entry could address
  std::map<std::string, std::map<std::string, int>> main_roles;  // main-model stored scheme per role

  // The findings, under their quant.* names (lists capped at kListCap; the counts are full).
  Json found = {{"stored_mismatch", Json::array()},   {"fused_disagree", Json::array()},
                {"unmatched_layers", Json::array()},  {"never_quantized_stored_quantized", Json::array()},
                {"scale_inv_missing", Json::array()}, {"scale_inv_missing_unquantized", Json::array()},
                {"mtp_differs", Json::array()},       {"mtp_unquantized_layers", Json::array()},
                {"ignore_unmatched", Json::array()},  {"empty_prefix", Json::object()}};
  size_t stored_mismatch_count = 0, unmatched_count = 0, ignore_unmatched_count = 0;
  void add(const char* list, Json v) { push_capped(found[list], std::move(v)); }
};

// The stored state of one runtime module.
struct Stored {
  std::string scheme;  // its one scheme, or "mixed"
  std::string first_module;
  bool quantized = false;
};

void write_config_facts(Analysis& a, const QuantSpec& q, const std::string& engine) {
  const ModelConfig& cfg = a.cfg;
  Json& qf = a.qf;
  qf["engine"] = engine;
  qf["method"] = q.method.empty() ? Json(nullptr) : Json(q.method);
  qf["effective_method"] = q.effective_method.empty() ? Json(nullptr) : Json(q.effective_method);
  qf["source"] = cfg.quant_config_source.empty() ? Json(nullptr) : Json(cfg.quant_config_source);
  qf["format"] = q.format.empty() ? Json(nullptr) : Json(q.format);
  qf["ignore"] = q.skip;
  qf["ignore_key"] = q.skip_key.empty() ? Json(nullptr) : Json(q.skip_key);
  qf["unread_ignore_key"] = q.unread_skip_key.empty() ? Json(nullptr) : Json(q.unread_skip_key);
  qf["unread_ignore"] = q.unread_skip;
  qf["kv_cache_scheme"] = q.kv_cache_scheme;
  qf.update(quant_shape_facts(cfg.quant_config));
  for (const std::string& n : q.notes) a.out.notes.push_back({"info", "quant_config", n, cfg.quant_config_file});
}

// vLLM maps skip entries through the model's mapper (compressed-tensors: only dotted, non-"re:"
// entries); SGLang is not modelled as mapping.
void map_skip_list(QuantCheck& c) {
  for (const std::string& e : c.q.skip) {
    const bool mappable = c.a.arch && !c.sglang && !starts_with(e, "re:") &&
                          (c.q.skip_match != SkipMatch::exact_or_re || e.find('.') != std::string::npos);
    c.mapped_skip.push_back(mappable ? apply_renames(e, c.a.arch->mapper) : e);
  }
}

Stored stored_state(QuantCheck& c, const std::string& name, const RuntimeModule& r) {
  Stored s;
  s.scheme = r.schemes.size() == 1 ? std::string(r.schemes.begin()->first) : "mixed";
  s.first_module = std::string(c.a.disk[r.disk.front()].name);
  bool shards_disagree = false;
  if (r.kind != Kind::moe && r.shard_schemes.size() > 1) {
    std::set<std::string_view> all;
    for (const auto& [k, sch] : r.shard_schemes) all.insert(sch.begin(), sch.end());
    shards_disagree = all.size() > 1;
  }
  if (r.kind == Kind::moe && r.schemes.size() > 1) shards_disagree = true;
  if (shards_disagree) {
    Json sh = Json::object();
    for (const auto& [k, sch] : r.shard_schemes) sh[std::string(k)] = std::vector<std::string>(sch.begin(), sch.end());
    c.add("fused_disagree", Json{{"runtime", name}, {"reason", "stored"}, {"shards", sh}});
  }
  for (const auto& [sch, n] : r.schemes) s.quantized = s.quantized || is_quantized_scheme(sch);
  return s;
}

// Modules the engine builds without a quant config, and FP8-block kernels that read
// weight_scale_inv; true when NAME is never quantized.
bool check_table_rules(QuantCheck& c, const std::string& name, const RuntimeModule& r, const Stored& s) {
  const ArchNames* arch = c.a.arch;
  bool never = false;
  if (arch)
    for (const std::string& nq : arch->never_quantized) never = never || ends_with_path(name, nq);
  if (never && s.quantized)
    c.add("never_quantized_stored_quantized",
          Json{{"runtime", name}, {"stored", s.scheme}, {"module", s.first_module}});
  if (arch)
    for (const std::string& need : arch->needs_scale_inv)
      if (ends_with_path(name, need) && s.scheme != "fp8_block") {
        Json e{{"module", s.first_module}, {"runtime", name}, {"group", r.group}, {"stored", s.scheme}};
        if (!s.quantized) c.add("scale_inv_missing_unquantized", e);
        c.add("scale_inv_missing", std::move(e));
      }
  return never;
}

// An MTP module against the main model's modules of the same role.
void compare_mtp(QuantCheck& c, const std::string& name, const RuntimeModule& r, const Stored& s) {
  if (r.group != "mtp" || r.kind == Kind::lm_head) return;
  auto mr = c.main_roles.find(r.role);
  if (mr == c.main_roles.end()) return;
  const std::string main_s = std::max_element(mr->second.begin(), mr->second.end(), [](auto& x, auto& y) {
                               return x.second < y.second;
                             })->first;
  if (main_s != s.scheme && !(r.schemes.count(main_s))) {
    c.add("mtp_differs",
          Json{{"module", s.first_module}, {"runtime", name}, {"role", r.role}, {"mtp", s.scheme}, {"main", main_s}});
    if (is_quantized_scheme(main_s) && !s.quantized) c.add("mtp_unquantized_layers", name);
  }
}

// compressed-tensors: ignore, then targets; "unmatched" when neither applies.
std::string compressed_tensors_state(QuantCheck& c, const std::string& name, const RuntimeModule& r, bool& disagree) {
  if (r.kind == Kind::moe) {
    int ign = 0;
    for (const char* p : {".0.gate_proj", ".0.up_proj", ".0.down_proj"}) {
      const std::string probe = name + p;
      c.candidate_names.insert(probe);
      bool d = false;
      ign += c.match.skipped(probe, c.mapped_skip, d) ? 1 : 0;
    }
    if (ign != 0 && ign != 3) disagree = true;
    return ign == 3                                                   ? "unquantized"
           : c.match.target_matched(name + ".0.gate_proj", Kind::moe) ? "quantized"
                                                                      : "unmatched";
  }
  std::vector<std::string> shard_names;
  const bool ign = c.match.skipped(name, c.mapped_skip, disagree, &shard_names);
  c.candidate_names.insert(shard_names.begin(), shard_names.end());
  return ign ? "unquantized" : c.match.target_matched(name, r.kind) ? "quantized" : "unmatched";
}

// "quantized" | "unquantized": what the config makes of the module.
std::string config_state(QuantCheck& c, const std::string& name, const RuntimeModule& r, bool& disagree) {
  const QuantSpec& q = c.q;
  if (q.experts_only) return r.kind == Kind::moe ? "quantized" : "unquantized";
  if (q.method == "compressed-tensors") {
    const std::string state = compressed_tensors_state(c, name, r, disagree);
    if (state != "unmatched") return state;
    if (r.kind != Kind::lm_head) {  // ParallelLMHead errors are swallowed
      ++c.unmatched_count;
      c.add("unmatched_layers", name);
    }
    return "unquantized";
  }
  std::vector<std::string> shard_names;
  bool ign = c.match.skipped(name, c.mapped_skip, disagree, &shard_names);
  c.candidate_names.insert(shard_names.begin(), shard_names.end());
  if (q.method.rfind("gptq", 0) == 0 || q.method == "auto_gptq")
    for (const std::string& p : q.gptq_dynamic_exclude) ign = ign || c.re.match(p, name);
  const bool quantizable = r.kind != Kind::lm_head || q.lm_head_quantized;
  return !ign && quantizable && q.quantizes_linear ? "quantized" : "unquantized";
}

void check_module(QuantCheck& c, const std::string& name, const RuntimeModule& r) {
  c.candidate_names.insert(name);
  if (r.kind == Kind::embed || r.kind == Kind::router) return;
  const Stored s = stored_state(c, name, r);
  const bool never = check_table_rules(c, name, r, s);
  compare_mtp(c, name, r, s);
  if (!c.modelled || never) return;
  bool disagree = false;
  const std::string state = config_state(c, name, r, disagree);
  if (disagree) c.add("fused_disagree", Json{{"runtime", name}, {"reason", "ignore"}, {"shards", Json::object()}});
  if ((state == "quantized") != s.quantized) {
    // lm_head kept in higher precision while the config would not quantize it anyway is normal;
    // BF16 MTP heads etc. are reported like any other module.
    ++c.stored_mismatch_count;
    c.add("stored_mismatch", Json{{"module", s.first_module},
                                  {"runtime", name},
                                  {"group", r.group},
                                  {"config", state},
                                  {"stored", s.scheme}});
  }
}

// Ignore entries that match no runtime module. Without shard headers there is no runtime module
// list to match against: say nothing.
void find_unmatched_ignores(QuantCheck& c) {
  const QuantSpec& q = c.q;
  if (!c.modelled || q.skip.empty() || c.a.runtime.empty()) return;
  for (size_t i = 0; i < q.skip.size(); ++i) {
    bool hit = false;
    for (const std::string& n : c.candidate_names)
      if (c.match.skip_entry_matches(n, c.mapped_skip[i])) {
        hit = true;
        break;
      }
    if (hit) continue;
    bool on_disk = false;
    for (const DiskModule& dm : c.a.disk)
      if (const std::string module(dm.name); c.match.skip_entry_matches(module, q.skip[i]) ||
                                             (!starts_with(q.skip[i], "re:") && starts_with(module, q.skip[i] + "."))) {
        on_disk = true;
        break;
      }
    ++c.ignore_unmatched_count;
    c.add("ignore_unmatched", Json{{"entry", q.skip[i]}, {"mapped", c.mapped_skip[i]}, {"on_disk_match", on_disk}});
  }
}

// Draft modules built without prefix= (matched as "") in builds before the table's fix.
void check_empty_prefix(QuantCheck& c) {
  if (c.a.empty_prefix_disk.empty()) return;
  const QuantSpec& q = c.q;
  bool d = false;
  const bool ignored = c.match.skipped("", c.mapped_skip, d);
  const bool matched = q.method == "compressed-tensors" ? c.match.target_matched("", Kind::linear) : q.quantizes_linear;
  bool stored_q = false;
  std::vector<std::string> modules;
  for (uint32_t m : c.a.empty_prefix_disk) {
    modules.emplace_back(c.a.disk[m].name);
    stored_q = stored_q || is_quantized_scheme(stored_scheme(c.a.disk[m]));
  }
  const bool config_q = !ignored && matched;
  const bool raises = q.method == "compressed-tensors" && !ignored && !matched;
  c.found["empty_prefix"] = {{"modules", modules},
                             {"fix", c.a.arch->empty_prefix_fix},
                             {"ignored", ignored},
                             {"matched_by_targets", matched},
                             {"stored_quantized", stored_q},
                             {"before_41965", raises                 ? "raises"
                                              : config_q != stored_q ? "mismatch"
                                                                     : "ok"},
                             {"before_44821", (config_q && !raises) != stored_q ? "mismatch" : "ok"}};
}

void write_findings(QuantCheck& c) {
  Json& qf = c.a.qf;
  for (auto& [key, value] : c.found.items()) qf[key] = std::move(value);
  qf["ignore_unmatched_count"] = c.ignore_unmatched_count;
  qf["stored_mismatch_count"] = c.stored_mismatch_count;
  qf["unmatched_layers_count"] = c.unmatched_count;
  qf["modelled"] = c.modelled && !c.a.runtime.empty();
}

}  // namespace

void check_quantization(Analysis& a) {
  const std::string engine = [&] {
    const Json* e = find_fact(a.in_facts, "engine.name");
    return e && e->is_string() ? e->get<std::string>() : std::string("vllm");
  }();
  const QuantSpec q = parse_quant_config(a.cfg.quant_config, a.cfg.quant_config_source, a.model_type);
  write_config_facts(a, q, engine);
  QuantCheck c(a, q, engine == "sglang");
  map_skip_list(c);
  c.modelled = !q.method.empty() && (q.skip_match != SkipMatch::none || q.quantizes_linear || q.experts_only ||
                                     q.method == "compressed-tensors");
  for (const auto& [name, r] : a.runtime)
    if (r.group == "main")
      for (const auto& [s, n] : r.schemes) c.main_roles[r.role][std::string(s)] += n;
  for (const auto& [name, r] : a.runtime) check_module(c, name, r);
  find_unmatched_ignores(c);
  for (const auto& [bad, why] : c.re.bad())
    a.out.notes.push_back(
        {"warning", "regex_unsupported",
         fmt::format("pattern '{}' is not understood by specprobe's regex engine ({}); treated as matching nothing",
                     excerpt(bad), why),
         a.cfg.quant_config_file});
  check_empty_prefix(c);
  write_findings(c);
}

}  // namespace specprobe::checkpoint
