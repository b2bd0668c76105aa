// What-if sweep (see sweep.hpp).
#include "rules/sweep.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "common/parallel.hpp"
#include "facts/answers.hpp"
#include "facts/backends.hpp"
#include "facts/derive.hpp"
#include "facts/engine_cells.hpp"
#include "rules/advisory.hpp"
#include "rules/evaluate.hpp"
#include "rules/jsonlogic.hpp"
#include "rules/plan_path.hpp"

namespace specprobe {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Facts the rules never read but that are large (checkpoint tensor lists): dropped from the
// variants so that each copy stays small.
Json slim(const Json& facts) {
  Json f = facts;
  if (f.contains("checkpoint") && f["checkpoint"].is_object()) f["checkpoint"].erase("tensors");
  return f;
}

bool decisive(const std::optional<std::string>& status) {
  return status && (*status == "pass" || *status == "fail" || *status == "crash");
}

// Answers measured at the plan's own shape only (the plan-shape-only answer records of the probes
// and the stack probes, facts/answers.hpp: spec-verify and graph replay, FlashInfer and Triton: k +
// 1 query rows, the plan's KV dtype). A cell of another shape drops them and their facts, so that
// it is never decided by its neighbour's measurement. Answers keyed by their shape stay (their
// records say at which plan facts): probe.mqa_logits.next_n.<n>, probe.mla_verify.k.<k>,
// stack.deep_gemm.next_n.<n>.
void drop_plan_shape_answers(Json& facts) {
  specprobe::drop_plan_shape_answers(facts, kProbeAnswers);
  specprobe::drop_plan_shape_answers(facts, kStackAnswers);
}

// A dotted name under which a cell's facts differ from the plan's, and the cell's value there
// (null when the cell lacks it).
struct Change {
  std::string name;
  const Json* value;
};

// The dotted names under which A and B differ: a key on one side only, or a value that is not
// equal (a changed array is named whole), with B's value. The whole document when they differ at
// the top ("").
void changed_facts(const Json& a, const Json& b, std::string& path, std::vector<Change>& out) {
  if (!a.is_object() || !b.is_object()) {
    if (a != b) out.push_back({path, &b});
    return;
  }
  const size_t mark = path.size();
  auto name = [&](const std::string& key) -> std::string& {
    path.resize(mark);
    if (mark) path += '.';
    path += key;
    return path;
  };
  auto ia = a.begin(), ib = b.begin();  // keys in order on both sides
  while (ia != a.end() || ib != b.end()) {
    // <0: A's key comes first (B lacks it); >0: B's does; 0: both have it.
    const int order = ib == b.end() ? -1 : ia == a.end() ? 1 : ia.key().compare(ib.key());
    if (order < 0) {
      out.push_back({name(ia.key()), nullptr});
      ++ia;
    } else if (order > 0) {
      out.push_back({name(ib.key()), &ib.value()});
      ++ib;
    } else {
      changed_facts(ia.value(), ib.value(), name(ia.key()), out);
      ++ia;
      ++ib;
    }
  }
  path.resize(mark);
}

// What each rule and advisory of the sweep gives on the plan's own facts, kept for the cells that
// agree with the plan on every fact it reads (issue 49: most rules read nothing a cell changes, so
// a cell evaluates only the few that do). An entry without an answer (reads not all named) is
// evaluated in every cell.
struct PlanAnswers {
  struct Answer {
    ResultStatus status;
    Severity severity;
  };
  struct Entry {
    std::optional<Answer> answer;
    const std::vector<std::string>* reads = nullptr;  // Rule::Compiled / Advisory::status_facts
  };
  std::vector<Entry> rules;       // by catalog.rules index
  std::vector<Entry> advisories;  // by index in the sweep's advisory list
  // Every fact an entry with an answer reads, sorted, with the entry's index (rules first, then
  // advisories after rules.size()): a cell finds the entries its few changes touch from the
  // changes, instead of testing every entry's reads against them.
  std::vector<std::pair<std::string_view, uint32_t>> readers;

  void index_readers() {
    readers.clear();
    for (size_t i = 0; i < rules.size() + advisories.size(); ++i) {
      const Entry& e = i < rules.size() ? rules[i] : advisories[i - rules.size()];
      if (e.answer)
        for (const std::string& name : *e.reads) readers.emplace_back(name, static_cast<uint32_t>(i));
    }
    std::sort(readers.begin(), readers.end());
  }

  // The entries with an answer that read a fact in, above or under NAME (a dotted name, not the
  // whole document), sorted, each once.
  std::vector<uint32_t> readers_of(std::string_view name) const {
    std::vector<uint32_t> out;
    auto from = [&](std::string_view x) {
      return std::lower_bound(readers.begin(), readers.end(), x,
                              [](const auto& r, std::string_view y) { return r.first < y; });
    };
    for (auto it = from(name); it != readers.end() && it->first == name; ++it) out.push_back(it->second);
    // the facts under it
    const std::string under = std::string(name) + '.';
    for (auto it = from(under); it != readers.end() && it->first.compare(0, under.size(), under) == 0; ++it)
      out.push_back(it->second);
    // the facts above it
    for (size_t dot = name.find('.'); dot != std::string_view::npos; dot = name.find('.', dot + 1))
      for (auto it = from(name.substr(0, dot)); it != readers.end() && it->first == name.substr(0, dot); ++it)
        out.push_back(it->second);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
};

// What the cells one thread of a sweep evaluates share: the names and values of their changes
// interned to numbers, the entries each name touches, and the answers of the entries the cells
// evaluated (issue 49: a cell evaluates some sixty entries its changes touch, but across a matrix
// the values an entry reads repeat: over the deploy corpus one evaluation in eight was new). An
// entry with a plan answer reads only named facts (Program::closed), and a cell's facts are the
// plan's except under its changes; so the entry's answer in a cell follows from the changes that
// touch it, their names and the cell's values there, which key the memo (values compared whole,
// so a key is never shared by different values).
class CellMemo {
 public:
  explicit CellMemo(const PlanAnswers& plan) : plan_(plan) {}

  struct Id {
    uint32_t name, value;
  };
  // The ids of CHANGES (none may be the whole document).
  std::vector<Id> ids(const std::vector<Change>& changes) {
    std::vector<Id> out;
    out.reserve(changes.size());
    for (const Change& c : changes) {
      const auto [it, fresh] = names_.try_emplace(c.name, static_cast<uint32_t>(info_.size()));
      if (fresh) info_.push_back({{}, plan_.readers_of(c.name)});
      std::vector<Json>& seen = info_[it->second].values;
      uint32_t value = kAbsent;
      if (c.value) {
        const auto v = std::find(seen.begin(), seen.end(), *c.value);
        value = static_cast<uint32_t>(v - seen.begin());
        if (v == seen.end()) seen.push_back(*c.value);
      }
      out.push_back({it->second, value});
    }
    return out;
  }
  // The entries that read a fact in, above or under the name NAME.
  const std::vector<uint32_t>& readers(uint32_t name) const { return info_[name].readers; }

  std::optional<PlanAnswers::Answer> find(const std::string& key) const {
    const auto it = answers_.find(key);
    if (it == answers_.end()) return std::nullopt;
    return it->second;
  }
  void put(const std::string& key, PlanAnswers::Answer answer) { answers_.emplace(key, answer); }

 private:
  static constexpr uint32_t kAbsent = 0xffffffff;
  struct NameInfo {
    std::vector<Json> values;  // the values seen, by value id
    std::vector<uint32_t> readers;
  };
  const PlanAnswers& plan_;
  std::unordered_map<std::string, uint32_t> names_;
  std::vector<NameInfo> info_;  // by name id
  std::unordered_map<std::string, PlanAnswers::Answer> answers_;
};

// The status of each entry in one cell: the plan's answer for an entry the cell's changes do not
// touch, the memo's for one whose touching changes another cell had with the same values, else
// evaluated (and remembered). Without a memo, or when the whole document changed, every entry is
// evaluated.
class CellAnswers {
 public:
  CellAnswers(const PlanAnswers& plan, CellMemo* memo, const std::vector<Change>& changes) : plan_(plan), memo_(memo) {
    const size_t n = plan.rules.size() + plan.advisories.size();
    all_ =
        memo_ == nullptr || std::any_of(changes.begin(), changes.end(), [](const Change& c) { return c.name.empty(); });
    if (all_) return;
    ids_ = memo_->ids(changes);
    // (entry, change) pairs in change order, then grouped by entry: BY_ holds each touched entry's
    // change indices, in order, from FIRST_[entry] to FIRST_[entry + 1].
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (uint32_t c = 0; c < ids_.size(); ++c)
      for (uint32_t entry : memo_->readers(ids_[c].name)) pairs.emplace_back(entry, c);
    first_.assign(n + 1, 0);
    for (const auto& [entry, change] : pairs) ++first_[entry + 1];
    for (size_t i = 1; i <= n; ++i) first_[i] += first_[i - 1];
    by_.resize(pairs.size());
    std::vector<uint32_t> next(first_.begin(), first_.end() - 1);
    for (const auto& [entry, change] : pairs) by_[next[entry]++] = change;
  }

  // Entry I (rules first, then advisories); EVAL evaluates it on the cell's facts, setting SEVERITY.
  template <class Eval>
  ResultStatus status(size_t i, Severity& severity, Eval&& eval) const {
    const PlanAnswers::Entry& e = i < plan_.rules.size() ? plan_.rules[i] : plan_.advisories[i - plan_.rules.size()];
    if (!e.answer || all_) return eval();
    if (first_[i] == first_[i + 1]) {  // untouched
      severity = e.answer->severity;
      return e.answer->status;
    }
    thread_local std::string key;
    key.clear();
    auto put = [](uint32_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
    put(static_cast<uint32_t>(i));
    for (uint32_t b = first_[i]; b < first_[i + 1]; ++b) {
      put(ids_[by_[b]].name);
      put(ids_[by_[b]].value);
    }
    if (const auto hit = memo_->find(key)) {
      severity = hit->severity;
      return hit->status;
    }
    const ResultStatus s = eval();
    memo_->put(key, {s, severity});
    return s;
  }

 private:
  const PlanAnswers& plan_;
  CellMemo* memo_;
  bool all_ = false;
  std::vector<CellMemo::Id> ids_;  // by change index
  std::vector<uint32_t> first_;
  std::vector<uint32_t> by_;
};

PlanAnswers plan_answers(const Catalog& catalog, const std::vector<const Advisory*>& advisories, const Json& base,
                         const std::vector<RuleResult>* results) {
  // The plan's results, when given: their status and severity are what rule_status and
  // advisory_status give on the plan's facts (evaluate_rule and evaluate_advisory decide the same).
  // They list the catalog's rules, then its advisories, in the catalog's order (evaluate_catalog),
  // so each is found by walking them in step (one out of step is still found).
  size_t next = 0;
  auto given = [&](const std::string& id) -> const RuleResult* {
    if (!results) return nullptr;
    const std::vector<RuleResult>& r = *results;
    for (size_t n = 0; n < r.size(); ++n, ++next) {
      if (next == r.size()) next = 0;
      if (r[next].id == id) return &r[next++];
    }
    return nullptr;
  };
  auto answer = [&](const std::string& id, auto&& evaluate) {
    if (const RuleResult* r = given(id)) return PlanAnswers::Answer{r->status, r->severity};
    return evaluate();
  };
  PlanAnswers p;
  p.rules.resize(catalog.rules.size());
  for (size_t i = 0; i < catalog.rules.size(); ++i) {
    const Rule& r = catalog.rules[i];
    if (r.deprecated || !r.compiled || !r.compiled->closed) continue;
    p.rules[i].answer = answer(r.id, [&] {
      Severity sev = r.severity;
      const ResultStatus st = rule_status(r, base, &sev);
      return PlanAnswers::Answer{st, sev};
    });
    p.rules[i].reads = &r.compiled->status_facts;
  }
  p.advisories.resize(advisories.size());
  for (size_t i = 0; i < advisories.size(); ++i) {
    const Advisory& a = *advisories[i];
    const Rule& rule = a.trigger_rule();
    if (!rule.compiled || !rule.compiled->closed) continue;
    PlanAnswers::Entry& e = p.advisories[i];
    e.reads = &a.status_facts();
    e.answer = answer(a.id, [&] {
      Severity sev = a.severity;
      const ResultStatus st = advisory_status(a, base, &sev);
      return PlanAnswers::Answer{st, sev};
    });
  }
  p.index_readers();
  return p;
}

// How a cell is known (MatrixCell::known_by, evidence): the measurements and answers at this
// cell's own shape that its rules read, after derive_facts.
void add_cell_evidence(MatrixCell& cell, const Json& facts) {
  const std::string gpu = fact_string(facts, "gpu.name").value_or("this GPU");
  // The answer records (facts/answers.hpp) that apply to this cell's facts and decided something,
  // one evidence line per source.
  // (HEAD empty: one line per record, as the engine's answers are quoted whole.)
  struct Source {
    const char* list;
    const char* known_by;
    std::string head;
    const char* sep;
  };
  const Source sources[] = {{kProbeAnswers, "probe", "probe: specprobe's kernels on " + gpu + ":", ","},
                            {kStackAnswers, "stack", "stack:", ";"},
                            {kEngineAnswers, "engine", "", ""}};
  for (const Source& src : sources) {
    std::vector<std::string> phrases;
    for (const Json* a : applicable_answers(facts, src.list))
      if (decisive(a->value("status", std::string()))) phrases.push_back(answer_phrase(*a));
    if (phrases.empty()) continue;
    cell.known_by.push_back(src.known_by);
    if (src.head.empty()) {
      cell.evidence.insert(cell.evidence.end(), phrases.begin(), phrases.end());
      continue;
    }
    std::string line = src.head;
    for (size_t i = 0; i < phrases.size(); ++i) line += (i ? std::string(src.sep) + " " : " ") + phrases[i];
    cell.evidence.push_back(line);
  }
}

// The inputs a user would change for cell (K, BACKEND, KV), written as a user would write them.
void override_cell_inputs(Json& facts, int k, const std::string& backend, const std::string& kv,
                          const std::string& method) {
  Json& spec = facts["spec"];
  spec["enabled"] = k > 0;
  if (k > 0 && !spec.contains("method")) spec["method"] = method;
  if (fact_string(facts, "engine.name").value_or("vllm") == "sglang") {
    // A chain of k draft steps verifies k + 1 tokens.
    spec["num_steps"] = k;
    spec["num_draft_tokens"] = k + 1;
  } else {
    spec["num_speculative_tokens"] = k;
  }
  // A variant names the backend for the whole plan: target and drafter (speculative-config
  // attention_backend), since the drafter otherwise auto-selects its own (vllm#44879).
  if (!backend.empty()) {
    facts["attention"]["requested"] = backend;
    facts["attention"]["requested_source"] = "attention-backend";
    if (k > 0) spec["attention_backend"] = backend;
  }
  facts["serve"]["kv_cache_dtype"] = kv;
  // A source that answers per cell (facts/answers.hpp cell_facts) holds its own facts for this
  // cell: its answer there, or what it says of a cell it was not asked about.
  const std::string id = engine_cell_id(k, backend, kv);
  for (const char* list : kAnswerLists) apply_cell_facts(facts, cell_facts_for(facts, list, id));
}

// The cell's value from its derived FACTS: the rules and advisories on its path, the plan-path
// facts, and how it is known.
MatrixCell decide_cell(const Catalog& catalog, const std::vector<const Advisory*>& advisories, const Json& facts,
                       MatrixCell cell, const std::set<std::string>& ignored, const CellAnswers& answers) {
  bool unknown = false, fails = false, risky = false;
  // An error that bites every time fails the cell; a conditional one puts it at risk.
  const bool fallback_gpu = fact_bool(facts, "gpu.fallback").value_or(false);
  auto error_finding = [&](const std::string& id, Certainty c, bool reads_gpu) {
    // On an assumed GPU, a GPU-dependent error is as sure as the assumption (evaluate.hpp).
    if (fallback_gpu && reads_gpu) c = Certainty::conditional;
    if (c == Certainty::deterministic) {
      fails = true;
      cell.errors.push_back(id);
    } else {
      risky = true;
      cell.risks.push_back(id);
    }
  };
  for (size_t i = 0; i < catalog.rules.size(); ++i) {
    const Rule& r = catalog.rules[i];
    if (r.deprecated || ignored.count(r.id)) continue;
    Severity sev = r.severity;
    const ResultStatus s = answers.status(i, sev, [&] { return rule_status(r, facts, &sev); });
    if (s == ResultStatus::fail) {
      if (sev == Severity::error) {
        error_finding(r.id, r.certainty, fallback_gpu && reads_gpu_facts(r));
      } else if (sev == Severity::warning) {
        cell.warnings.push_back(r.id);
      }
    } else if (s == ResultStatus::error) {
      unknown = true;
      cell.undecided.push_back(r.id);
    }
  }
  for (size_t i = 0; i < advisories.size(); ++i) {
    const Advisory& a = *advisories[i];
    if (ignored.count(a.id)) continue;
    Severity sev = a.severity;
    const ResultStatus s =
        answers.status(catalog.rules.size() + i, sev, [&] { return advisory_status(a, facts, &sev); });
    if (s == ResultStatus::fail) {
      if (sev == Severity::error) {
        error_finding(a.id, certainty_of(a), fallback_gpu && (!a.gpu.empty() || reads_gpu_facts(a.trigger_rule())));
      } else if (sev == Severity::warning) {
        cell.warnings.push_back(a.id);
      }
    }
    // An advisory on the cell's path that cannot be decided (a fact it needs is unknown) leaves
    // the cell unknown, as it leaves the verdict (pipeline/verdict.cpp decide).
    if (s == ResultStatus::error) {
      unknown = true;
      cell.undecided.push_back(a.id);
    }
  }
  if (const Json* m = find_fact(facts, "dsa.indexer_mode"); m && m->is_string()) cell.indexer = m->get<std::string>();
  // A cell whose plan cannot be decided at all (no model, no k, no backend) is unknown whatever
  // its rules say: the verdict decides the same way (rules/plan_path.hpp).
  for (const std::string& fact : missing_plan_facts(facts)) {
    unknown = true;
    cell.undecided.push_back(fact);
  }
  cell.verdict = fails ? "fails" : unknown ? "unknown" : risky ? "at-risk" : "works";
  if (cell.verdict != "unknown") cell.known_by.push_back("rules");
  add_cell_evidence(cell, facts);
  return cell;
}

// One variant: the plan's inputs with k, the backend and the KV-cache dtype replaced as a user
// would write them, then derived like the plan itself. PLAN_SHAPE: the cell has the plan's k and
// KV dtype (the shape the plan-shape probes measured).
// IS_PLAN: the cell is the plan itself (its k, backend and KV dtype): its inputs are the plan's,
// unchanged (no method filled in, no backend forced on the drafter, the plan's own engine check),
// so that it reads exactly what the verdict reads. MEMO: the sweep's (null: no entry is remembered).
MatrixCell evaluate_cell(const Catalog& catalog, const std::vector<const Advisory*>& advisories, Json facts, int k,
                         const std::string& backend, const std::string& kv, const std::string& method,
                         const std::set<std::string>& ignored, bool plan_shape, bool is_plan, const Json& base,
                         const PlanAnswers& plan, CellMemo* memo) {
  MatrixCell cell;
  if (!plan_shape) drop_plan_shape_answers(facts);
  cell.k = k;
  cell.backend = backend;
  cell.kv_cache_dtype = kv;
  if (!is_plan) override_cell_inputs(facts, k, backend, kv, method);
  derive_facts(facts);
  std::vector<Change> changes;
  std::string path;
  changed_facts(base, facts, path, changes);
  return decide_cell(catalog, advisories, facts, std::move(cell), ignored, CellAnswers(plan, memo, changes));
}

// The advisories that can change some cell: an advisory applies by engine and GPU (advisory.cpp
// applicability), which no cell changes, so one that does not apply to the plan applies to none
// of its cells and is left out of the sweep (issue 49: most of the database is another engine's,
// or fixed in the versions the plan runs). One whose applicability cannot be evaluated stays.
std::vector<const Advisory*> sweep_advisories(const Catalog& catalog, const Json& plan_facts) {
  std::vector<const Advisory*> out;
  for (const auto& a : catalog.advisories) {
    if (rule_status(a.head_rule(), plan_facts) == ResultStatus::skip) continue;
    // Nor does a cell change the libraries' versions: an advisory the installed versions are
    // outside of passes in every cell, and one that reaches only releases older than the newest
    // (for an unknown version) is at most a note, which no cell counts (advisory_status).
    const auto where = place_versions(a, plan_facts).kind;
    if (where == VersionVerdict::Kind::fixed || where == VersionVerdict::Kind::unknown_older) continue;
    out.push_back(&a);
  }
  return out;
}

}  // namespace

SupportMatrix sweep_axes(const Json& plan_facts, const SweepOptions& options) {
  SupportMatrix m;
  const Json& base = plan_facts;
  // Backend variants come from the vLLM selector emulation, which is CUDA's; on other GPUs (and
  // for SGLang) the matrix varies k and the KV dtype for the plan's own backend.
  const bool vllm = fact_string(base, "engine.name").value_or("vllm") == "vllm" &&
                    fact_string(base, "gpu.vendor").value_or("nvidia") == "nvidia";
  const std::string requested_backend = fact_string(base, "attention.selected").value_or("");
  const std::string requested_kv = fact_string(base, "serve.kv_cache_dtype").value_or("auto");
  for (int k = 0; k <= options.max_k; ++k) m.ks.push_back(k);
  // Backends the engine offers for this model on this GPU (valid with some kv dtype), in priority order.
  if (vllm) {
    Json probe = base;
    for (const std::string kv : {"auto", "fp8"}) {
      probe["serve"]["kv_cache_dtype"] = kv;
      for (const auto& b : vllm_backend_candidates(probe))
        if (b.valid && !contains(m.backends, b.name)) m.backends.push_back(b.name);
    }
    if (requested_kv.rfind("turboquant_", 0) == 0 && !contains(m.backends, "TURBOQUANT"))
      m.backends.push_back("TURBOQUANT");
    if (!requested_backend.empty() && !contains(m.backends, requested_backend))
      m.backends.insert(m.backends.begin(), requested_backend);
  } else {
    m.backends.push_back(requested_backend);
  }
  m.kv_cache_dtypes = {"auto", "fp8"};
  if (!contains(m.kv_cache_dtypes, requested_kv)) m.kv_cache_dtypes.push_back(requested_kv);
  return m;
}

SupportMatrix sweep_support_matrix(const Catalog& catalog, const Json& input_facts, const Json& plan_facts,
                                   const SweepOptions& options, const std::set<std::string>& ignored) {
  const Json inputs = slim(input_facts);
  const Json base = slim(plan_facts);
  SupportMatrix m = sweep_axes(base, options);
  const bool vllm = fact_string(base, "engine.name").value_or("vllm") == "vllm" &&
                    fact_string(base, "gpu.vendor").value_or("nvidia") == "nvidia";
  const std::string requested_backend = fact_string(base, "attention.selected").value_or("");
  const std::string requested_kv = fact_string(base, "serve.kv_cache_dtype").value_or("auto");
  const int requested_k = static_cast<int>(fact_int(base, "spec.k").value_or(0));
  // The plan's own cell: k 0 without speculation; none when speculation is on with k unknown.
  std::optional<int64_t> plan_k = fact_bool(base, "spec.enabled").value_or(false) ? fact_int(base, "spec.k") : 0;
  std::string method = fact_string(base, "spec.method").value_or("");
  if (method.empty()) method = fact_int(base, "model.mtp_depth").value_or(0) > 0 ? "mtp" : "draft_model";

  const std::vector<const Advisory*> advisories = sweep_advisories(catalog, base);
  const PlanAnswers plan = options.reuse_plan_answers
                               ? plan_answers(catalog, advisories, base, options.plan_results)
                               : PlanAnswers{std::vector<PlanAnswers::Entry>(catalog.rules.size()),
                                             std::vector<PlanAnswers::Entry>(advisories.size()),
                                             {}};
  // Without backend variants (SGLang, other vendors) the one row is the plan's own backend: its
  // cells are evaluated without overriding the backend, and labelled with the row's name, so
  // that every lookup of the plan's row (working k, printers) finds them.
  struct Axis {
    int k;
    const std::string* backend;
    const std::string* kv;
  };
  std::vector<Axis> axes;
  for (int k : m.ks)
    for (const auto& b : m.backends)
      for (const auto& kv : m.kv_cache_dtypes) axes.push_back({k, &b, &kv});
  // The cells are independent: each derives its own copy of the facts. Each of the sweep's
  // threads takes every LANES-th cell, with a memo of its own (no lock between them).
  // Every cell runs; the first cell's exception (by index) is rethrown after.
  m.cells.resize(axes.size());
  std::vector<std::exception_ptr> errors(axes.size());
  const size_t lanes = std::max<size_t>(1, std::min(axes.size(), options.threads));
  parallel_for(lanes, lanes, [&](size_t lane) {
    CellMemo memo(plan);
    for (size_t i = lane; i < axes.size(); i += lanes) {
      const auto& [k, b, kv] = axes[i];
      try {
        m.cells[i] = evaluate_cell(catalog, advisories, inputs, k, vllm ? *b : std::string(), *kv, method, ignored,
                                   k == requested_k && *kv == requested_kv,
                                   plan_k && k == *plan_k && *b == requested_backend && *kv == requested_kv, base, plan,
                                   options.reuse_plan_answers ? &memo : nullptr);
        m.cells[i].backend = *b;
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  });
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);

  auto cell = [&](int k, const std::string& b, const std::string& kv) -> const MatrixCell* {
    for (const auto& c : m.cells)
      if (c.k == k && c.backend == b && c.kv_cache_dtype == kv) return &c;
    return nullptr;
  };
  for (int k : m.ks) {
    const MatrixCell* c = cell(k, requested_backend, requested_kv);
    if (c && (c->verdict == "works" || c->verdict == "at-risk")) {
      m.working_k.push_back(k);
      m.max_working_k = k;
    }
  }
  const MatrixCell* req = cell(requested_k, requested_backend, requested_kv);
  if (req && req->verdict != "works" && req->verdict != "at-risk") {
    for (const auto& b : m.backends)
      if (b != requested_backend)
        if (const MatrixCell* c = cell(requested_k, b, requested_kv); c && c->verdict == "works")
          m.alternative_backends.push_back(b);
    for (const auto& kv : m.kv_cache_dtypes)
      if (kv != requested_kv)
        if (const MatrixCell* c = cell(requested_k, requested_backend, kv); c && c->verdict == "works")
          m.alternative_kv_cache_dtypes.push_back(kv);
  }
  return m;
}

}  // namespace specprobe
