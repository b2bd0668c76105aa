// The layer map phases: on-disk modules from the tensor inventory (stored dtype and scale tensors per
// linear module), the runtime modules the serving engine builds from them (name translation in
// names.cpp) grouped into main / mtp / embed / lm_head, the MTP facts, and the per-group summary.
#include <algorithm>

#include "common/ascii.hpp"
#include "inputs/checkpoint/analysis_internal.hpp"

namespace specprobe::checkpoint {
namespace {

// The suffixes a module name takes from its tensors (everything in kParamNames but the gpt-oss ones).
constexpr uint32_t kSuffixParams = ~((1u << p_blocks) | (1u << p_blocks_scales)) & ((1u << kParamCount) - 1);

std::optional<Param> param_of(std::string_view leaf) {
  const auto* it = std::lower_bound(std::begin(kParamNames), std::end(kParamNames), leaf);
  if (it == std::end(kParamNames) || *it != leaf) return std::nullopt;
  return static_cast<Param>(it - std::begin(kParamNames));
}

// Lower-case dtype names, by dtype id.
std::string_view lower_dtype(std::string_view dtype) {
  static const std::array<std::string, kDtypeCount> names = [] {
    std::array<std::string, kDtypeCount> a;
    for (size_t i = 0; i < kDtypeCount; ++i) a[i] = ascii_lower(std::string(dtype_name(i)));
    return a;
  }();
  for (size_t i = 0; i < kDtypeCount; ++i)
    if (dtype_name(i) == dtype) return names[i];
  return {};
}

// "<base>.experts.<E>.<leaf>" -> (<base>.experts, leaf).
std::optional<std::pair<std::string_view, std::string_view>> split_expert(std::string_view m) {
  const size_t leaf_dot = m.rfind('.');
  if (leaf_dot == std::string::npos || leaf_dot == 0) return std::nullopt;
  const size_t num_dot = m.rfind('.', leaf_dot - 1);
  if (num_dot == std::string::npos || num_dot + 1 == leaf_dot) return std::nullopt;
  for (size_t i = num_dot + 1; i < leaf_dot; ++i)
    if (m[i] < '0' || m[i] > '9') return std::nullopt;
  if (!ends_with(m.substr(0, num_dot), ".experts")) return std::nullopt;
  return std::make_pair(m.substr(0, num_dot), m.substr(leaf_dot + 1));
}

// The module and parameter a tensor NAME belongs to; module "" when it is none of a linear module.
std::pair<std::string_view, Param> module_of(std::string_view name) {
  std::pair<std::string_view, Param> found{std::string_view(), p_weight};
  if (const size_t dot = name.rfind('.'); dot != std::string_view::npos)
    if (auto p = param_of(name.substr(dot + 1)); p && ((kSuffixParams >> *p) & 1u)) found = {name.substr(0, dot), *p};
  if (!found.first.empty()) return found;
  // gpt-oss MXFP4 experts: experts.gate_up_proj_blocks / _scales.
  for (std::string_view suf : {std::string_view("_blocks"), std::string_view("_scales")})
    if (ends_with(name, suf) && name.find(".experts.") != std::string_view::npos)
      found = {name.substr(0, name.size() - suf.size()), suf == "_blocks" ? p_blocks : p_blocks_scales};
  return found;
}

// What map_runtime_modules needs of the naming table.
struct LayerContext {
  const ArchNames* arch = nullptr;
  std::optional<MtpPattern> mtp_re;
  int64_t n_layers = -1;
};

// Where a run of on-disk modules with one base name goes. Consecutive modules (the experts of one
// layer) share a base name and so a runtime module: it is placed once per run of equal (base, kind).
struct Placement {
  std::string_view base;
  Kind split_kind = Kind::linear;
  RuntimeModule* r = nullptr;
  std::string group;
  Kind kind = Kind::linear;
  bool is_mtp = false, empty_leaf = false, mtp_layer = false;
  int64_t k = 0;
};

// BASE's runtime name from the table's MTP template, setting P's MTP fields; "" when BASE is no
// MTP layer of the table.
std::string mtp_runtime_name(const LayerContext& c, const std::string& base, Placement& p) {
  if (!c.mtp_re) return {};
  const auto mm = match_mtp(*c.mtp_re, base);
  if (!mm) return {};
  if (mm->first >= 0) {
    const int64_t idx = mm->first;
    p.k = c.arch->index_is_layer_id ? idx - c.n_layers : idx;
    if (c.arch->index_is_layer_id && !(c.n_layers >= 0 && idx >= c.n_layers)) return {};
  }
  p.is_mtp = p.mtp_layer = true;
  const std::string& rest = mm->second;
  std::string t = c.arch->mtp_runtime;
  auto put = [&](const std::string& key, const std::string& val) {
    if (auto pos = t.find(key); pos != std::string::npos) t.replace(pos, key.size(), val);
  };
  put("{L}", c.n_layers >= 0 ? std::to_string(c.n_layers + p.k) : "?");
  put("{k}", std::to_string(p.k));
  put("{rest}", rest);
  for (const std::string& l : c.arch->mtp_empty_prefix_leaves)
    if (rest == l) p.empty_leaf = true;
  return fuse(apply_renames(t, c.arch->mtp_renames), c.arch->load_fuse);
}

// The kind of a module that is not an expert, from its leaf name.
Kind linear_kind(std::string_view base, const std::string& leaf) {
  if (leaf.find("embed") != std::string::npos || leaf == "tok_emb" || leaf == "wte" || leaf == "embeddings")
    return Kind::embed;
  if (leaf == "lm_head" || leaf == "head") return Kind::lm_head;
  if (leaf == "router" || leaf == "shared_expert_gate" ||
      (leaf == "gate" && (ends_with(base, "mlp.gate") || ends_with(base, "ffn.gate"))))
    return Kind::router;
  return Kind::linear;
}

Placement place(Analysis& a, const LayerContext& c, std::string_view base, Kind kind) {
  Placement p;
  p.base = base;
  p.split_kind = kind;
  const std::string base_s(base);
  std::string rt = mtp_runtime_name(c, base_s, p);
  if (!p.is_mtp && !c.arch && base.find("mtp") != std::string_view::npos) p.is_mtp = true;
  if (rt.empty()) rt = c.arch ? fuse(map_module(base_s, c.arch->mapper), c.arch->load_fuse) : base_s;
  p.kind = kind == Kind::linear ? linear_kind(base, leaf_of(base_s)) : kind;
  p.group = p.is_mtp ? "mtp" : p.kind == Kind::embed ? "embed" : p.kind == Kind::lm_head ? "lm_head" : "main";
  p.r = &a.runtime[rt];
  p.r->name = rt;
  return p;
}

// A linear-like module's base name (experts collapsed), the shard leaf of an expert and its kind.
struct SplitName {
  std::string_view base, shard_leaf;
  Kind kind = Kind::linear;
};
SplitName split_module(std::string_view module) {
  if (auto ex = split_expert(module)) return {ex->first, ex->second, Kind::moe};
  if (ends_with(module, ".experts.gate_up_proj") || ends_with(module, ".experts.down_proj"))
    return {module.substr(0, module.rfind('.')), module.substr(module.rfind('.') + 1), Kind::moe};
  return {module, {}, Kind::linear};
}

LayerContext layer_context(Analysis& a) {
  const ModelConfig& cfg = a.cfg;
  a.model_type = cfg.text_model_type && cfg.model_type && *cfg.model_type != *cfg.text_model_type &&
                         !find_arch_names(*cfg.model_type, "")
                     ? *cfg.text_model_type
                     : cfg.model_type.value_or("");
  a.arch = find_arch_names(a.model_type, cfg.architecture.value_or(""));
  a.ck["arch_table"] = a.arch ? Json(a.arch->family) : Json(nullptr);
  LayerContext c;
  c.arch = a.arch;
  c.n_layers = cfg.num_hidden_layers.value_or(-1);
  if (a.arch && !a.arch->mtp_regex.empty()) c.mtp_re = parse_mtp_pattern(a.arch->mtp_regex);
  return c;
}

}  // namespace

std::string_view stored_scheme(const DiskModule& m) {
  if (m.has(p_blocks)) return "mxfp4_blocks";
  if (m.has(p_qweight)) return "gptq_awq_packed";
  if (m.has(p_weight_packed)) return m.dtype_of(p_weight_packed) == "I32" ? "int_packed" : "fp4_packed";
  const std::string_view w = m.dtype_of(p_weight);
  const bool scale_inv = m.has(p_weight_scale_inv) || m.has(p_scale);
  const bool scale = m.has(p_weight_scale);
  if (starts_with(w, "F8_")) return scale_inv ? "fp8_block" : scale ? "fp8_scale" : "fp8_noscale";
  if (w == "F4") return "fp4";
  if (w == "I8" || w == "U8") return scale_inv || scale ? "int8_or_fp4" : "int8_noscale";
  if (w == "BF16" || w == "F16" || w == "F32") {
    if (scale_inv || scale || m.has(p_input_scale))
      return w == "BF16" ? "bf16_with_scale" : w == "F16" ? "f16_with_scale" : "f32_with_scale";
    return lower_dtype(w);
  }
  return w.empty() ? "unknown" : lower_dtype(w);
}

void build_disk_modules(Analysis& a) {
  std::vector<DiskModule> found;
  NameIndex module_ids(a.refs.size() / 2 + 16);
  for (const TensorRef& r : a.refs) {
    const auto [module, param] = module_of(r.t->name);
    if (module.empty()) continue;
    auto [id, fresh] = module_ids.insert(module, static_cast<uint32_t>(found.size()));
    if (fresh) found.push_back(DiskModule{module});
    DiskModule& m = found[*id];
    m.present |= 1u << param;
    m.dtype[param] = r.t->dtype_id;
    m.rank[param] = static_cast<uint8_t>(std::min<uint32_t>(r.t->rank, 255));
  }
  std::vector<uint32_t> order(found.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return found[x].name < found[y].name; });
  a.disk.reserve(found.size());
  for (uint32_t i : order) a.disk.push_back(found[i]);
}

void map_runtime_modules(Analysis& a) {
  const LayerContext c = layer_context(a);
  std::optional<int64_t> mtp_depth = a.cfg.mtp_depth;
  if (!mtp_depth)
    if (const Json* f = find_fact(a.in_facts, "model.mtp_depth"); f && f->is_number_integer())
      mtp_depth = f->get<int64_t>();
  std::set<int64_t> mtp_layers;
  size_t mtp_tensors = 0;
  Placement last;
  for (uint32_t di = 0; di < a.disk.size(); ++di) {
    const DiskModule& dm = a.disk[di];
    const std::string_view module = dm.name;
    const bool linear_like = dm.has(p_weight_packed) || dm.has(p_qweight) || dm.has(p_blocks) ||
                             (dm.has(p_weight) && dm.rank[p_weight] >= 2);
    if (!linear_like) continue;
    const SplitName split = split_module(module);
    if (!last.r || split.base != last.base || split.kind != last.split_kind) last = place(a, c, split.base, split.kind);
    RuntimeModule& r = *last.r;
    if (last.mtp_layer) mtp_layers.insert(last.k);
    if (last.is_mtp) mtp_tensors += dm.param_count();
    r.group = last.group;
    r.kind = last.kind;
    if (r.disk.empty()) r.role = role_of(r.name);
    r.empty_prefix_leaf = r.empty_prefix_leaf || last.empty_leaf;
    if (last.empty_leaf) a.empty_prefix_disk.push_back(di);
    r.disk.push_back(di);
    const std::string_view sch = stored_scheme(dm);
    ++r.schemes[sch];
    const std::string_view shard_key =
        last.kind == Kind::moe ? split.shard_leaf : module.substr(module.find_last_of('.') + 1);
    r.shard_schemes[shard_key].insert(sch);
  }
  a.ck["mtp"] = {{"expected_depth", mtp_depth ? Json(*mtp_depth) : Json(nullptr)},
                 {"layers_present", Json(std::vector<int64_t>(mtp_layers.begin(), mtp_layers.end()))},
                 {"present", !mtp_layers.empty()},
                 {"tensors", mtp_tensors}};
}

void summarize_groups(Analysis& a) {
  // Counted in arrays, written once.
  struct GroupCounts {
    std::array<size_t, kDtypeCount> weight_dtypes{};
    std::array<size_t, kParamCount> scale_tensors{};
  };
  std::map<std::string, GroupCounts> group_counts;
  Json summary = Json::object();
  Json layer_groups = Json::object();
  for (const auto& [name, r] : a.runtime) {
    Json& g = summary[r.group];
    if (g.is_null())
      g = {{"modules", 0},
           {"schemes", Json::object()},
           {"weight_dtypes", Json::object()},
           {"scale_tensors", Json::object()}};
    g["modules"] = g["modules"].get<int>() + 1;
    for (const auto& [sv, n] : r.schemes) {
      const std::string sch(sv);
      g["schemes"][sch] = g["schemes"].value(sch, 0) + n;
    }
    GroupCounts& c = group_counts[r.group];
    for (uint32_t d : r.disk) {
      const DiskModule& dm = a.disk[d];
      for (uint32_t bits = dm.present; bits; bits &= bits - 1) {
        const auto p = static_cast<Param>(std::countr_zero(bits));
        if (p == p_weight || p == p_weight_packed || p == p_qweight || p == p_blocks)
          ++c.weight_dtypes[dm.dtype[p]];
        else if (p != p_bias)
          ++c.scale_tensors[p];
      }
    }
    layer_groups[r.group] = g["modules"];
  }
  for (const auto& [group, c] : group_counts) {
    Json& g = summary[group];
    for (size_t i = 0; i < kDtypeCount; ++i)
      if (c.weight_dtypes[i]) g["weight_dtypes"][std::string(dtype_name(i))] = c.weight_dtypes[i];
    for (size_t i = 0; i < kParamCount; ++i)
      if (c.scale_tensors[i]) g["scale_tensors"][std::string(kParamNames[i])] = c.scale_tensors[i];
  }
  a.out.summary = summary;
  a.ck["layer_groups"] = layer_groups;
}

}  // namespace specprobe::checkpoint
