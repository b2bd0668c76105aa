// Answer records (see answers.hpp).
#include "facts/answers.hpp"

namespace specprobe {

namespace {

// The dotted prefix of NAME without its last part ("probe.mla_verify.k.3" -> "probe.mla_verify.k").
std::pair<std::string, std::string> split_last(const std::string& name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos) return {"", name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

}  // namespace

Json& append_answer(Json& facts, const Json& result, std::string what, std::string facts_key, Json where,
                    bool plan_shape_only, const char* list) {
  Json record = {{"probe", result.value("probe", "")},
                 {"status", result.value("status", "error")},
                 {"what", std::move(what)},
                 {"facts", std::move(facts_key)},
                 {"where", where.is_object() ? std::move(where) : Json::object()},
                 {"plan_shape_only", plan_shape_only}};
  if (!result.value("reason", "").empty()) record["reason"] = result["reason"];
  Json* arr = const_cast<Json*>(find_fact(facts, list));
  if (!arr || !arr->is_array()) {
    set_fact(facts, list, Json::array());
    arr = const_cast<Json*>(find_fact(facts, list));
  }
  arr->push_back(std::move(record));
  return arr->back();
}

std::string answer_phrase(const Json& answer) {
  if (auto it = answer.find("says"); it != answer.end() && it->is_string()) return it->get<std::string>();
  return answer.value("what", answer.value("probe", std::string("?"))) + " " + answer.value("status", std::string());
}

bool answer_applies(const Json& answer, const Json& facts) {
  if (!answer.is_object()) return false;
  const auto where = answer.find("where");
  if (where == answer.end() || !where->is_object()) return true;
  for (const auto& [name, want] : where->items()) {
    const Json* have = find_fact(facts, name);
    if (want.is_boolean()) {
      const bool v = have && have->is_boolean() && have->get<bool>();
      if (v != want.get<bool>()) return false;
    } else if (!have || *have != want) {
      return false;
    }
  }
  return true;
}

std::vector<const Json*> applicable_answers(const Json& facts, const char* list) {
  std::vector<const Json*> out;
  if (const Json* arr = find_fact(facts, list); arr && arr->is_array())
    for (const Json& a : *arr)
      if (answer_applies(a, facts)) out.push_back(&a);
  return out;
}

Json cell_facts_for(const Json& facts, const char* list, const std::string& cell_id) {
  const Json* arr = find_fact(facts, list);
  if (!arr || !arr->is_array()) return Json();
  bool per_cell = false;
  for (const auto& a : *arr) {
    if (!a.is_object() || !a.contains("cell_facts")) continue;
    per_cell = true;
    if (a.value("for_cell", Json()) == cell_id) return a["cell_facts"];
  }
  if (!per_cell) return Json();
  const std::string l = list;
  const Json* unasked = find_fact(facts, l.substr(0, l.rfind('.')) + ".unasked_cell_facts");
  return unasked ? *unasked : Json();
}

void apply_cell_facts(Json& facts, const Json& cell_facts) {
  if (!cell_facts.is_array()) return;
  for (const auto& kv : cell_facts)
    if (kv.is_array() && kv.size() == 2 && kv[0].is_string()) set_fact(facts, kv[0].get<std::string>(), kv[1]);
}

void drop_plan_shape_answers(Json& facts, const char* list) {
  Json* arr = const_cast<Json*>(find_fact(facts, list));
  if (!arr || !arr->is_array()) return;
  Json kept = Json::array();
  for (Json& a : *arr) {
    if (!a.is_object() || !a.value("plan_shape_only", false)) {
      kept.push_back(std::move(a));
      continue;
    }
    const auto [parent, leaf] = split_last(a.value("facts", std::string()));
    if (parent.empty()) continue;
    if (Json* p = const_cast<Json*>(find_fact(facts, parent)); p && p->is_object()) p->erase(leaf);
  }
  *arr = std::move(kept);
}

void derive_answers(Json& facts) {
  if (const Json* arr = find_fact(facts, kProbeAnswers); !arr || !arr->is_array()) return;  // no probe ran
  Json errors = Json::array();
  for (const Json* a : applicable_answers(facts))
    if (a->value("status", "") == "error") errors.push_back(a->value("facts", a->value("probe", "")));
  set_fact(facts, "probe.errors_at_plan", std::move(errors));
}

}  // namespace specprobe
