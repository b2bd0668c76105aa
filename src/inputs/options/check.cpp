// Option checks against the engine's tables (see options/check.hpp).
#include "inputs/options/check.hpp"

#include <algorithm>
#include <unordered_map>

#include "common/ascii.hpp"
#include "common/excerpt.hpp"
#include "inputs/options/tables.hpp"
#include "inputs/text/text.hpp"

namespace specprobe {
namespace {

using namespace options;

constexpr size_t kListCap = 32;  // entries kept per list fact; the counts hold the full number
constexpr size_t kTextCap = 6;   // messages joined into *_text

struct Problem {
  std::string flag;
  std::string at;
  std::string message;
};

int lowest(const ReleaseSet& s) {
  for (size_t i = 0; i < kMaxReleases; ++i)
    if (s.test(i)) return static_cast<int>(i);
  return -1;
}
int highest(const ReleaseSet& s) {
  for (int i = static_cast<int>(kMaxReleases) - 1; i >= 0; --i)
    if (s.test(static_cast<size_t>(i))) return i;
  return -1;
}

std::string join(const std::vector<std::string>& v, std::string_view sep, size_t cap = SIZE_MAX) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < cap; ++i) out += (i ? std::string(sep) : std::string()) + v[i];
  if (v.size() > cap) out += fmt::format("{}... ({} in all)", sep, v.size());
  return out;
}

// The value as the engine's parser sees it: one text per argument (a list: one per element);
// nullopt when there is no text to check (a flag, a mapping).
std::optional<std::vector<std::string>> texts_of(const Json& v) {
  auto one = [](const Json& x) -> std::string {
    if (x.is_string()) return x.get<std::string>();
    if (x.is_boolean()) return x.get<bool>() ? "True" : "False";  // Python's str() of a YAML bool
    return x.dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  if (v.is_null() || v.is_boolean() || v.is_object()) return std::nullopt;
  if (v.is_array()) {
    std::vector<std::string> out;
    for (const auto& x : v) {
      // An element the reader nulled (an unresolved variable, a command substitution such as
      // `$(seq -s ' ' 1 64)`): what the engine will see is unknown, so the list is not checked.
      if (x.is_null()) return std::nullopt;
      out.push_back(one(x));
    }
    return out;
  }
  return std::vector<std::string>{one(v)};
}

bool json_text(const std::string& s) { return Json::accept(s); }

// A value the file leaves to whoever runs it: a shell variable the reader could not resolve
// ($PORT, ${MODEL:-x}) or a template is_placeholder_text (<prefill_http_port_rank0>). What the engine
// will see is unknown, so nothing is said about its type or value.
bool is_placeholder_text(const std::string& s) {
  return s.find('$') != std::string::npos || (s.size() >= 3 && s.front() == '<' && s.back() == '>');
}

// Whether every text is of TYPE (the table's type names: int, float, int|auto, list[int], ...).
bool type_accepts(std::string type, const std::vector<std::string>& texts, bool vllm) {
  if (type.rfind("list[", 0) == 0 && type.back() == ']') type = type.substr(5, type.size() - 6);
  auto all = [&](auto pred) { return std::all_of(texts.begin(), texts.end(), pred); };
  if (type == "int") return all([&](const std::string& s) { return parses_as_int(s, vllm); });
  if (type == "float") return all([](const std::string& s) { return parses_as_float(s); });
  if (type == "int|auto")
    return all([&](const std::string& s) { return ascii_lower(s) == "auto" || parses_as_int(s, vllm); });
  if (type == "true|false")
    return all([](const std::string& s) { return ascii_lower(s) == "true" || ascii_lower(s) == "false"; });
  if (type == "json") return all([](const std::string& s) { return json_text(s); });
  if (type == "json|int") return all([&](const std::string& s) { return json_text(s) || parses_as_int(s, vllm); });
  return true;  // str, json|str, bool, count
}

std::string type_words(const std::string& type) {
  if (type == "int") return "an integer";
  if (type == "float") return "a number";
  if (type == "int|auto") return "an integer or auto";
  if (type == "true|false") return "true or false";
  if (type == "json") return "a JSON value";
  if (type == "json|int") return "an integer or a JSON object";
  if (type.rfind("list[", 0) == 0) return "a list of " + type_words(type.substr(5, type.size() - 6)) + " values";
  return type;
}

bool int_equal(const std::string& a, const std::string& b) {
  if (a == b) return true;
  if (!parses_as_int(a, false) || !parses_as_int(b, false)) return false;
  try {
    std::string x, y;
    for (char c : a)
      if (c != '_' && c != ' ') x += c;
    for (char c : b)
      if (c != '_' && c != ' ') y += c;
    return std::stoll(x) == std::stoll(y);
  } catch (...) {
    return false;
  }
}

// An option, key or value accepted by only part of the releases checked.
struct Narrowing {
  std::string what;
  std::string flag;
  std::string at;
  ReleaseSet accepted;
};

struct Checker {
  const EngineTable& t;
  Selection sel;
  bool vllm;
  const Json& facts;
  std::vector<Problem> unknown, invalid, notes;
  std::vector<Narrowing> narrowing;

  std::string range(const ReleaseSet& s) const { return t.range_text(s); }
  // Whether the plan was read from an engine's start-up log (inputs/log/startup_log.cpp).
  bool from_log() const {
    const std::string form = fact_string(facts, "input.form").value_or("");
    return form == "vllm-log" || form == "sglang-log";
  }
  // "from 0.13.0", "up to 0.8.2", "0.9.0-0.10.1, 0.12.0": a set of releases in words.
  std::string where_text(const ReleaseSet& accepted) const {
    const std::string r = range(accepted);
    const int lo = lowest(accepted), hi = highest(accepted);
    const int last = static_cast<int>(t.releases.size()) - 1;
    if (r.find(',') != std::string::npos || lo < 0) return r;
    if (hi == last && lo > 0) return "from " + t.releases[static_cast<size_t>(lo)];
    if (lo == 0 && hi < last) return "up to " + t.releases[static_cast<size_t>(hi)];
    return r;
  }
  void narrows(const std::string& what, const std::string& flag, const std::string& at, const ReleaseSet& accepted) {
    if (!sel.exact && (accepted ^ sel.releases).any()) narrowing.push_back({what, flag, at, accepted});
  }
  // One note (or, when no release accepts them all, one error) for the options that only some of
  // the releases checked accept: which releases the plan as a whole needs.
  void finish_narrowing() {
    if (narrowing.empty()) return;
    // With the version unknown the newest release decides: nothing to say while it accepts it all.
    if (sel.newest_decides && std::all_of(narrowing.begin(), narrowing.end(),
                                          [&](const Narrowing& n) { return n.accepted.test(t.releases.size() - 1); }))
      return;
    ReleaseSet together = sel.releases;
    std::vector<std::string> items;
    for (const Narrowing& n : narrowing) {
      together &= n.accepted;
      items.push_back(fmt::format("{} ({})", n.what, where_text(n.accepted)));
    }
    if (together.none())
      unknown.push_back(
          {narrowing.front().flag, narrowing.front().at,
           fmt::format("no {} release accepts all of these together: {}", t.display, join(items, ", ", 8))});
    else
      notes.insert(notes.begin(), Problem{narrowing.front().flag, narrowing.front().at,
                                          fmt::format("only {} {} accepts the plan as written: {}", t.display,
                                                      where_text(together), join(items, ", ", 8))});
  }

  // Case-sensitive enum members match as the engine parses them: vLLM upper-cases attention
  // backends, CUDA-graph and compilation modes (AttentionBackendEnum[value.upper()],
  // CUDAGraphMode[value.upper()], CompilationMode[value.upper()]); SGLang 0.5.12+ upper-cases the
  // speculative algorithm (SpeculativeAlgorithm.from_string).
  std::string normalized(const std::string& enum_name, const std::string& v) const {
    if (enum_name == "attention_backend" && vllm) return ascii_upper(v);
    if (enum_name == "cudagraph_mode" || enum_name == "compilation_mode" || enum_name == "speculative_algorithm")
      return ascii_upper(v);
    return v;
  }

  // Releases (within IN) that accept every text as a value of O: argparse choices where the
  // parser enforces them, enum members, and the two lists vLLM checks after parsing.
  ReleaseSet values_ok(const OptionSpec& o, const std::vector<std::string>& texts, const ReleaseSet& in, bool int_typed,
                       bool with_known_values = true) const {
    ReleaseSet ok = in;
    if (!o.choices.empty() && (o.choices_enforced & in).any())
      for (const auto& text : texts) {
        ReleaseSet m;
        for (const auto& c : o.choices)
          if (int_typed ? int_equal(c.value, text) : c.value == text) m |= c.in;
        ok &= ~o.choices_enforced | m;
      }
    for (const Ranged& e : o.enum_names) {
      const ReleaseSet er = e.in & in;
      auto members = t.enums.find(e.value);
      if (er.none() || members == t.enums.end()) continue;
      for (const auto& text : texts) {
        const std::string n = normalized(e.value, text);
        if (e.value == "attention_backend" && vllm && n == "AUTO") continue;  // "auto" = let vLLM choose
        ReleaseSet m;
        for (const auto& member : members->second)
          if (normalized(e.value, member.value) == n) m |= member.in;
        ok &= ~er | m;
      }
    }
    // vLLM validates these after parsing: CacheConfig._validate_cache_dtype (vllm/config/cache.py
    // L470 @v0.33.0) and ModelConfig._verify_quantization ("Unknown quantization method",
    // vllm/config/model.py L1465 @v0.33.0); the table lists them as known_values there.
    if (with_known_values && vllm &&
        (o.name == "kv-cache-dtype" || o.name == "quantization" || o.name == "kv_cache_dtype"))
      if (!o.known_values.empty()) {
        ReleaseSet kr;
        for (const auto& k : o.known_values) kr |= k.in;
        for (const auto& text : texts) {
          ReleaseSet m;
          for (const auto& k : o.known_values)
            if (k.value == text) m |= k.in;
          ok &= ~kr | m;
        }
      }
    return ok & in;
  }

  // The values O accepts somewhere in IN (for the message).
  std::vector<std::string> accepted_values(const OptionSpec& o, const ReleaseSet& in) const {
    std::vector<std::string> out;
    auto add = [&](const std::string& v) {
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    };
    if ((o.choices_enforced & in).any())
      for (const auto& c : o.choices)
        if ((c.in & in).any()) add(c.value);
    for (const Ranged& e : o.enum_names)
      if ((e.in & in).any())
        if (auto members = t.enums.find(e.value); members != t.enums.end())
          for (const auto& m : members->second)
            if ((m.in & in).any()) add(m.value);
    if (vllm && (o.name == "kv-cache-dtype" || o.name == "quantization" || o.name == "kv_cache_dtype"))
      for (const auto& k : o.known_values)
        if ((k.in & in).any()) add(k.value);
    return out;
  }

  // Type and value of one option (or JSON key) in the releases IN. WHAT names it in messages.
  void check_value(const OptionSpec& o, const Json& value, const ReleaseSet& in, const std::string& what,
                   const std::string& flag, const std::string& at, bool from_json) {
    auto texts = texts_of(value);
    if (!texts || texts->empty()) return;
    for (const auto& text : *texts)
      if (is_placeholder_text(text)) return;
    ReleaseSet typed;
    std::string expected;
    bool int_typed = false;
    for (const Ranged& ty : o.types) {
      const ReleaseSet r = ty.in & in;
      if (r.none()) continue;
      // A number in a JSON config is typed already (pydantic coerces numeric strings too).
      const bool ok = (from_json && (value.is_number() || ty.value == "str")) || type_accepts(ty.value, *texts, vllm);
      if (ok)
        typed |= r;
      else
        expected = type_words(ty.value);
      int_typed |= ty.value == "int" || ty.value == "list[int]";
    }
    const std::string shown = join(*texts, " ");
    if (typed.none()) {
      invalid.push_back({flag, at, fmt::format("{} {}: {} expects {}", what, shown, sel.short_label, expected)});
      return;
    }
    const ReleaseSet ok = values_ok(o, *texts, typed, int_typed);
    if (ok.none()) {
      const auto values = accepted_values(o, typed);
      std::string bad;
      for (const auto& text : *texts)
        if (values_ok(o, {text}, typed, int_typed).none()) bad = text;
      const std::string near = did_you_mean(bad, values, 2);
      std::string msg =
          fmt::format("{} {}: '{}' is not a value {} accepts", what, shown, excerpt(bad), sel.short_label);
      if (!near.empty())
        msg += fmt::format(" (did you mean '{}'?)", near);
      else if (!values.empty() && values.size() <= 16)
        msg += fmt::format("; accepted: {}", join(values, ", "));
      if (vllm && (o.name == "quantization" || o.name == "kv-cache-dtype")) msg += " (a plugin may register more)";
      // vLLM replaces --quantization by the method a checkpoint's quantization_config overrides it
      // with before it checks the name (ModelConfig._verify_quantization: INCConfig turns
      // quant_method auto-round into inc whatever was given, vllm/config/model.py L1383-L1464
      // @v0.33.0). Where argparse let the value through, it is an error only for a checkpoint
      // known to have no quantization_config.
      if (vllm && o.name == "quantization" && values_ok(o, *texts, typed, int_typed, false).any()) {
        const bool model_known = find_fact(facts, "model.path") && !find_fact(facts, "model.path")->is_null();
        const Json* qm = find_fact(facts, "model.quant_method");
        if (!model_known || (qm && !qm->is_null())) {
          notes.push_back({flag, at,
                           msg + (model_known ? "; vLLM accepts it only if the checkpoint's quantization_config "
                                                "overrides it (as INC does for quant_method auto-round)"
                                              : "; vLLM accepts it only if the checkpoint's quantization_config "
                                                "overrides it: pass --model to check")});
          return;
        }
      }
      // A value close to none the tables list, for an engine that may be newer than the tables:
      // perhaps a new value, not a wrong one.
      if (near.empty() && sel.beyond) {
        notes.push_back({flag, at,
                         msg + fmt::format("; not in any release the tables read (up to {}): a later "
                                           "release may accept it",
                                           t.releases.back())});
        return;
      }
      invalid.push_back({flag, at, msg});
    } else if ((ok ^ in).any()) {
      narrows(fmt::format("{} {}", what, shown), flag, at, ok);
    }
  }

  // A key of vLLM's --speculative-config / --compilation-config JSON.
  void check_json_key(const std::string& option, const ReleaseSet& in, const std::string& key, const Json& value,
                      const std::string& flag, const std::string& at) {
    const bool spec = option == "speculative-config";
    const auto& section = spec ? t.speculative_config : t.compilation_config;
    const char* cls = spec ? "SpeculativeConfig" : "CompilationConfig";
    const auto it = section.find(key);
    const ReleaseSet has = it == section.end() ? ReleaseSet{} : it->second.releases & in;
    if (has.none()) {
      // vLLM's config classes forbid unknown keys from 0.16.0 (vllm/config/utils.py `config`:
      // ConfigDict(extra="forbid")); SpeculativeConfig was a plain dataclass up to 0.9.0.1
      // (SpeculativeConfig(**dict) raises TypeError) and a pydantic dataclass that ignores extra
      // keys in 0.9.1-0.15.1; CompilationConfig forbids them from 0.13.0 and ignored them before.
      ReleaseSet lenient;
      if (spec) {
        auto a = t.index_of("0.9.1"), b = t.index_of("0.15.1");
        if (a && b)
          for (size_t i = *a; i <= *b; ++i) lenient.set(i);
      } else if (auto a = t.index_of("0.13.0")) {
        lenient = ~t.from(*a) & t.all;
      }
      const ReleaseSet strict = in & ~lenient, quiet = in & lenient;
      std::string effect;
      if (quiet.none())
        effect = "vLLM stops at startup (unknown keys are rejected)";
      else if (strict.none())
        effect = "vLLM ignores it silently, so the setting has no effect";
      else
        effect =
            fmt::format("rejected at startup by {} {}, silently ignored by {}", t.display, range(strict), range(quiet));
      std::string msg;
      if (it != section.end() && it->second.releases.any()) {
        msg = fmt::format("{} key '{}' is not a {} field in {} ({} has it {}); {}", option, excerpt(key), cls,
                          sel.short_label, t.display, where_text(it->second.releases), effect);
      } else {
        std::vector<std::string> keys;
        for (const auto& [k, o] : section)
          if ((o.releases & in).any()) keys.push_back(k);
        const std::string near = did_you_mean(key, keys);
        msg = fmt::format("{} key '{}' is not a {} field{}; {}", option, excerpt(key), cls,
                          near.empty() ? std::string() : fmt::format(" (did you mean '{}'?)", near), effect);
        if (near.empty() && sel.beyond) {
          notes.push_back({flag, at,
                           msg + fmt::format(" (not in any release the tables read, up to {}: a later "
                                             "release may have it)",
                                             t.releases.back())});
          return;
        }
      }
      unknown.push_back({flag, at, msg});
      return;
    }
    if ((has ^ in).any()) narrows(fmt::format("{} key {}", option, key), flag, at, has);
    OptionSpec row = it->second;
    // The method is one of SpeculativeMethod (plus the strings SpeculativeConfig compares it with
    // where the Literal is not enforced): vLLM never accepts a method outside that list.
    if (spec_method_key(option, key)) row.enum_names = {{"speculative_method", row.releases}};
    check_value(row, value, has, fmt::format("{} {}", option, key), flag, at, true);
  }

  static bool spec_method_key(const std::string& option, const std::string& key) {
    return option == "speculative-config" && key == "method";
  }

  // CONFIDENT: the name is wrong whatever the release (ambiguous, an option of other releases, a
  // near spelling); false for a name close to nothing the tables know.
  std::string unknown_message(const std::string& shown, const std::string& flag, const Resolution& r, bool config,
                              bool& confident) {
    confident = true;
    const Resolution everywhere = resolve_flag(t, flag, t.all);
    if (r.ambiguous.any())
      return fmt::format("{} is ambiguous in {}: it abbreviates {}{}", shown, sel.short_label,
                         join(r.candidates, ", ", 8),
                         everywhere.accepted.any() ? fmt::format(" (unambiguous {})", where_text(everywhere.accepted))
                                                   : std::string());
    if (everywhere.accepted.any() && !everywhere.option.empty())
      return fmt::format("{} is not an option of {} ({} has it {})", shown, sel.short_label, t.display,
                         where_text(everywhere.accepted));
    std::string msg = fmt::format("{} is not a {} option", shown, t.display);
    // The same name with other dashes: "----speculative-config", "--tp" for "-tp", a config key "tp".
    const std::string bare = ascii_lower(flag.substr(std::min(flag.size(), flag.find_first_not_of('-'))));
    for (const auto& s : option_strings(t)) {
      if ((s.in & sel.releases).none() || s.text == flag) continue;
      std::string sb = ascii_lower(s.text.substr(s.text.find_first_not_of('-')));
      if (sb != bare) continue;
      const size_t dashes = flag.find_first_not_of('-');
      if (config)
        return msg + fmt::format(" ({} is a command-line alias of --{}; write {} in a config file)", s.text, s.option,
                                 s.option);
      if (dashes > 2) return msg + fmt::format(" (written with {} dashes; did you mean {}?)", dashes, s.text);
      return msg + fmt::format(" (did you mean {}?)", s.text);
    }
    std::vector<std::string> spellings;
    for (const auto& s : option_strings(t))
      if ((s.in & sel.releases).any() && !s.negative && (!config || s.text.rfind("--", 0) == 0))
        spellings.push_back(config ? s.text.substr(2) : s.text);
    const std::string near = did_you_mean(flag, spellings);
    if (!near.empty()) msg += fmt::format(" (did you mean {}?)", near);
    confident = !near.empty();
    return msg;
  }

  // unknown_message depends only on the table, the selected releases and the name, and the what-if
  // sweep asks it again for every cell (each re-derives the option facts): the near-spelling search
  // was most of a sweep over a config with long misspelt names. Remembered per thread, at most
  // 4,096 answers.
  std::string unknown_message_memo(const std::string& shown, const std::string& flag, const Resolution& r, bool config,
                                   bool& confident) {
    thread_local std::unordered_map<std::string, std::pair<std::string, bool>> memo;
    std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", static_cast<const void*>(&t),
                                  sel.releases.to_string(), sel.short_label, shown, flag, config);
    if (const auto it = memo.find(key); it != memo.end()) {
      confident = it->second.second;
      return it->second.first;
    }
    std::string msg = unknown_message(shown, flag, r, config, confident);
    if (memo.size() >= 4096) memo.clear();
    memo.emplace(std::move(key), std::make_pair(msg, confident));
    return msg;
  }

  void check_given(size_t i, const Json& g) {
    if (!g.is_object()) return;
    // A field may be null: a name or value holding an unresolved shell variable is nulled with the
    // facts made from it (deploy/unresolved.cpp), so never value()'s typed default here.
    auto text = [&](const char* key) {
      const auto it = g.find(key);
      return it != g.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    std::string flag = text("flag");
    const bool config = text("source") == "config";
    const std::string shown = flag;
    const std::string at = fmt::format("options.given.{}", i);
    const Json value = g.contains("value") ? g["value"] : Json(nullptr);
    if (flag.empty() || flag.find('$') != std::string::npos) return;  // a name left to the shell
    if (config) flag = "--" + flag;                                   // a config-file key is read as --key
    std::string path;
    if (flag.rfind("-", 0) == 0 && (vllm || config)) {
      // vLLM (FlexibleArgumentParser.parse_args) folds '_' to '-' between "--" and the first '.',
      // and splits -option.key and --option.key (vllm/utils/argparse_utils.py L380-L500
      // @v0.33.0: `-cc.pass_config.x=True`); SGLang's --config reader compares keys with '-' and
      // '_' alike.
      const size_t dot = vllm ? flag.find('.') : std::string::npos;
      for (size_t k = 2; flag.rfind("--", 0) == 0 && k < flag.size() && k < dot; ++k)
        if (flag[k] == '_') flag[k] = '-';
      if (dot != std::string::npos) {
        path = flag.substr(dot + 1);
        flag = flag.substr(0, dot);
      }
    }
    const Resolution r = resolve_flag(t, flag, sel.releases);
    if (r.accepted.none() || r.option.empty()) {
      bool confident = true;
      std::string msg = unknown_message_memo(shown, flag, r, config, confident);
      if (!confident && sel.beyond)
        notes.push_back({shown, at,
                         msg + fmt::format(" in any release the tables read (up to {}): a later release "
                                           "may have added it",
                                           t.releases.back())});
      else
        unknown.push_back({shown, at, std::move(msg)});
      return;
    }
    const OptionSpec& o = t.options.at(r.option);
    const std::string name = config ? r.option : "--" + r.option;
    const bool partial = (r.accepted ^ sel.releases).any();
    if (partial) narrows(shown, shown, at, r.accepted);
    if (r.abbreviation && (!partial || (sel.newest_decides && r.accepted.test(t.releases.size() - 1)))) {
      notes.push_back({shown, at,
                       fmt::format("{} is accepted as an abbreviation of {} (argparse prefix matching); write the "
                                   "full name, a later release may add an option that makes it ambiguous",
                                   shown, name)});
    }
    if ((o.deprecated & r.accepted) == r.accepted && r.accepted.any())
      notes.push_back({shown, at, fmt::format("{} is deprecated ({} {})", name, t.display, where_text(r.accepted))});
    if (r.negative) return;
    bool json_typed = false;
    for (const Ranged& ty : o.types)
      if ((ty.in & r.accepted).any() && ty.value.rfind("json", 0) == 0) json_typed = true;
    const bool keyed = r.option == "speculative-config" || r.option == "compilation-config";
    if (!path.empty()) {
      if (path.back() == '+') path.pop_back();
      if (!json_typed) {
        invalid.push_back({shown, at,
                           fmt::format("{}: --{} does not take a JSON value, so vLLM cannot set its key '{}'", shown,
                                       r.option, excerpt(path))});
        return;
      }
      if (keyed) {
        const std::string key = path.substr(0, path.find('.'));
        const Json v = path.find('.') == std::string::npos && value.is_string()
                           ? serving::cli_value(value.get<std::string>())
                           : Json(nullptr);
        check_json_key(r.option, r.accepted, key, v, shown, at);
      }
      return;
    }
    if (keyed && value.is_object()) {
      for (auto it = value.begin(); it != value.end(); ++it)
        check_json_key(r.option, r.accepted, it.key(), it.value(), shown, at + ".value." + it.key());
      return;
    }
    if (json_typed && value.is_string() && keyed) return;  // the reader parsed (or refused) it
    // A start-up log prints the values the engine parsed: a list or mapping there is the JSON value
    // the engine took (`allowed_origins=['*']` in a Namespace line), not text to parse again.
    if (json_typed && value.is_structured() && from_log()) return;
    check_value(o, value, r.accepted, name, shown, at, false);
  }

  // Sizes and fractions the engines refuse (or cannot run with) whatever the table says.
  void check_ranges(const Json& f) {
    struct Range {
      const char* fact;
      const char* vllm_option;
      const char* sglang_option;
      bool fraction;
      const char* why_vllm;
    };
    static const Range kRanges[] = {
        {"serve.tp", "--tensor-parallel-size", "--tp-size", false, "ParallelConfig tensor_parallel_size: Field(ge=1)"},
        {"serve.pp", "--pipeline-parallel-size", "--pp-size", false,
         "ParallelConfig pipeline_parallel_size: Field(ge=1)"},
        {"serve.dp", "--data-parallel-size", "--dp-size", false, "ParallelConfig data_parallel_size: Field(ge=1)"},
        {"serve.max_num_seqs", "--max-num-seqs", "--max-running-requests", false,
         "SchedulerConfig max_num_seqs: Field(ge=1)"},
        {"serve.max_num_batched_tokens", "--max-num-batched-tokens", nullptr, false,
         "SchedulerConfig max_num_batched_tokens: Field(ge=1)"},
        {"serve.block_size", "--block-size", "--page-size", false, "CacheConfig block_size: Field(gt=0)"},
        {"serve.gpu_memory_utilization", "--gpu-memory-utilization", "--mem-fraction-static", true,
         "CacheConfig gpu_memory_utilization: Field(gt=0, le=1)"},
    };
    for (const Range& r : kRanges) {
      const char* option = vllm ? r.vllm_option : r.sglang_option;
      const Json* v = find_fact(f, r.fact);
      if (!option || !v || !v->is_number()) continue;
      const double x = v->get<double>();
      const bool bad = r.fraction ? !(x > 0 && x <= 1) : x < 1;
      if (!bad) continue;
      const std::string shown = v->dump();
      if (vllm)
        invalid.push_back({option, r.fact,
                           fmt::format("{} {}: vLLM requires {} ({})", option, shown,
                                       r.fraction ? "a fraction in (0, 1]" : "at least 1", r.why_vllm)});
      else
        invalid.push_back(
            {option, r.fact,
             fmt::format("{} {}: SGLang needs {}{}", option, shown, r.fraction ? "a fraction in (0, 1]" : "at least 1",
                         r.fraction ? " (0 or less leaves no KV cache: `Not enough memory`)"
                                    : " (it does not check at parsing; a size of 0 leaves no worker "
                                      "or page and fails at load)")});
    }
    // SGLang EAGLE-style drafting: at least one step and one candidate per step
    // (speculative_hook.py rejects steps < 1 for UNO; the EAGLE worker needs both >= 1).
    if (!vllm && fact_bool(f, "spec.enabled").value_or(false)) {
      const std::string method = fact_string(f, "spec.method").value_or("");
      if (method != "ngram")
        for (auto [fact, option] : {std::pair<const char*, const char*>{"spec.num_steps", "--speculative-num-steps"},
                                    {"spec.topk", "--speculative-eagle-topk"}}) {
          const Json* v = find_fact(f, fact);
          if (v && v->is_number() && v->get<double>() < 1)
            invalid.push_back({option, fact, fmt::format("{} {}: SGLang drafts with at least 1", option, v->dump())});
        }
    }
  }
};

void write_list(Json& out, const char* name, const std::vector<Problem>& problems) {
  Json list = Json::array();
  std::vector<std::string> messages;
  for (const Problem& p : problems) {
    if (list.size() < kListCap) list.push_back({{"flag", p.flag}, {"at", p.at}, {"message", p.message}});
    messages.push_back(p.message);
  }
  out[name] = list;
  out[std::string(name) + "_count"] = problems.size();
  out[std::string(name) + "_text"] = problems.empty() ? Json(nullptr) : Json(join(messages, "; ", kTextCap));
  out[std::string(name) + "_at"] = problems.empty() ? Json(nullptr) : Json(problems.front().at);
}

// Every fact the option checks read (Checker, check_ranges), besides the engine's table. The
// what-if sweep derives each cell again, and a cell changes few of these (spec.enabled, SGLang's
// spec.num_steps), so the answer is remembered per thread by their values (issue 49: it was a
// tenth of a many-file run). tests/inputs/options/check_test.cpp checks that no other fact changes the answer.
constexpr const char* kOptionCheckReads[] = {"engine.name",
                                             "engine.version",
                                             "options.given",
                                             "input.form",
                                             "model.path",
                                             "model.quant_method",
                                             "serve.tp",
                                             "serve.pp",
                                             "serve.dp",
                                             "serve.max_num_seqs",
                                             "serve.max_num_batched_tokens",
                                             "serve.block_size",
                                             "serve.gpu_memory_utilization",
                                             "spec.enabled",
                                             "spec.method",
                                             "spec.num_steps",
                                             "spec.topk"};

constexpr const char* kOptionCheckOutputs[] = {"table", "unknown", "invalid", "notes"};

void check_options(Json& f, const EngineTable& t, const std::string& engine) {
  Json& out = f["options"];
  Checker c{t, select_releases(t, fact_string(f, "engine.version")), engine == "vllm", f, {}, {}, {}, {}};
  if (const Json* given = find_fact(f, "options.given"); given && given->is_array()) {
    for (size_t i = 0; i < given->size(); ++i) c.check_given(i, (*given)[i]);
  }
  c.check_ranges(f);
  c.finish_narrowing();
  out["table"] = c.sel.label;
  write_list(out, "unknown", c.unknown);
  write_list(out, "invalid", c.invalid);
  write_list(out, "notes", c.notes);
}

}  // namespace

std::span<const char* const> option_check_reads() { return kOptionCheckReads; }

void derive_option_checks(Json& f) {
  // The facts the checks write: each output, with its _count, _text and _at.
  static const std::vector<std::string> kWritten = [] {
    std::vector<std::string> v;
    for (const char* key : kOptionCheckOutputs)
      for (const char* suffix : {"", "_count", "_text", "_at"}) v.push_back(std::string(key) + suffix);
    return v;
  }();
  if (auto it = f.find("options"); it != f.end() && it->is_object())
    for (const std::string& name : kWritten) it->erase(name);
  const std::string engine = fact_string(f, "engine.name").value_or("vllm");
  auto table = options::engine_table(engine);
  if (!table || !*table) return;                // no table for this engine (or one that did not load: tests catch it)
  const EngineTable* const table_ptr = *table;  // which table (one per engine, loaded once)
  thread_local std::string key;
  key.assign(reinterpret_cast<const char*>(&table_ptr), sizeof table_ptr);
  for (const char* name : kOptionCheckReads) {
    const Json* v = find_fact(f, name);
    key += '\x1e';
    if (v) dump_json(*v, key, -1);
  }
  thread_local std::unordered_map<std::string, Json> memo;
  Json& out = f["options"];
  if (!out.is_object()) out = Json::object();
  if (const auto it = memo.find(key); it != memo.end()) {
    for (const auto& [name, value] : it->second.items()) out[name] = value;
    return;
  }
  check_options(f, **table, engine);
  Json written = Json::object();
  for (const std::string& name : kWritten)
    if (const auto w = out.find(name); w != out.end()) written[w.key()] = *w;
  if (memo.size() >= 256) memo.clear();
  memo.emplace(key, std::move(written));
}

}  // namespace specprobe
