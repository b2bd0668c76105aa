// The deploy-script shell's walk over the parsed script (see shell/script.hpp).
#include "inputs/shell/script.hpp"

#include <algorithm>
#include <set>

#include "common/excerpt.hpp"
#include "inputs/shell/internal.hpp"
#include "inputs/text/text.hpp"

namespace specprobe::serving {

using shell::Node;
using shell::NodeList;

namespace {

constexpr int kMaxDepth = 8;             // eval / sh -c / function nesting
constexpr size_t kMaxCommands = 100000;  // simple commands one file may reach
constexpr size_t kMaxLoopItems = 64;

bool is_shell(const std::string& w) {
  static const std::set<std::string, std::less<>> kShells = {"sh", "bash", "dash", "zsh", "ash", "ksh"};
  return kShells.count(base_name(w)) > 0;
}

// Words that run the rest of the line as a command.
bool is_wrapper(const std::string& w) {
  static const std::set<std::string, std::less<>> kWrappers = {"exec",    "nohup", "time",   "command",
                                                               "builtin", "sudo",  "stdbuf", "setsid"};
  return kWrappers.count(w) > 0;
}

}  // namespace

struct ShellReader::Impl {
  Impl(ShellReader& reader, const std::function<Status(const ShellCommand&)>& on_command)
      : r(reader), emit(on_command) {}
  ShellReader& r;
  const std::function<Status(const ShellCommand&)>& emit;
  ShellVars vars;
  std::vector<std::string> args;
  bool have_args = false;
  std::map<std::string, const Node*> functions;
  std::vector<std::unique_ptr<NodeList>> keep;  // parsed eval / sh -c scripts (functions point into them)
  size_t budget = kMaxInputBytes;
  size_t commands = 0;
  int depth = 0;
  int uncertain = 0;  // inside a branch, loop or case arm that may not run
  bool stopped = false;

  shell::Scope scope() {
    shell::Scope s;
    s.vars = &vars;
    s.args = have_args ? &args : nullptr;
    s.reasons = &r.reasons_;
    s.notes = &r.notes_;
    s.pos = &r.pos_;
    s.budget = &budget;
    return s;
  }

  SourceLocation loc(size_t off) const { return r.pos_(off); }

  // Parses TEXT (whose byte k sits at OFFSETS[k] of the reader's text; empty = the text itself).
  Expected<NodeList*> parse(const std::string& text, const std::vector<uint32_t>& offsets) {
    const PosMap& pos = r.pos_;
    const PosMap inner = offsets.empty() ? pos : PosMap([&pos, &offsets](size_t k) {
      return pos(k < offsets.size() ? offsets[k] : offsets.back());
    });
    auto words = split_shell_words(text, inner);
    if (!words) return words.error();
    if (!offsets.empty()) remap(*words, offsets);
    auto list = std::make_unique<NodeList>(
        shell::parse_script(std::move(*words), r.text_, r.pos_, r.options_.join_option_lines, r.notes_));
    keep.push_back(std::move(list));
    return keep.back().get();
  }

  static void remap(std::vector<ShellWord>& words, const std::vector<uint32_t>& offsets) {
    auto m = [&](size_t k) -> uint32_t {
      return k < offsets.size() ? offsets[k] : (offsets.empty() ? 0 : offsets.back());
    };
    for (auto& w : words) {
      for (auto& o : w.offsets) o = m(o);
      w.start = m(w.start);
      w.end = w.end > 0 ? m(w.end - 1) + 1 : w.start;
    }
  }

  Status run_list(const NodeList& list) {
    for (const Node& n : list) {
      if (stopped) break;
      if (auto st = run_node(n); !st) return st;
    }
    return Ok{};
  }

  Status run_node(const Node& n) {
    switch (n.kind) {
      case Node::simple:
        return run_simple(n);
      case Node::if_:
        return run_if(n);
      case Node::for_:
        return run_for(n);
      case Node::loop:
        return run_loop(n);
      case Node::case_:
        return run_case(n);
      case Node::group:
        return n.parts.empty() ? Status(Ok{}) : run_list(n.parts[0]);
      case Node::subshell: {
        const ShellVars saved = vars;
        Status st = n.parts.empty() ? Status(Ok{}) : run_list(n.parts[0]);
        vars = saved;
        return st;
      }
      case Node::funcdef:
        functions[n.name] = &n;
        return Ok{};
      case Node::arith:
        return Ok{};
    }
    return Ok{};
  }

  // The truth of one test command over known values.
  std::optional<bool> test_command(const Node& n) {
    if (n.kind != Node::simple) return std::nullopt;
    std::vector<ShellWord> words;
    auto s = scope();
    for (const auto& w : n.words)
      if (!shell::expand_word(w, true, s, words)) return std::nullopt;
    return shell::eval_test(words);
  }

  // The truth of a condition list: one test command, or test commands joined by && and || (as
  // the shell runs them: left to right, a command skipped when the result is already decided);
  // unknown when a command that would run cannot be decided.
  std::optional<bool> condition(const NodeList& cond) {
    if (cond.empty()) return std::nullopt;
    for (size_t i = 1; i < cond.size(); ++i)
      if (cond[i].joined_by.empty()) return std::nullopt;  // a list of statements, not one and-or list
    std::optional<bool> result = test_command(cond[0]);
    if (!result) return std::nullopt;
    for (size_t i = 1; i < cond.size(); ++i) {
      const bool runs = cond[i].joined_by == "&&" ? *result : !*result;
      if (!runs) continue;
      result = test_command(cond[i]);
      if (!result) return std::nullopt;
    }
    return result;
  }

  // Runs each branch from the same variables; afterwards a variable the branches left
  // different is unresolved (named after itself).
  Status run_branches(const std::vector<const NodeList*>& branches, bool exhaustive, size_t at, const char* what) {
    const ShellVars before = vars;
    std::vector<ShellVars> after;
    ++uncertain;
    for (const NodeList* b : branches) {
      vars = before;
      if (auto st = run_list(*b); !st) return --uncertain, st;
      after.push_back(vars);
    }
    --uncertain;
    if (!exhaustive) after.push_back(before);
    vars = before;
    std::set<std::string> names;
    for (const auto& a : after)
      for (const auto& [k, v] : a) names.insert(k);
    for (const auto& k : names) {
      const ShellValue* first = nullptr;
      bool same = true;
      for (const auto& a : after) {
        auto it = a.find(k);
        const ShellValue* v = it == a.end() ? nullptr : &it->second;
        if (&a == &after.front())
          first = v;
        else if ((v == nullptr) != (first == nullptr) || (v && (v->text != first->text || v->array != first->array)))
          same = false;
      }
      if (same) {
        if (first)
          vars[k] = *first;
        else
          vars.erase(k);
        continue;
      }
      ShellValue u;
      u.text = unresolved_mark(k);
      vars[k] = u;
      if (!r.reasons_.count(k))
        r.reasons_[k] = fmt::format(
            "assigned differently in the branches of the {} at line {}, whose condition is "
            "known only when the script runs",
            what, loc(at).line);
    }
    return Ok{};
  }

  Status run_if(const Node& n) {
    std::vector<const NodeList*> unknown;
    for (size_t i = 0; i + 1 < n.parts.size(); i += 2) {
      if (auto st = run_list(n.parts[i]); !st) return st;  // the condition's own commands
      const auto c = condition(n.parts[i]);
      if (c && *c && unknown.empty()) return run_list(n.parts[i + 1]);
      if (c && !*c) continue;
      unknown.push_back(&n.parts[i + 1]);
    }
    const bool else_branch = n.has_else && n.parts.size() % 2 == 1;
    if (unknown.empty()) return else_branch ? run_list(n.parts.back()) : Status(Ok{});
    if (else_branch) unknown.push_back(&n.parts.back());
    return run_branches(unknown, else_branch, n.start, "`if`");
  }

  Status run_for(const Node& n) {
    if (n.parts.empty()) return Ok{};
    std::vector<ShellWord> items;
    auto s = scope();
    if (n.has_list) {
      for (const auto& w : n.words)
        if (!shell::expand_word(w, true, s, items)) return Ok{};
    } else if (have_args) {
      for (const auto& a : args) {
        ShellWord w;
        w.text = a;
        items.push_back(std::move(w));
      }
    }
    const ShellVars before = vars;
    const bool known =
        !n.name.empty() && n.has_list &&
        std::none_of(items.begin(), items.end(), [](const ShellWord& w) { return has_unresolved(w.text); });
    if (!known || items.empty()) {  // the body once, its assignments not kept
      if (!n.name.empty()) vars[n.name].text = unresolved_mark(n.name);
      if (!r.reasons_.count(n.name) && !n.name.empty()) r.reasons_[n.name] = "a loop variable";
      ++uncertain;
      Status st = run_list(n.parts[0]);
      --uncertain;
      vars = before;
      return st;
    }
    for (size_t i = 0; i < items.size() && i < kMaxLoopItems; ++i) {
      ShellValue v;
      v.text = items[i].text;
      v.offsets = items[i].offsets;
      vars[n.name] = v;
      if (auto st = run_list(n.parts[0]); !st) return st;
    }
    if (items.size() > kMaxLoopItems)
      r.notes_.push_back({"info",
                          fmt::format("the loop has {} items; the first {} were read", items.size(), kMaxLoopItems),
                          loc(n.start)});
    return Ok{};
  }

  Status run_loop(const Node& n) {
    const ShellVars before = vars;
    ++uncertain;
    for (const NodeList& part : n.parts)
      if (auto st = run_list(part); !st) return --uncertain, st;
    --uncertain;
    vars = before;  // a loop's assignments depend on how often it runs
    return Ok{};
  }

  Status run_case(const Node& n) {
    if (n.words.empty()) return Ok{};
    auto s = scope();
    const ShellWord subject = shell::expand_single(n.words[0], s);
    const bool known = !has_unresolved(subject.text);
    std::vector<const NodeList*> arms;
    for (size_t a = 0; a < n.patterns.size() && a < n.parts.size(); ++a) {
      if (!known) {
        arms.push_back(&n.parts[a]);
        continue;
      }
      for (const auto& p : n.patterns[a]) {
        const ShellWord pat = shell::expand_single(p, s);
        if (shell::glob_match(pat.text, subject.text)) return run_list(n.parts[a]);
      }
    }
    if (arms.empty()) return Ok{};
    const ShellVars before = vars;
    ++uncertain;
    for (const NodeList* arm : arms) {  // each arm for its commands; assignments not kept
      vars = before;
      if (auto st = run_list(*arm); !st) return --uncertain, st;
    }
    --uncertain;
    vars = before;
    return Ok{};
  }

  Status run_simple(const Node& n);
  Status run_words(std::vector<ShellWord> words, const std::vector<std::pair<std::string, EnvSetting>>& prefix,
                   const Node* n);
  Status assign(const ShellWord& w, const std::string& name, const ShellWord& value, bool append, bool exported);
  Status builtin(const std::vector<ShellWord>& words, size_t i, const Node& n, bool& handled);
  Status run_text(const ShellWord& script, std::vector<std::string> script_args, bool subshell,
                  const std::vector<std::pair<std::string, EnvSetting>>& env);
  Status call(const Node& fn, const std::vector<ShellWord>& words, size_t i);
};

Status ShellReader::Impl::assign(const ShellWord& w, const std::string& name, const ShellWord& value, bool append,
                                 bool exported) {
  auto s = scope();
  ShellWord v = shell::expand_single(value, s);
  // A value from a command substitution is named after the variable that holds it.
  for (const auto& m : unresolved_names(v.text)) {
    if (m.rfind("$(", 0) != 0 && m.rfind("$((", 0) != 0) continue;
    const std::string from = unresolved_mark(m);
    for (size_t p; (p = v.text.find(from)) != std::string::npos;) {
      v.text.replace(p, from.size(), unresolved_mark(name));
      v.offsets.erase(v.offsets.begin() + static_cast<long>(p), v.offsets.begin() + static_cast<long>(p + from.size()));
      v.offsets.insert(v.offsets.begin() + static_cast<long>(p), unresolved_mark(name).size(),
                       static_cast<uint32_t>(w.start));
    }
    if (!r.reasons_.count(name))
      r.reasons_[name] = fmt::format("set from {}, a command substitution specprobe never runs", m);
  }
  ShellValue& sv = vars[name];
  if (append && !sv.is_array) {
    sv.text += v.text;
    sv.offsets.insert(sv.offsets.end(), v.offsets.begin(), v.offsets.end());
  } else {
    sv.text = v.text;
    sv.offsets = v.offsets;
    sv.is_array = false;
    sv.array.clear();
    sv.array_offsets.clear();
  }
  sv.origin.clear();
  if (exported) sv.exported = true;
  return Ok{};
}

Status ShellReader::Impl::run_text(const ShellWord& script, std::vector<std::string> script_args, bool subshell,
                                   const std::vector<std::pair<std::string, EnvSetting>>& env) {
  if (depth >= kMaxDepth) {
    r.notes_.push_back({"warning", "eval / sh -c nested too deeply; not read further", loc(script.start)});
    return Ok{};
  }
  auto list = parse(script.text, script.offsets);
  if (!list) {
    r.notes_.push_back(
        {"warning", fmt::format("cannot read this shell string: {}", list.error().message), list.error().where});
    return Ok{};
  }
  const ShellVars saved_vars = vars;
  const auto saved_args = args;
  const bool saved_have = have_args;
  if (subshell) {  // a new shell sees only exported variables (and the command's VAR=x prefixes)
    ShellVars env_only;
    for (const auto& [k, v] : vars)
      if (v.exported) env_only[k] = v;
    for (const auto& [k, setting] : env)
      if (!env_only.count(k) || env_only[k].text != setting.value) {
        ShellValue v;
        v.text = setting.value;
        v.exported = true;
        env_only[k] = v;
      }
    vars = std::move(env_only);
    args = std::move(script_args);
    have_args = true;
  }
  ++depth;
  Status st = run_list(**list);
  --depth;
  if (subshell) {
    vars = saved_vars;
    args = saved_args;
    have_args = saved_have;
  }
  return st;
}

Status ShellReader::Impl::call(const Node& fn, const std::vector<ShellWord>& words, size_t i) {
  if (depth >= kMaxDepth || fn.parts.empty()) return Ok{};
  const auto saved_args = args;
  const bool saved_have = have_args;
  args.clear();
  for (size_t k = i + 1; k < words.size(); ++k) args.push_back(words[k].text);
  have_args = true;
  ++depth;
  Status st = run_list(fn.parts[0]);
  --depth;
  args = saved_args;
  have_args = saved_have;
  return st;
}

Status ShellReader::Impl::builtin(const std::vector<ShellWord>& words, size_t i, const Node& n, bool& handled) {
  handled = true;
  const std::string& cmd = words[i].text;
  std::string name;
  ShellWord value;
  bool append = false;
  if (cmd == "export" || cmd == "declare" || cmd == "typeset" || cmd == "local" || cmd == "readonly") {
    bool exported = cmd == "export";
    for (size_t j = i + 1; j < words.size(); ++j) {
      const std::string& t = words[j].text;
      if (t.size() > 1 && t[0] == '-') {
        exported |= t.find('x') != std::string::npos;
        continue;
      }
      if (shell::split_assignment(words[j], name, value, append)) {
        // already expanded: store as is
        ShellValue& sv = vars[name];
        sv.text = append ? sv.text + value.text : value.text;
        if (append)
          sv.offsets.insert(sv.offsets.end(), value.offsets.begin(), value.offsets.end());
        else
          sv.offsets = value.offsets;
        sv.exported |= exported;
        sv.is_array = false;
        sv.origin.clear();
      } else if (shell::is_identifier(t)) {
        if (exported)
          vars[t].exported = true;
        else if (cmd == "local" && !vars.count(t))
          vars[t] = ShellValue{};
      }
    }
    return Ok{};
  }
  if (cmd == "unset") {
    for (size_t j = i + 1; j < words.size(); ++j) vars.erase(words[j].text);
    return Ok{};
  }
  if (cmd == "shift") {
    if (have_args && !args.empty()) args.erase(args.begin());
    return Ok{};
  }
  if (cmd == "read") {
    std::vector<std::string> names;
    for (size_t j = i + 1; j < words.size(); ++j)
      if (shell::is_identifier(words[j].text)) names.push_back(words[j].text);
    std::string ifs = " \t\n";
    if (auto it = vars.find("IFS"); it != vars.end() && !has_unresolved(it->second.text)) ifs = it->second.text;
    for (const auto& w : n.words)  // IFS='|' read ...
      if (shell::split_assignment(w, name, value, append) && name == "IFS") ifs = value.text;
    std::string line;
    bool known = false;
    if (!n.herestrings.empty()) {
      auto s = scope();
      line = shell::expand_single(n.herestrings.front(), s).text;
      known = !has_unresolved(line);
    }
    size_t at = 0;
    for (size_t k = 0; k < names.size(); ++k) {
      ShellValue v;
      if (!known) {
        v.text = unresolved_mark(names[k]);
        if (!r.reasons_.count(names[k])) r.reasons_[names[k]] = "read at run time";
      } else if (k + 1 == names.size()) {
        v.text = at <= line.size() ? line.substr(at) : "";
      } else if (at > line.size()) {
        v.text.clear();  // more names than fields: bash sets the rest empty
      } else {
        const size_t e = line.find_first_of(ifs, at);
        v.text = line.substr(at, e == std::string::npos ? std::string::npos : e - at);
        at = e == std::string::npos ? line.size() + 1 : e + 1;
      }
      vars[names[k]] = v;
    }
    return Ok{};
  }
  if (cmd == "source" || cmd == ".") {
    if (i + 1 < words.size())
      r.notes_.push_back({"info",
                          fmt::format("`{} {}` reads another file; its settings are not known here", cmd,
                                      excerpt_name(words[i + 1].text)),
                          loc(words[i].start)});
    return Ok{};
  }
  if (cmd == "eval") {
    ShellWord joined;
    for (size_t j = i + 1; j < words.size(); ++j) {
      if (j > i + 1) {
        joined.text += ' ';
        joined.offsets.push_back(words[j].offsets.empty() ? static_cast<uint32_t>(words[j].start)
                                                          : words[j].offsets.front());
      }
      joined.text += words[j].text;
      joined.offsets.insert(joined.offsets.end(), words[j].offsets.begin(), words[j].offsets.end());
    }
    joined.start = words[i].start;
    return run_text(joined, {}, false, {});
  }
  if (cmd == "alias" || cmd == "set" || cmd == "cd" || cmd == "echo" || cmd == "printf" || cmd == "trap" ||
      cmd == "exit" || cmd == "return" || cmd == "wait" || cmd == "sleep" || cmd == ":" || cmd == "true" ||
      cmd == "false") {
    if (cmd == "exit" && uncertain == 0 && depth == 0) stopped = true;  // the script ends here
    return Ok{};
  }
  handled = false;
  return Ok{};
}

Status ShellReader::Impl::run_simple(const Node& n) {
  if (++commands > kMaxCommands) {
    if (!stopped)
      r.notes_.push_back({"warning",
                          fmt::format("the script runs more than {} commands; the rest is not read", kMaxCommands),
                          loc(n.start)});
    stopped = true;
    return Ok{};
  }
  auto s = scope();
  // VAR=x prefixes (and plain assignments): values expanded without field splitting.
  size_t first = 0;
  std::string name;
  ShellWord value;
  bool append = false;
  std::vector<std::pair<std::string, EnvSetting>> prefix;
  while (first < n.words.size() && shell::split_assignment(n.words[first], name, value, append)) {
    ShellWord v = shell::expand_single(value, s);
    prefix.emplace_back(name, EnvSetting{v.text, loc(n.words[first].start)});
    ++first;
  }
  if (first == n.words.size()) {
    for (size_t k = 0; k < first; ++k) {
      shell::split_assignment(n.words[k], name, value, append);
      if (auto st = assign(n.words[k], name, value, append, false); !st) return st;
    }
    for (const auto& a : n.arrays) {
      ShellValue v;
      v.is_array = true;
      std::vector<ShellWord> items;
      for (const auto& w : a.items) shell::expand_word(w, true, s, items);
      for (const auto& it : items) {
        v.array.push_back(it.text);
        v.array_offsets.push_back(it.offsets);
      }
      v.text = v.array.empty() ? "" : v.array.front();
      const std::string arr = a.name.text.substr(0, a.name.text.find_first_of("+="));
      if (a.name.text.find("+=") != std::string::npos && vars[arr].is_array) {
        const ShellValue& old = vars[arr];
        v.array.insert(v.array.begin(), old.array.begin(), old.array.end());
        std::vector<std::vector<uint32_t>> offs = old.array_offsets;
        offs.resize(old.array.size());
        v.array_offsets.insert(v.array_offsets.begin(), offs.begin(), offs.end());
      }
      vars[arr] = v;
    }
    return Ok{};
  }
  std::vector<ShellWord> words;
  for (size_t k = first; k < n.words.size(); ++k)
    if (!shell::expand_word(n.words[k], true, s, words))
      return input_error(fmt::format("variable expansions exceed {} MiB", kMaxInputBytes >> 20), loc(n.words[k].start));
  return run_words(std::move(words), prefix, &n);
}

Status ShellReader::Impl::run_words(std::vector<ShellWord> words,
                                    const std::vector<std::pair<std::string, EnvSetting>>& prefix, const Node* n) {
  static const Node kNone;
  const Node& node = n ? *n : kNone;
  size_t i = 0;
  while (i < words.size() && is_wrapper(words[i].text) && i + 1 < words.size()) ++i;
  if (i >= words.size()) return Ok{};
  bool handled = false;
  if (auto st = builtin(words, i, node, handled); !st || handled) return st;
  if (auto f = functions.find(words[i].text); f != functions.end() && !words[i].quoted)
    return call(*f->second, words, i);
  // sh -c 'script' [arg0 args...]
  if (is_shell(words[i].text)) {
    for (size_t j = i + 1; j < words.size(); ++j) {
      const std::string& t = words[j].text;
      if (t == "--") continue;
      if (t.size() < 2 || t[0] != '-') break;
      if (t[1] != '-' && t.find('c') != std::string::npos && j + 1 < words.size()) {
        size_t script = j + 1;
        if (words[script].text == "--" && script + 1 < words.size()) ++script;
        std::vector<std::string> sargs;
        for (size_t k = script + 2; k < words.size(); ++k) sargs.push_back(words[k].text);
        return run_text(words[script], std::move(sargs), true, prefix);
      }
    }
  }
  ShellCommand c;
  for (const auto& [k, v] : vars)
    if (v.exported && v.origin != "environment" && v.origin != "--env")
      c.env.emplace_back(k, EnvSetting{v.text, v.offsets.empty() ? SourceLocation{} : loc(v.offsets.front())});
  for (auto& entry : prefix) {
    const std::string& name = entry.first;  // not a structured binding: clang 14 cannot capture one
    auto it = std::find_if(c.env.begin(), c.env.end(), [&](const auto& e) { return e.first == name; });
    if (it != c.env.end())
      it->second = entry.second;
    else
      c.env.emplace_back(name, entry.second);
  }
  c.words.assign(words.begin() + static_cast<long>(i), words.end());
  auto s = scope();
  for (const auto& h : node.heredocs) c.heredocs.push_back(h.quoted ? h : shell::expand_single(h, s));
  c.vars = &vars;
  c.depth = depth;
  c.end = node.end;
  return emit(c);
}

ShellReader::ShellReader(std::string text, PosMap pos, ShellOptions options)
    : text_(std::move(text)), pos_(std::move(pos)), options_(std::move(options)) {}

Status ShellReader::run(const std::function<Status(const ShellCommand&)>& on_command) {
  Impl impl(*this, on_command);
  impl.vars = options_.vars;
  impl.args = options_.args;
  impl.have_args = !options_.args.empty();
  auto list = impl.parse(text_, {});
  if (!list) return list.error();
  return impl.run_list(**list);
}

Status ShellReader::run_argv(std::vector<ShellWord> argv,
                             const std::function<Status(const ShellCommand&)>& on_command) {
  Impl impl(*this, on_command);
  impl.vars = options_.vars;
  impl.args = options_.args;
  impl.have_args = !options_.args.empty();
  return impl.run_words(std::move(argv), {}, nullptr);
}

Expected<std::vector<ShellWord>> expand_command_text(const std::string& text, const PosMap& pos, const ShellVars& vars,
                                                     std::vector<ReaderNote>& notes) {
  auto words = split_shell_words(text, pos);
  if (!words) return words.error();
  ShellVars v = vars;
  std::map<std::string, std::string> reasons;
  size_t budget = kMaxInputBytes;
  shell::Scope s;
  s.vars = &v;
  s.reasons = &reasons;
  s.notes = &notes;
  s.pos = &pos;
  s.budget = &budget;
  std::vector<ShellWord> out;
  for (const auto& w : *words) {
    if (w.kind != ShellWord::word) {
      out.push_back(w);
      continue;
    }
    if (!shell::expand_word(w, true, s, out)) return input_error("variable expansions are too large", pos(w.start));
  }
  return out;
}

}  // namespace specprobe::serving
