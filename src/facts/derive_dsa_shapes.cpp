// DSA indexer shape limits (see derive_dsa_shapes.hpp). The per-line head lists live in
// rules/data/builds.yaml (deep_gemm_index_heads), loaded once from the embedded copy.
#include "facts/derive_dsa_shapes.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "common/embedded.hpp"

namespace specprobe {
namespace {

using HeadTable = std::map<std::string, std::map<std::string, std::vector<int64_t>>>;  // line -> family -> heads

const HeadTable& head_table() {
  static HeadTable t;
  static std::once_flag once;
  std::call_once(once, [] {
    auto doc = embedded_yaml_document("rules/data/builds.yaml");
    if (!doc) return;
    try {
      const Json heads = doc->value("deep_gemm_index_heads", Json::object());  // items() of a temporary would dangle
      for (const auto& [line, families] : heads.items())
        for (const char* fam : {"sm90", "sm100", "sm12x"})
          for (const auto& h : families.value(fam, Json::array())) t[line][fam].push_back(h.get<int64_t>());
    } catch (const std::exception&) {
      t.clear();  // check_version_tables() reports a malformed file
    }
  });
  return t;
}

}  // namespace

void derive_dsa_shapes(Json& f) {
  if (!fact_bool(f, "model.dsa.present").value_or(false) || !f.contains("dsa")) return;
  Json& s = f["dsa"]["shape"];
  s = Json::object();
  const std::string fam = fact_string(f, "gpu.arch_family").value_or("");
  const auto heads = fact_int(f, "model.dsa.index_n_heads");
  const HeadTable& t = head_table();
  std::vector<std::string> lines;
  if (const Json* c = find_fact(f, "dsa.deep_gemm.candidates"); c && c->is_array())
    for (const auto& l : *c)
      if (l.is_string() && t.count(l.get<std::string>())) lines.push_back(l.get<std::string>());

  s["heads_accepted"] = nullptr;
  s["heads_ok"] = nullptr;
  Json ok_lines = Json::array();
  if (heads && !lines.empty() && (fam == "sm90" || fam == "sm100" || fam == "sm12x")) {
    int yes = 0, no = 0;
    for (const auto& l : lines) {
      const auto& accepted = t.at(l).count(fam) ? t.at(l).at(fam) : std::vector<int64_t>{};
      const bool ok = std::find(accepted.begin(), accepted.end(), *heads) != accepted.end();
      (ok ? yes : no)++;
      if (ok) ok_lines.push_back(l);
      if (lines.size() == 1) s["heads_accepted"] = accepted;
    }
    if (yes && !no) s["heads_ok"] = true;
    if (no && !yes) s["heads_ok"] = false;
  }
  s["heads_ok_lines"] = ok_lines;
  if (auto d = fact_int(f, "model.dsa.index_head_dim"))
    s["head_dim_ok"] = *d == 32 || *d == 64 || *d == 128;
  else
    s["head_dim_ok"] = nullptr;
  const bool fp4 = fact_bool(f, "attention.use_fp4_indexer_cache")
                       .value_or(fact_bool(f, "serve.attention_config.use_fp4_indexer_cache").value_or(false));
  s["fp4_cache_ok"] = !fp4 || fam == "sm100";
}

}  // namespace specprobe
