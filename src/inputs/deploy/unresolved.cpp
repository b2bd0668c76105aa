// Values a deploy file leaves to its environment: an option whose value holds an unresolved
// marker (shell/script.hpp) is given a neutral value for the engine builder, and every fact that
// came from it is then set to null (unknown) with a note naming the variable. Never an input
// error: `--tp-size $TP` is a plan with an unknown TP, not a malformed file.
#include <set>

#include "inputs/forms.hpp"

namespace specprobe::serving {
namespace {

bool same_place(const SourceLocation& a, const SourceLocation& b) {
  return a.file == b.file && a.line == b.line && a.column == b.column && a.line > 0;
}

bool json_like(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  return first != std::string::npos && (s[first] == '{' || s[first] == '[');
}

// Options whose value is a JSON object; an unknown one gets `{}`.
bool object_option(const std::string& name) {
  const std::string c = canonical_name(name);
  return c.find("config") != std::string::npos || c == "hf-overrides" || c == "limit-mm-per-prompt" ||
         c == "mm-processor-kwargs" || c == "override-generation-config" || c == "ir-op-priority" || c == "cc" ||
         c == "ac";
}

// JSON text with markers: inside strings they are escaped (the string facts are nulled later),
// outside strings they become `null`. MAP receives, for each byte of the result, the byte of
// TEXT it came from.
std::string neutral_json(const std::string& text, std::vector<size_t>& map) {
  std::string out;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == kMarkOpen) {
      const size_t close = text.find(kMarkClose, i);
      const size_t end = close == std::string::npos ? text.size() : close + 1;
      const std::string name = text.substr(i + 1, (close == std::string::npos ? text.size() : close) - i - 1);
      const std::string put = in_string ? "\\u0001" + std::string() : "null";
      if (in_string) {
        std::string esc = "\\u0001";
        for (char n : name) esc += (n == '"' || n == '\\') ? '_' : n;
        esc += "\\u0002";
        for (char e : esc) out += e, map.push_back(i);
      } else {
        for (char e : put) out += e, map.push_back(i);
      }
      i = end - 1;
      continue;
    }
    if (c == '"' && (i == 0 || text[i - 1] != '\\')) in_string = !in_string;
    out += c;
    map.push_back(i);
  }
  return out;
}

// `<name>` outside JSON strings (`{"model": <eagle3_model_name>}`, a recipe's placeholder) -> a
// marker, so the rest of the value is read. MAP receives, for each byte of the result, the byte of
// TEXT it came from.
std::string mark_json_placeholders(const std::string& text, std::vector<size_t>& map) {
  std::string out;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!in_string && c == '<') {
      const size_t close = text.find('>', i);
      const std::string name = close == std::string::npos ? "" : text.substr(i, close + 1 - i);
      if (name.size() > 2 && std::all_of(name.begin() + 1, name.end() - 1, [](char ch) {
            return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.' || ch == '/';
          })) {
        for (char m : unresolved_mark(name)) out += m, map.push_back(i);
        i = close;
        continue;
      }
    }
    if (c == '"' && (i == 0 || text[i - 1] != '\\')) in_string = !in_string;
    out += c;
    map.push_back(i);
  }
  return out;
}

// Leaf strings with markers in V -> null; the marker names are collected.
void null_marked(Json& v, const std::string& path, std::map<std::string, std::vector<std::string>>& out) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (!has_unresolved(s)) return;
    auto& names = out[path];
    for (auto& n : unresolved_names(s))
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    v = nullptr;
    return;
  }
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      null_marked(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
  } else if (v.is_array()) {
    for (auto& x : v) null_marked(x, path, out);
  }
}

void clean_json(Json& v) {
  if (v.is_string()) {
    if (has_unresolved(v.get<std::string>())) v = show_unresolved(v.get<std::string>());
  } else if (v.is_structured()) {
    for (auto& x : v) clean_json(x);
  }
}

std::string variable_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n[0] == '<' || n[0] == '$' ? n : "$" + n;
  }
  return out;
}

}  // namespace

std::vector<UnresolvedUse> neutralize_unresolved(std::vector<RawOption>& options, ReadContext& ctx) {
  std::vector<UnresolvedUse> uses;
  for (RawOption& o : options) {
    // A list value (`--cudagraph-capture-sizes $(seq 1 8)`, nargs='+'): an element with a marker
    // makes the whole list unknown; the elements are made typable for the builder.
    if (o.value.is_array()) {
      std::string text;
      std::vector<std::string> names;
      for (Json& x : o.value)
        if (x.is_string() && has_unresolved(x.get<std::string>())) {
          text += (text.empty() ? "" : " ") + x.get<std::string>();
          for (auto& n : unresolved_names(x.get<std::string>()))
            if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
          x = "1";
        }
      if (!names.empty()) uses.push_back({o.where, names, o.name, text});
      continue;
    }
    if (!o.value.is_string()) continue;
    std::string text = o.value.get<std::string>();
    if (json_like(text) && text.find('<') != std::string::npos) {
      std::vector<size_t> map;
      std::string marked = mark_json_placeholders(text, map);
      if (marked != text) {
        text = std::move(marked);
        o.value = text;
        if (o.value_pos) {
          PosMap old = o.value_pos;
          o.value_pos = [old, map](size_t k) { return old(k < map.size() ? map[k] : (map.empty() ? 0 : map.back())); };
        }
      }
    }
    if (!has_unresolved(text)) continue;
    UnresolvedUse use{o.where, unresolved_names(text), o.name, text};
    if (json_like(text)) {
      std::vector<size_t> map;
      o.value = neutral_json(text, map);
      if (o.value_pos) {
        PosMap old = o.value_pos;
        o.value_pos = [old, map](size_t k) { return old(k < map.size() ? map[k] : (map.empty() ? 0 : map.back())); };
      }
      ctx.notes.push_back(
          {"warning",
           fmt::format("--{}: {} has no value here; the parts of the value that depend on it are unknown", o.name,
                       variable_list(use.names)),
           o.where});
      continue;  // string facts inside are nulled after the build
    }
    o.value = object_option(o.name) ? "{}" : "1";
    uses.push_back(std::move(use));
  }
  return uses;
}

void apply_unresolved(ParsedServing& plan, const std::vector<UnresolvedUse>& uses,
                      const std::map<std::string, std::string>& reasons) {
  std::map<std::string, std::vector<std::string>> unknown;  // fact -> names
  null_marked(plan.facts, "", unknown);
  const Json flat = flatten_facts(plan.facts);
  for (const UnresolvedUse& use : uses) {
    // Builder remarks about the neutral value mean nothing.
    std::erase_if(plan.notes, [&](const ReaderNote& n) { return same_place(n.where, use.where); });
    bool any = false;
    for (const auto& [fact, where] : plan.locations) {
      if (!same_place(where, use.where) || !flat.contains(fact)) continue;
      any = true;
      set_fact(plan.facts, fact, nullptr);
      auto& names = unknown[fact];
      for (const auto& n : use.names)
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
    if (any) continue;
    // An option specprobe does not model: its value is kept as written, and the variable is named.
    for (auto& u : plan.unknown)
      if (same_place(u.where, use.where)) u.value = show_unresolved(use.text);
    std::string why;
    for (const auto& n : use.names)
      if (auto r = reasons.find(n); r != reasons.end() && !r->second.empty()) why = " (" + r->second + ")";
    plan.notes.push_back({"info",
                          fmt::format("--{}: {} has no value here{}; its value is unknown", use.option,
                                      variable_list(use.names), show_unresolved(why)),
                          use.where});
  }
  // One note per variable: what it leaves unknown and why.
  std::map<std::string, std::vector<std::string>> by_name;
  for (const auto& [fact, names] : unknown)
    for (const auto& n : names) by_name[n].push_back(fact);
  std::set<std::string> all;
  for (const auto& [name, facts] : by_name) {
    all.insert(name);
    // At most six by name (an unread --config leaves thirty-odd unknown).
    std::string list;
    for (size_t i = 0; i < facts.size() && i < 6; ++i) list += (list.empty() ? "" : ", ") + facts[i];
    if (facts.size() > 6) list += fmt::format(" and {} more", facts.size() - 6);
    auto r = reasons.find(name);
    const std::string why = r != reasons.end() && !r->second.empty() ? r->second : "not set in the file";
    SourceLocation where{plan.path};
    if (auto l = plan.locations.find(facts.front()); l != plan.locations.end()) where = l->second;
    const bool placeholder = name[0] == '<';
    const bool variable = !placeholder && name[0] != '$';
    plan.notes.push_back({"warning",
                          fmt::format("{} has no value here ({}): {} unknown{}", variable_list({name}), why, list,
                                      variable ? fmt::format("; pass --env {}=VALUE to check with a value", name) : ""),
                          where});
  }
  for (auto& [fact, names] : unknown) plan.unresolved[fact] = names;
  if (!all.empty()) {
    Json list = Json::array();
    for (const auto& n : all) list.push_back(n);
    PlanWriter(plan).set("deploy.unresolved", list, SourceLocation{plan.path});
  }
  // The options as written (options.given) show the value as written, `$NAME` included, not the
  // neutral stand-in the builder got: the option checks leave such a value alone.
  if (Json* given =
          plan.facts.contains("options") && plan.facts["options"].is_object() && plan.facts["options"].contains("given")
              ? &plan.facts["options"]["given"]
              : nullptr;
      given && given->is_array()) {
    for (size_t i = 0; i < given->size(); ++i) {
      Json& g = (*given)[i];
      if (!g.is_object()) continue;
      auto at = plan.locations.find(fmt::format("options.given.{}", i));
      for (const UnresolvedUse& use : uses)
        if (at != plan.locations.end() && same_place(at->second, use.where)) g["value"] = show_unresolved(use.text);
      if (g.contains("value")) clean_json(g["value"]);
    }
  }
  for (auto& n : plan.notes)
    if (has_unresolved(n.message)) n.message = show_unresolved(n.message);
  for (auto& u : plan.unknown) clean_json(u.value);
}

}  // namespace specprobe::serving
