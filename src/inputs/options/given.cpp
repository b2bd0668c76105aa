// The options as written (options.given) and the option tables' view of a name, shared by the vLLM
// and SGLang builders: what the engine calls an option (aliases, negations, abbreviations) and
// whether it takes a value. The per-release check itself runs later (options/check.cpp), once the
// engine version is known.
#include <set>

#include "inputs/options/options.hpp"
#include "inputs/options/tables.hpp"

namespace specprobe::serving {

TableName table_name(std::string_view engine, const std::string& flag) {
  TableName out;
  auto table = options::engine_table(engine);
  if (!table || !*table) {
    out.table = false;
    return out;
  }
  const options::Resolution r = options::resolve_flag(**table, flag, (*table)->all);
  if (r.accepted.none() || r.option.empty()) return out;
  out.known = true;
  out.option = r.option;
  out.negative = r.negative;
  out.abbreviation = r.abbreviation;
  return out;
}

Arity table_arity(std::string_view engine, std::string_view canonical) {
  const TableName n = table_name(engine, "--" + std::string(canonical));
  if (!n.known) return Arity::unknown;
  if (n.negative) return Arity::flag;
  auto table = options::engine_table(engine);
  const options::OptionSpec& o = (*table)->options.at(n.option);
  bool all_flags = true, list = false;
  for (const auto& t : o.types) {
    all_flags &= t.value == "bool" || t.value == "count";
    list |= t.value.rfind("list[", 0) == 0;
  }
  if (all_flags) return Arity::flag;
  return list ? Arity::list : Arity::value;
}

ParsedServing start_plan(ReadContext& ctx) {
  ParsedServing out;
  out.form = ctx.form;
  out.path = ctx.path;
  out.notes = std::move(ctx.notes);
  out.unknown = std::move(ctx.unknown);
  return out;
}

void record_given_options(const std::vector<RawOption>& options, PlanWriter& w) {
  Json given = Json::array();
  std::vector<std::pair<std::string, SourceLocation>> places;
  // An option written again with the same value says nothing new to the checks, and a file that
  // repeats one flag 200000 times must not carry 200000 entries into every what-if cell: the first
  // occurrence stands for the rest.
  std::set<std::string> seen;
  for (const RawOption& o : options) {
    const std::string flag = o.textual ? (o.short_form ? "-" : "--") + o.name : o.name;
    if (!seen.insert(flag + '\0' + (o.textual ? "c" : "f") + '\0' +
                     (o.value.is_string() ? o.value.get<std::string>() : o.value.dump()))
             .second)
      continue;
    const std::string at = fmt::format("options.given.{}", given.size());
    Json g = Json::object();
    g["flag"] = flag;
    g["source"] = o.textual ? "command" : "config";
    Json value = o.value;
    places.emplace_back(at, o.where);
    for (const auto& [key, where] : o.inner) places.emplace_back(at + ".value." + key, where);
    // A JSON object given as command-line text: its keys are checked too, so parse it here
    // (quietly: the builder reports a value it cannot parse).
    if (value.is_string()) {
      const std::string text = value.get<std::string>();
      const size_t first = text.find_first_not_of(" \t\r\n");
      if (first != std::string::npos && text[first] == '{') {
        const SourceLocation where = o.where;
        auto parsed = parse_json(text, o.value_pos ? o.value_pos : PosMap([where](size_t) { return where; }), o.name);
        if (parsed && parsed->is_object()) {
          value = std::move(*parsed);
          for (const auto& [key, off] : json_key_offsets(text))
            places.emplace_back(at + ".value." + key, o.value_pos ? o.value_pos(off) : o.where);
        }
      }
    }
    g["value"] = std::move(value);
    given.push_back(std::move(g));
  }
  w.set("options.given", std::move(given), SourceLocation{w.plan().path});
  for (const auto& [name, where] : places) w.locate(name, where);
}

}  // namespace specprobe::serving
