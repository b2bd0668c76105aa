// Two small forms: a Dockerfile whose ENTRYPOINT / CMD starts the server (FROM gives the image,
// ENV the environment), and vLLM's benchmark matrices (`{"defaults": {...}, "tests": [...]}` or a
// list of tests, each with `server_parameters` and `server_environment_variables`).
#include <set>

#include "common/ascii.hpp"
#include "common/excerpt.hpp"
#include "inputs/forms.hpp"

namespace specprobe::serving {
namespace {

struct Instruction {
  std::string keyword;  // upper case
  size_t args = 0;      // offset of the arguments
  size_t end = 0;       // offset after the instruction (continuations included)
};

std::vector<Instruction> dockerfile_instructions(const std::string& text) {
  std::vector<Instruction> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t e = text.find('\n', i);
    if (e == std::string::npos) e = text.size();
    const size_t b = text.find_first_not_of(" \t", i);
    if (b < e && text[b] != '#') {
      Instruction ins;
      size_t k = b;
      while (k < e && std::isalpha(static_cast<unsigned char>(text[k]))) ++k;
      ins.keyword = ascii_upper(text.substr(b, k - b));
      ins.args = text.find_first_not_of(" \t", k);
      // continuation lines
      size_t end = e;
      while (end < text.size()) {
        size_t last = end;
        while (last > i && (text[last - 1] == ' ' || text[last - 1] == '\t' || text[last - 1] == '\r')) --last;
        if (last == 0 || text[last - 1] != '\\') break;
        const size_t next = text.find('\n', end + 1);
        end = next == std::string::npos ? text.size() : next;
      }
      ins.end = end;
      if (ins.args > end) ins.args = end;
      out.push_back(ins);
      e = end;
    }
    i = e + 1;
  }
  return out;
}

ShellWord text_word(const std::string& text, size_t b, size_t e) {
  ShellWord w;
  w.text = text.substr(b, e - b);
  for (size_t k = b; k < e; ++k) w.offsets.push_back(static_cast<uint32_t>(k));
  w.start = b;
  w.end = e;
  w.unquoted_prefix = w.text.size();
  return w;
}

// ["a", "b"] (exec form) as words; false when the arguments are not a JSON array (shell form).
bool exec_form(const std::string& text, const Instruction& ins, std::vector<ShellWord>& out) {
  const std::string args = text.substr(ins.args, ins.end - ins.args);
  const size_t first = args.find_first_not_of(" \t");
  if (first == std::string::npos || args[first] != '[') return false;
  Json a;
  try {
    a = Json::parse(args);
  } catch (...) {
    return false;
  }
  if (!a.is_array()) return false;
  size_t cursor = ins.args;
  for (const auto& item : a) {
    if (!item.is_string()) return false;
    const std::string s = item.get<std::string>();
    const size_t at = text.find(s, cursor);
    ShellWord w = at == std::string::npos || at > ins.end ? text_word(text, ins.args, ins.args)
                                                          : text_word(text, at, at + s.size());
    w.text = s;
    if (w.offsets.size() != s.size()) w.offsets.assign(s.size(), static_cast<uint32_t>(ins.args));
    if (at != std::string::npos && at < ins.end) cursor = at + s.size();
    out.push_back(std::move(w));
  }
  return true;
}

std::vector<ShellWord> command_of(const std::string& text, const Instruction& ins) {
  std::vector<ShellWord> out;
  if (exec_form(text, ins, out)) return out;
  ShellWord sh = text_word(text, ins.args, ins.args);
  sh.text = "/bin/sh";
  sh.offsets.assign(sh.text.size(), static_cast<uint32_t>(ins.args));
  ShellWord c = sh;
  c.text = "-c";
  c.offsets.resize(2);
  out = {sh, c, text_word(text, ins.args, ins.end)};
  return out;
}

// Keys that appear twice in one JSON object (Python's json keeps the last): "path.key" -> offset.
std::vector<std::pair<std::string, size_t>> duplicate_keys(const std::string& text) {
  std::vector<std::pair<std::string, size_t>> out;
  std::vector<std::set<std::string>> seen;
  std::vector<bool> object;
  bool expect_key = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      seen.emplace_back();
      object.push_back(c == '{');
      expect_key = c == '{';
    } else if (c == '}' || c == ']') {
      if (!seen.empty()) seen.pop_back(), object.pop_back();
      expect_key = false;
    } else if (c == ',') {
      expect_key = !object.empty() && object.back();
    } else if (c == '"') {
      const size_t start = i++;
      std::string s;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\') ++i;
        if (i < text.size()) s += text[i++];
      }
      if (expect_key && !seen.empty() && !seen.back().insert(s).second) out.emplace_back(s, start);
      expect_key = false;
    }
  }
  return out;
}

}  // namespace

bool looks_like_dockerfile(std::string_view path, std::string_view text) {
  const std::string name =
      ascii_lower(path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1));
  if (name == "dockerfile" || name.rfind("dockerfile.", 0) == 0 ||
      (name.size() > 11 && name.substr(name.size() - 11) == ".dockerfile"))
    return true;
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text.substr(first, 5) == "FROM " &&
         (text.find("\nENTRYPOINT") != std::string_view::npos || text.find("\nCMD") != std::string_view::npos);
}

Expected<ServingFile> read_dockerfile(std::shared_ptr<const CollectorSource> src) {
  ServeCollector col(src);
  const std::string& text = src->text;
  DeployInfo info;
  info.form = InputForm::dockerfile;
  info.form_set = true;
  std::vector<ShellWord> entrypoint, cmd;
  bool entry_shell = false;
  for (const Instruction& ins : dockerfile_instructions(text)) {
    const std::string args = text.substr(ins.args, ins.end - ins.args);
    if (ins.keyword == "FROM") {
      std::string image = args.substr(0, args.find_first_of(" \t\r\n"));
      info = DeployInfo{};
      info.form = InputForm::dockerfile;
      info.form_set = true;
      info.image = image;
      info.image_where = col.loc(ins.args);
      info.image_offset = ins.args;
      const EngineVersion v = image_engine_version(image);
      info.engine_version = v.version;
      info.engine_version_engine = v.engine;
      info.engine_version_source = "base " + v.why;
      info.engine_version_where = info.image_where;
      entrypoint.clear();
      cmd.clear();
    } else if (ins.keyword == "ENV") {
      // ENV K=V K2=V2 | ENV K V
      const size_t eq = args.find('='), sp = args.find_first_of(" \t");
      if (eq != std::string::npos && (sp == std::string::npos || eq < sp)) {
        LineIndex none;
        if (auto words = split_shell_words(args, none))
          for (const auto& w : *words) {
            const size_t e = w.text.find('=');
            if (w.kind == ShellWord::word && e != std::string::npos && e > 0)
              info.env.emplace_back(w.text.substr(0, e), EnvSetting{w.text.substr(e + 1), col.loc(ins.args)});
          }
      } else if (sp != std::string::npos) {
        info.env.emplace_back(args.substr(0, sp),
                              EnvSetting{args.substr(args.find_first_not_of(" \t", sp)), col.loc(ins.args)});
      }
    } else if (ins.keyword == "ENTRYPOINT") {
      entrypoint = command_of(text, ins);
      entry_shell = !entrypoint.empty() && entrypoint[0].text == "/bin/sh" && entrypoint.size() == 3;
    } else if (ins.keyword == "CMD") {
      cmd = command_of(text, ins);
    }
  }
  std::vector<ShellWord> argv = entrypoint;
  if (!entry_shell) argv.insert(argv.end(), cmd.begin(), cmd.end());  // a shell-form ENTRYPOINT ignores CMD
  info.server = "ENTRYPOINT";
  if (auto st = col.read_container(std::move(argv), std::move(info), !entrypoint.empty(), false); !st)
    return st.error();
  ServingFile out;
  out.path = src->path;
  out.plans = std::move(col.plans());
  out.notes = std::move(col.notes());
  return out;
}

bool looks_like_benchmark_json(const Json& doc) {
  auto test = [](const Json& t) { return t.is_object() && t.contains("server_parameters"); };
  if (doc.is_array()) return !doc.empty() && std::all_of(doc.begin(), doc.end(), test);
  return doc.is_object() && doc.contains("tests") && doc["tests"].is_array();
}

Expected<ServingFile> read_benchmark_json(std::shared_ptr<const CollectorSource> src, const Json& doc) {
  ServingFile out;
  out.path = src->path;
  const auto keys = json_key_offsets(src->text);
  // "defaults" and "test_name" are read only when they have the expected type (a number or list
  // there made nlohmann's value() and get<std::string>() throw: found by the pipeline property test).
  const Json defaults =
      doc.is_object() && doc.contains("defaults") && doc["defaults"].is_object() ? doc["defaults"] : Json::object();
  const Json tests = doc.is_array() ? doc : doc["tests"];
  std::vector<ReaderNote> dups;
  for (const auto& [key, at] : duplicate_keys(src->text))
    dups.push_back({"warning",
                    fmt::format("key '{}' appears twice in one object; the later value is used (as Python's json does)",
                                excerpt(key)),
                    src->index->at(at)});
  for (size_t i = 0; i < tests.size(); ++i) {
    const Json& t = tests[i];
    if (!t.is_object()) continue;
    const std::string prefix = doc.is_array() ? std::to_string(i) : "tests." + std::to_string(i);
    auto loc = [&](const std::string& path, const std::string& fallback) {
      auto k = keys.find(path);
      if (k == keys.end()) k = keys.find(fallback);
      return k == keys.end() ? SourceLocation{src->path} : src->index->at(k->second);
    };
    std::vector<RawOption> options;
    auto add = [&](const Json& params, const std::string& base) {
      if (!params.is_object()) return;
      for (auto it = params.begin(); it != params.end(); ++it) {
        RawOption o;
        o.name = it.key();
        o.value = it.value().is_string() && it.value().get<std::string>().empty() ? Json(true) : it.value();
        o.where = loc(base + "." + it.key(), base);
        options.erase(
            std::remove_if(options.begin(), options.end(), [&](const RawOption& x) { return x.name == o.name; }),
            options.end());
        options.push_back(std::move(o));
      }
    };
    add(defaults.value("server_parameters", Json::object()), "defaults.server_parameters");
    add(t.value("server_parameters", Json::object()), prefix + ".server_parameters");
    ReadContext ctx;
    ctx.path = src->path;
    ctx.form = InputForm::vllm_benchmark_json;
    ctx.api_server = true;
    for (const Json* env : {&defaults, &t})
      if (env->contains("server_environment_variables") && (*env)["server_environment_variables"].is_object())
        for (auto it = (*env)["server_environment_variables"].begin();
             it != (*env)["server_environment_variables"].end(); ++it)
          ctx.env.emplace_back(it.key(),
                               EnvSetting{it.value().is_string() ? it.value().get<std::string>() : it.value().dump(),
                                          loc("defaults.server_environment_variables." + it.key(), prefix)});
    ctx.notes = dups;
    auto plan = build_vllm(options, std::move(ctx));
    if (!plan) return plan.error();
    const auto name = t.find("test_name");
    plan->server = "test " + (name != t.end() && name->is_string() ? name->get<std::string>() : std::to_string(i));
    PlanWriter(*plan).set("deploy.server", plan->server, loc(prefix + ".test_name", prefix));
    out.plans.push_back(std::move(*plan));
  }
  return out;
}

}  // namespace specprobe::serving
