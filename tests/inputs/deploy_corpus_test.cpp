// The deploy corpus (tests/corpus/deploy): every real deploy file in manifest.yaml is read through
// the serving readers in-process. None may be an input or internal error unless it is marked
// `malformed: true`; a malformed file may be an input error naming the file and a line, or a read
// whose facts match the manifest. The facts of every server must match the manifest (engine,
// version if stated, model, speculative method and k, TP/PP/DP, KV dtype, attention backend, GPU
// count, unresolved variables), except the mismatches listed in known_gaps.yaml, each with the
// reason it is not read (yet). SPECPROBE_CORPUS_REPORT=1 prints the read rate by form.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <set>

#include <yaml-cpp/yaml.h>

#include "common/ascii.hpp"
#include "inputs/serving.hpp"

using namespace specprobe;

namespace {

const std::string kDeployCorpus = std::string(SPECPROBE_SOURCE_DIR) + "/tests/corpus/deploy/";

std::string scalar(const YAML::Node& n) { return n && n.IsScalar() ? n.Scalar() : std::string(); }
bool null_or_absent(const YAML::Node& n) {
  return !n || n.IsNull() || (n.IsScalar() && (n.Scalar() == "~" || n.Scalar() == "null"));
}

const Json* corpus_fact(const ParsedServing& p, const std::string& name) {
  const Json* v = find_fact(p.facts, name);
  return v && !v->is_null() ? v : nullptr;
}

std::string text(const Json* v) { return !v ? "null" : v->is_string() ? v->get<std::string>() : v->dump(); }

// One field of one server: "" when it matches, else "want X, got Y".
struct Field {
  std::string name;
  std::string want, got;
  bool ok;
};

std::vector<Field> compare(const YAML::Node& s, const ParsedServing& p) {
  std::vector<Field> out;
  const std::string engine = scalar(s["engine"]);
  auto add = [&](const std::string& name, const YAML::Node& want, const Json* got, bool ok) {
    out.push_back(
        {name, null_or_absent(want) ? "null" : (want.IsScalar() ? want.Scalar() : YAML::Dump(want)), text(got), ok});
  };
  auto same_text = [&](const YAML::Node& want, const Json* got, bool ci) {
    if (null_or_absent(want)) return got == nullptr;
    if (!got) return false;
    const std::string g = text(got);
    return ci ? ascii_lower(g) == ascii_lower(want.Scalar()) : g == want.Scalar();
  };
  add("engine", s["engine"], corpus_fact(p, "engine.name"),
      same_text(s["engine"], corpus_fact(p, "engine.name"), false));
  add("version", s["version"], corpus_fact(p, "deploy.engine_version"),
      same_text(s["version"], corpus_fact(p, "deploy.engine_version"), false));
  add("model", s["model"], corpus_fact(p, "model.id"), same_text(s["model"], corpus_fact(p, "model.id"), false));
  const Json* enabled = corpus_fact(p, "spec.enabled");
  const Json* method =
      enabled && enabled->is_boolean() && !enabled->get<bool>() ? nullptr : corpus_fact(p, "spec.method");
  add("spec_method", s["spec_method"], method, same_text(s["spec_method"], method, false));
  const Json* k = corpus_fact(p, engine == "sglang" ? "spec.num_steps" : "spec.num_speculative_tokens");
  add("k", s["k"], k, same_text(s["k"], k, false));
  for (const auto& [field, name] : {std::pair{"tp", "serve.tp"}, {"pp", "serve.pp"}, {"dp", "serve.dp"}}) {
    const Json* g = corpus_fact(p, name);
    const bool ok = null_or_absent(s[field]) ? (!g || *g == Json(1)) : same_text(s[field], g, false);
    add(field, s[field], g, ok);
  }
  const Json* kv = corpus_fact(p, "serve.kv_cache_dtype");
  add("kv_cache_dtype", s["kv_cache_dtype"], kv,
      null_or_absent(s["kv_cache_dtype"]) ? (!kv || *kv == Json("auto")) : same_text(s["kv_cache_dtype"], kv, false));
  const Json* attn = corpus_fact(p, "attention.requested");
  add("attention_backend", s["attention_backend"], attn, same_text(s["attention_backend"], attn, true));
  const Json* gpus = corpus_fact(p, "deploy.gpus");
  add("gpus", s["gpus"], gpus, same_text(s["gpus"], gpus, false));
  // unresolved: the shell variables the compared facts depend on (the manifest lists variables;
  // placeholders such as <MODEL> are not variables).
  static const std::set<std::string> kCompared = {"model.id",
                                                  "spec.method",
                                                  "spec.enabled",
                                                  "spec.num_speculative_tokens",
                                                  "spec.num_steps",
                                                  "serve.tp",
                                                  "serve.pp",
                                                  "serve.dp",
                                                  "serve.kv_cache_dtype",
                                                  "attention.requested",
                                                  "deploy.gpus",
                                                  "deploy.engine_version"};
  std::set<std::string> got;
  for (const auto& [f, names] : p.unresolved)
    if (kCompared.count(f))
      for (const auto& n : names)
        if (!n.empty() && n[0] != '<') got.insert(n);
  std::set<std::string> want;
  if (s["unresolved"] && s["unresolved"].IsSequence())
    for (const auto& n : s["unresolved"]) want.insert(n.Scalar());
  std::string w, g;
  for (const auto& x : want) w += (w.empty() ? "" : ",") + x;
  for (const auto& x : got) g += (g.empty() ? "" : ",") + x;
  out.push_back({"unresolved", "[" + w + "]", "[" + g + "]", want == got});
  return out;
}

struct Gaps {
  std::map<std::string, std::string> reasons;  // "file#server#field" -> reason
  std::set<std::string> used;
};

Gaps load_gaps() {
  Gaps g;
  const YAML::Node doc = YAML::LoadFile(kDeployCorpus + "known_gaps.yaml");
  for (const auto& e : doc) {
    const std::string key = scalar(e["file"]) + "#" + scalar(e["server"]) + "#" + scalar(e["field"]);
    g.reasons[key] = scalar(e["reason"]);
  }
  return g;
}

}  // namespace

TEST_CASE("every file of the deploy corpus is read, with the facts its manifest states", "[inputs][corpus]") {
  const YAML::Node manifest = YAML::LoadFile(kDeployCorpus + "manifest.yaml");
  Gaps gaps = load_gaps();
  ReadOptions options;
  options.process_environment = false;  // the corpus is read as published
  struct Tally {
    int files = 0, read = 0, gaps = 0, errors = 0;
  };
  std::map<std::string, Tally> by_form;
  for (const auto& e : manifest) {
    const std::string file = scalar(e["file"]);
    const bool malformed = e["malformed"] && e["malformed"].as<bool>();
    const std::string form = scalar(e["form"]) + (malformed ? " (malformed)" : "");
    Tally& t = by_form[form];
    ++t.files;
    INFO(file);
    auto r = read_serving_plans(kDeployCorpus + "files/" + file, options);
    if (!r) {
      const Error& err = r.error();
      INFO(err.str());
      CHECK(err.kind == ErrorKind::input);
      CHECK(malformed);                                       // only a malformed file may fail to read ...
      CHECK(err.where.file.find(file) != std::string::npos);  // ... and the error names the file
      CHECK(err.where.line > 0);                              // and the place
      ++(malformed ? t.read : t.errors);
      continue;
    }
    const YAML::Node servers = e["servers"];
    bool all_ok = true, any_gap = false;
    auto check_field = [&](const std::string& server, const Field& f) {
      if (f.ok) return;
      const std::string key = file + "#" + server + "#" + f.name;
      if (gaps.reasons.count(key)) {
        gaps.used.insert(key);
        any_gap = true;
        return;
      }
      all_ok = false;
      FAIL_CHECK("server " << server << " " << f.name << ": manifest " << f.want << ", read " << f.got);
    };
    check_field("*", {"servers", std::to_string(servers.size()), std::to_string(r->plans.size()),
                      servers.size() == r->plans.size()});
    for (size_t i = 0; i < servers.size() && i < r->plans.size(); ++i)
      for (const Field& f : compare(servers[i], r->plans[i])) check_field(std::to_string(i), f);
    if (all_ok && !any_gap)
      ++t.read;
    else if (all_ok)
      ++t.gaps;
  }
  for (const auto& [key, reason] : gaps.reasons)
    if (!gaps.used.count(key)) FAIL_CHECK("known_gaps.yaml: " << key << " now matches the manifest; remove the entry");
  if (const char* env = std::getenv("SPECPROBE_CORPUS_REPORT"); env && *env) {
    Tally all;
    std::cout << "form                          files  read  known-gap  error\n";
    for (const auto& [form, t] : by_form) {
      std::cout << fmt::format("{:28} {:6} {:5} {:10} {:6}\n", form, t.files, t.read, t.gaps, t.errors);
      all.files += t.files, all.read += t.read, all.gaps += t.gaps, all.errors += t.errors;
    }
    std::cout << fmt::format("{:28} {:6} {:5} {:10} {:6}\n", "all", all.files, all.read, all.gaps, all.errors);
  }
}
