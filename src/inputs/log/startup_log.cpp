// Start-up logs as input: vLLM's `non-default args: {...}` line (with `(APIServer pid=N)` or
// timestamp prefixes and Ray's ` [repeated 7x across cluster]` suffix), the older
// `args: Namespace(...)`, and SGLang's `server_args=ServerArgs(...)`. The values are Python reprs
// (strings, numbers, None/True/False, lists, tuples, dicts, `<Enum.X: 'x'>`, `Class(k=v)`). A line
// cut short is read up to its last complete value, with a note; newlines inside a repr (a wrapped
// paste) are skipped unless the next line starts a new log record. A serve command pasted in the
// same file fills in what a cut log line no longer says; the log wins where both speak.
#include "common/excerpt.hpp"
#include "inputs/forms.hpp"

namespace specprobe::serving {
namespace {

struct Marker {
  const char* text;
  bool sglang;
  char open;  // the bracket the repr starts with
};
const Marker kMarkers[] = {{"non-default args: {", false, '{'},
                           {"args: Namespace(", false, '('},
                           {"server_args=ServerArgs(", true, '('},
                           {"ServerArgs(", true, '('}};

bool log_record_start(std::string_view line) {
  size_t i = line.find_first_not_of(" \t`");
  if (i == std::string_view::npos) return false;
  line = line.substr(i);
  for (std::string_view p :
       {"INFO", "WARNING", "DEBUG", "ERROR", "CRITICAL", "(APIServer", "(EngineCore", "(Worker", "[20", "(VllmWorker"})
    if (line.substr(0, p.size()) == p) return true;
  return line.size() > 5 && std::isdigit(static_cast<unsigned char>(line[0])) &&
         std::isdigit(static_cast<unsigned char>(line[1])) && (line[2] == '-' || line[4] == '-');
}

// A Python repr reader over TEXT from a position; newlines inside are skipped (a wrapped paste)
// unless the next line starts a new log record, which counts as the end of the text.
class Repr {
 public:
  Repr(std::string_view text, size_t pos) : t_(text), i_(pos) {}
  size_t pos() const { return i_; }
  bool cut() const { return cut_; }

  // KEY=VALUE, ... ) or 'key': value, ... }; calls ON_ITEM for each complete pair.
  template <class F>
  bool items(char close, bool kwargs, F&& on_item) {
    while (true) {
      ws();
      if (at_end()) return cut_ = true, false;
      if (peek() == close) {
        next();
        return true;
      }
      const size_t key_at = i_;
      std::string key;
      if (kwargs) {
        while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_')) key += next();
        ws();
        if (at_end() || peek() != '=') return cut_ = true, false;
      } else {
        auto k = value(0);
        if (!k) return cut_ = true, false;
        key = k->is_string() ? k->get<std::string>() : k->dump();
        ws();
        if (at_end() || peek() != ':') return cut_ = true, false;
      }
      next();
      auto v = value(0);
      if (!v) return cut_ = true, false;
      ws();
      if (at_end()) {  // the value may itself be cut (a number "12" of "128")
        cut_ = true;
        return false;
      }
      if (peek() != ',' && peek() != close) return cut_ = true, false;
      on_item(key, std::move(*v), key_at);
      if (peek() == ',') next();
    }
  }

 private:
  bool at_end() {
    skip_newlines();
    return i_ >= t_.size();
  }
  char peek() {
    skip_newlines();
    return i_ < t_.size() ? t_[i_] : '\0';
  }
  char next() {
    skip_newlines();
    return i_ < t_.size() ? t_[i_++] : '\0';
  }
  void skip_newlines() {
    while (i_ < t_.size() && (t_[i_] == '\n' || t_[i_] == '\r')) {
      const size_t e = t_.find('\n', i_ + 1);
      const std::string_view line =
          t_.substr(i_ + 1, e == std::string_view::npos ? std::string_view::npos : e - i_ - 1);
      if (t_[i_] == '\n' && log_record_start(line)) {
        t_ = t_.substr(0, i_);  // a new record: this one was cut
        return;
      }
      ++i_;
    }
  }
  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t')) ++i_;
    skip_newlines();
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t')) ++i_;
  }

  std::optional<std::string> quoted() {
    const char q = next();
    std::string s;
    while (!at_end()) {
      char c = next();
      if (c == q) return s;
      if (c == '\\' && !at_end()) {
        c = next();
        s += c == 'n' ? '\n' : c == 't' ? '\t' : c;
        continue;
      }
      s += c;
    }
    return std::nullopt;
  }

  std::optional<Json> value(int depth) {
    if (depth > 32) return std::nullopt;
    ws();
    if (at_end()) return std::nullopt;
    const char c = peek();
    if (c == '\'' || c == '"') {
      auto s = quoted();
      if (!s) return std::nullopt;
      return Json(*s);
    }
    if (c == '[' || c == '(' || c == '{') return container(c, depth);
    if (c == '<') {  // <ConfigFormat.AUTO: 'auto'>
      next();
      std::string inner;
      while (!at_end() && peek() != '>') {
        if (peek() == '\'' || peek() == '"') {
          auto s = quoted();
          if (!s) return std::nullopt;
          inner = "'" + *s;
          continue;
        }
        inner += next();
      }
      if (at_end()) return std::nullopt;
      next();
      if (!inner.empty() && inner[0] == '\'') return Json(inner.substr(1));
      const size_t dot = inner.rfind('.');
      return Json(dot == std::string::npos ? inner : inner.substr(dot + 1));
    }
    std::string word;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) ||
                         std::string_view("._-+/:").find(peek()) != std::string_view::npos))
      word += next();
    if (word.empty()) return std::nullopt;
    if (!at_end() && peek() == '(') {  // Class(k=v, ...)
      next();
      Json obj = Json::object();
      const bool ok = items(')', true, [&](const std::string& k, Json v, size_t) { obj[k] = std::move(v); });
      if (!ok) return std::nullopt;
      return obj;
    }
    if (word == "None") return Json(nullptr);
    if (word == "True") return Json(true);
    if (word == "False") return Json(false);
    try {
      size_t used = 0;
      const long long n = std::stoll(word, &used);
      if (used == word.size()) return Json(n);
      const double d = std::stod(word, &used);
      if (used == word.size()) return Json(d);
    } catch (...) {
    }
    return Json(word);
  }

  std::optional<Json> container(char open, int depth) {
    next();
    const char close = open == '[' ? ']' : open == '(' ? ')' : '}';
    ws();
    if (open == '{') {
      // a dict, or a set of values
      Json obj = Json::object();
      const size_t save = i_;
      const bool ok = items('}', false, [&](const std::string& k, Json v, size_t) { obj[k] = std::move(v); });
      if (ok) return obj;
      i_ = save;
      cut_ = false;
    }
    Json arr = Json::array();
    while (true) {
      ws();
      if (at_end()) return std::nullopt;
      if (peek() == close) {
        next();
        return arr;
      }
      auto v = value(depth + 1);
      if (!v) return std::nullopt;
      arr.push_back(std::move(*v));
      ws();
      if (at_end()) return std::nullopt;
      if (peek() == ',')
        next();
      else if (peek() != close)
        return std::nullopt;
    }
  }

  std::string_view t_;
  size_t i_;
  bool cut_ = false;
};

struct LogArgs {
  bool sglang = false;
  size_t at = 0;  // offset of the marker
  std::vector<RawOption> options;
  std::string model_tag;  // vLLM: the positional model
  SourceLocation model_tag_at;
  bool cut = false;
  SourceLocation cut_at;
  std::string last_key;   // the last complete key before a cut
  bool fragment = false;  // no `server_args=ServerArgs(` head: a piece of the repr
};

// The engine version a log states ("vLLM API server version 0.11.0", "(v0.11.0)" in the engine
// banner, "version 0.15.0" in the ASCII banner).
void log_version(const std::string& text, const ServeCollector& col, DeployInfo& info) {
  auto take = [&](size_t p, size_t b) {
    size_t e = b;
    while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) ||
                               std::string_view(".+").find(text[e]) != std::string_view::npos))
      ++e;
    std::string v = text.substr(b, e - b);
    while (!v.empty() && (v.back() == '.' || v.back() == '+')) v.pop_back();
    if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0])) || v.find('.') == std::string::npos) return false;
    info.engine_version = v;
    info.engine_version_engine = "vllm";
    info.engine_version_source = fmt::format("log line \"{}\"", text.substr(p, std::min<size_t>(e - p, 60)));
    info.engine_version_where = col.loc(p);
    return true;
  };
  for (const char* marker :
       {"vLLM API server version ", "Initializing a V1 LLM engine (v", "Initializing an LLM engine (v"}) {
    const size_t p = text.find(marker);
    if (p != std::string::npos && take(p, p + std::string_view(marker).size())) return;
  }
  // The start-up banner: "... \u2588 version 0.19.0" (block characters before it).
  for (size_t p = text.find(" version "); p != std::string::npos; p = text.find(" version ", p + 1)) {
    size_t q = p;
    while (q > 0 && text[q - 1] == ' ') --q;
    if (q >= 3 && text.compare(q - 3, 3, "\xE2\x96\x88") == 0 && take(p + 1, p + 9)) return;
  }
}

std::vector<LogArgs> find_log_args(const std::string& text, const ServeCollector& col) {
  std::vector<LogArgs> out;
  size_t from = 0;
  while (from < text.size() && out.size() < 64) {
    size_t best = std::string::npos;
    const Marker* which = nullptr;
    for (const Marker& m : kMarkers) {
      const size_t p = text.find(m.text, from);
      if (p < best) best = p, which = &m;
    }
    if (!which) break;
    LogArgs a;
    a.sglang = which->sglang;
    a.at = best;
    const size_t open = best + std::string_view(which->text).size();
    Repr r(text, open);
    const bool kwargs = which->open == '(';
    const char close = which->open == '{' ? '}' : ')';
    const bool done = r.items(close, kwargs, [&](const std::string& key, Json v, size_t key_at) {
      a.last_key = key;
      if (v.is_null()) return;  // None: not stated
      if (!a.sglang && key == "model_tag") {
        a.model_tag = v.is_string() ? v.get<std::string>() : v.dump();
        a.model_tag_at = col.loc(key_at);
        return;
      }
      RawOption o;
      o.name = key;
      o.value = std::move(v);
      o.where = col.loc(key_at);
      a.options.push_back(std::move(o));
    });
    a.cut = !done;
    a.cut_at = col.loc(std::min(r.pos(), text.size()));
    out.push_back(std::move(a));
    from = std::max(open, r.pos()) + 1;
    // Ray dedup: "[repeated 7x across cluster]" after the closing bracket is the same line again.
  }
  return out;
}

// A fragment of SGLang's ServerArgs repr without its head: read as kwargs from the first key.
LogArgs fragment(const std::string& text, const ServeCollector& col) {
  LogArgs a;
  a.sglang = true;
  size_t start = 0;
  while (start < text.size() && !(std::isalnum(static_cast<unsigned char>(text[start])) || text[start] == '_')) ++start;
  Repr r(text, start);
  r.items(')', true, [&](const std::string& key, Json v, size_t key_at) {
    a.last_key = key;
    if (v.is_null()) return;
    RawOption o;
    o.name = key;
    o.value = std::move(v);
    o.where = col.loc(key_at);
    a.options.push_back(std::move(o));
  });
  a.cut = true;
  a.cut_at = col.loc(std::min(r.pos(), text.size()));
  a.fragment = true;
  return a;
}

// Text with every line that is not part of a serve command blanked (offsets kept).
std::string command_lines_only(const std::string& text) {
  std::string out(text.size(), ' ');
  size_t start = 0;
  bool continued = false;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    const bool serve = line.find("vllm serve") != std::string_view::npos ||
                       line.find("-m vllm.entrypoints") != std::string_view::npos ||
                       line.find("sglang.launch_server") != std::string_view::npos;
    const bool keep = (continued || serve) && !log_record_start(line) &&
                      line.find("args: ") == std::string_view::npos &&
                      line.find("ServerArgs(") == std::string_view::npos;
    if (keep) std::copy(line.begin(), line.end(), out.begin() + static_cast<long>(start));
    continued = keep && !line.empty() && line.back() == '\\';
    if (end < text.size()) out[end] = '\n';
    start = end + 1;
  }
  return out;
}

// Facts the command states that the cut log line no longer does.
void fill_from_command(ParsedServing& plan, const ParsedServing& cmd) {
  const Json flat = flatten_facts(cmd.facts);
  for (auto it = flat.begin(); it != flat.end(); ++it) {
    const std::string name = it.key();
    if (name.rfind("input.", 0) == 0 || name.rfind("deploy.", 0) == 0 || name == "engine.name") continue;
    auto loc = cmd.locations.find(name);
    if (loc == cmd.locations.end() || loc->second.line == 0) continue;  // a default, not stated
    auto mine = plan.locations.find(name);
    if (find_fact(plan.facts, name) && mine != plan.locations.end() && mine->second.line > 0) continue;
    set_fact(plan.facts, name, it.value());
    plan.locations[name] = loc->second;
  }
}

// A cut arguments line gives no value for the keys after the cut: the engine defaults the builder
// filled in for the settings it did not see (serve.*: parallel sizes, memory budget, KV dtype, ...)
// are not known to be what ran, and are left unknown (a log cut before tensor_parallel_size is
// not a TP-1 server). Facts the line or a pasted command states keep their values.
void leave_cut_defaults_unknown(ParsedServing& plan, const SourceLocation& cut_at) {
  Json* serve = plan.facts.contains("serve") ? &plan.facts["serve"] : nullptr;
  if (!serve || !serve->is_object()) return;
  std::vector<std::string> nulled;
  for (auto it = serve->begin(); it != serve->end(); ++it) {
    if (it.value().is_null()) continue;
    const std::string name = "serve." + it.key();
    auto loc = plan.locations.find(name);
    if (loc != plan.locations.end() && loc->second.line > 0) continue;
    bool stated_below = false;  // a part of it stated (serve.compilation_config.mode)
    for (auto l = plan.locations.lower_bound(name + ".");
         l != plan.locations.end() && l->first.rfind(name + ".", 0) == 0; ++l)
      stated_below |= l->second.line > 0;
    if (stated_below) continue;
    it.value() = nullptr;
    nulled.push_back(name);
  }
  if (nulled.empty()) return;
  std::string list;
  for (size_t i = 0; i < nulled.size() && i < 6; ++i) list += (list.empty() ? "" : ", ") + nulled[i];
  if (nulled.size() > 6) list += fmt::format(" and {} more", nulled.size() - 6);
  plan.notes.push_back(
      {"warning",
       fmt::format("the settings the cut line does not show are unknown, not the engine's defaults: {}; paste the "
                   "whole line or the serve command",
                   list),
       cut_at});
}

}  // namespace

bool looks_like_log(std::string_view text) {
  for (const Marker& m : kMarkers)
    if (text.find(m.text) != std::string_view::npos) return true;
  return text.find("_size=") != std::string_view::npos && text.find("speculative_algorithm=") != std::string_view::npos;
}

Expected<ServingFile> read_server_log(std::shared_ptr<const CollectorSource> src) {
  ServeCollector col(src);
  ServingFile out;
  out.path = src->path;
  // The serve command pasted with the log, if any.
  auto cmd_src = std::make_shared<CollectorSource>(*src);
  cmd_src->text = command_lines_only(src->text);
  std::vector<ParsedServing> commands;
  if (auto cmds = read_script_text(cmd_src); cmds) commands = std::move(cmds->plans);
  DeployInfo version;
  log_version(src->text, col, version);
  std::vector<LogArgs> found = find_log_args(src->text, col);
  if (found.empty()) {
    LogArgs piece = fragment(src->text, col);  // keys without the ServerArgs( prefix
    if (piece.options.empty()) {
      // No arguments line, not even a piece of one: the serve command pasted with the log is the
      // plan (no command: no server, as for a script that starts none).
      for (ParsedServing& c : commands) {
        PlanWriter w(c);
        if (!version.engine_version.empty())
          write_engine_version(w, version, fact_string(c.facts, "engine.name").value_or("vllm"));
        out.plans.push_back(std::move(c));
      }
      return out;
    }
    found.push_back(std::move(piece));
  }
  for (LogArgs& a : found) {
    ReadContext ctx;
    ctx.path = src->path;
    ctx.form = a.sglang ? InputForm::sglang_log : InputForm::vllm_log;
    ctx.api_server = !a.sglang;
    if (!a.model_tag.empty()) {
      ctx.positional_model = a.model_tag;
      ctx.positional_loc = a.model_tag_at;
      ctx.api_server = false;
    }
    if (a.fragment)
      ctx.notes.push_back({"warning",
                           "a piece of SGLang's ServerArgs(...) with neither its head nor its end: read from its first "
                           "complete key; what is not in it is unknown",
                           SourceLocation{src->path}});
    else if (a.cut)
      ctx.notes.push_back({"warning",
                           fmt::format("the arguments line is cut short{}: the keys after it are not in the file and "
                                       "are unknown here",
                                       a.last_key.empty() ? "" : fmt::format(" after '{}'", excerpt(a.last_key))),
                           a.cut_at});
    auto plan = a.sglang ? build_sglang(a.options, std::move(ctx)) : build_vllm(a.options, std::move(ctx));
    if (!plan) return plan.error();
    plan->unknown.clear();  // a log prints every argument; only the modelled ones matter here
    const std::string engine = a.sglang ? "sglang" : "vllm";
    for (const ParsedServing& c : commands)
      if (a.cut && fact_string(c.facts, "engine.name").value_or("") == engine) {
        fill_from_command(*plan, c);
        plan->notes.push_back(
            {"info", "facts the cut log line does not give are read from the command pasted with it", a.cut_at});
        break;
      }
    if (a.cut || a.fragment) leave_cut_defaults_unknown(*plan, a.fragment ? SourceLocation{src->path} : a.cut_at);
    PlanWriter w(*plan);
    plan->server = fmt::format("log line {}", col.loc(a.at).line);
    w.set("deploy.server", plan->server, col.loc(a.at));
    write_engine_version(w, version, engine);
    out.plans.push_back(std::move(*plan));
  }
  return out;
}

}  // namespace specprobe::serving
