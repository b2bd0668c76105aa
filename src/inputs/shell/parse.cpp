// The deploy-script shell's parser: words -> commands (see shell/internal.hpp). Tolerant: a
// construct left open at the end of the input ends there, with a note.
#include <algorithm>
#include <initializer_list>

#include "common/excerpt.hpp"
#include "inputs/shell/internal.hpp"

namespace specprobe::serving::shell {
namespace {

bool is_word(const ShellWord& t) { return t.kind == ShellWord::word; }
bool is_kw(const ShellWord& t, std::string_view k) {
  return t.kind == ShellWord::word && !t.quoted && t.expansions.empty() && t.text == k;
}
bool is_sep(const ShellWord& t, std::string_view s) { return t.kind == ShellWord::separator && t.text == s; }

// A word that begins an option line (`--tp 8`, `-O3`), not `-` alone nor a negative number.
bool option_word(const ShellWord& t) {
  if (!is_word(t) || t.text.size() < 2 || t.text[0] != '-' || t.unquoted_prefix == 0) return false;
  return !std::isdigit(static_cast<unsigned char>(t.text[1]));
}

class Parser {
 public:
  Parser(std::vector<ShellWord> toks, std::string_view text, const PosMap& pos, bool join,
         std::vector<ReaderNote>& notes)
      : t_(std::move(toks)), text_(text), pos_(pos), join_(join), notes_(notes) {}

  NodeList parse_all() {
    NodeList out = parse_list({});
    while (p_ < t_.size()) {  // a stray `fi`, `done`, `}` or `)`: skip it and go on
      ++p_;
      NodeList more = parse_list({});
      out.insert(out.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
    return out;
  }

 private:
  bool at_end() const { return p_ >= t_.size(); }
  const ShellWord& cur() const { return t_[p_]; }
  bool at_kw(std::initializer_list<std::string_view> ks) const {
    if (at_end()) return false;
    for (auto k : ks)
      if (is_kw(cur(), k)) return true;
    return false;
  }

  void note_open(const char* what, size_t start) {
    notes_.push_back({"warning", fmt::format("`{}` is not closed before the end of the script", what), pos_(start)});
  }

  // Skips separators; returns the ones skipped (for the option-line join).
  // first_sep_: the first of them ("&&", "||", ";", "\n" ...), or "" when none was skipped.
  std::string skip_separators(bool stop_at_case_end) {
    std::string seen;
    first_sep_.clear();
    while (!at_end() && cur().kind == ShellWord::separator) {
      const std::string& s = cur().text;
      if (s == ")" || s == "(" || (stop_at_case_end && s == ";;")) break;
      if (seen.empty()) first_sep_ = s;
      seen += s == "\n" ? "n" : "x";
      ++p_;
    }
    return seen;
  }

  bool blank_line_between(size_t from, size_t to) const {
    if (to <= from || to > text_.size()) return true;
    int newlines_in_a_row = 0;
    for (size_t i = from; i < to; ++i) {
      const char c = text_[i];
      if (c == '\n') {
        if (++newlines_in_a_row >= 2) return true;
      } else if (c == '#') {
        while (i < to && text_[i] != '\n') ++i;
        --i;
      } else if (c != ' ' && c != '\t' && c != '\r' && c != '\\') {
        newlines_in_a_row = 0;
      }
    }
    return false;
  }

  // An option-only command on the line after a command with no `;`/`&` between: the lines were
  // meant to continue it (a backslash missing or cut by a comment).
  bool join_into(NodeList& out, Node& node, const std::string& seps) {
    if (!join_ || out.empty() || out.back().kind != Node::simple || node.kind != Node::simple) return false;
    if (seps.empty() || seps.find('x') != std::string::npos || node.words.empty() || !option_word(node.words[0]))
      return false;
    Node& prev = out.back();
    if (prev.words.empty() || blank_line_between(prev.end, node.start)) return false;
    const SourceLocation at = pos_(node.start);
    const SourceLocation before = pos_(prev.words.front().start);
    // A list of options one per line, with no command (a recipe's flags): joined without a word.
    if (!option_word(prev.words.front()))
      notes_.push_back(
          {"warning",
           fmt::format("this line starts with the option {} but the command before it (line {}) does not "
                       "continue to it (no backslash, or a comment cuts the continuation): a shell runs it "
                       "as a separate command; read here as part of that command",
                       excerpt_name(node.words[0].text), before.line),
           at});
    for (auto& w : node.words) prev.words.push_back(std::move(w));
    for (auto& w : node.herestrings) prev.herestrings.push_back(std::move(w));
    for (auto& w : node.heredocs) prev.heredocs.push_back(std::move(w));
    prev.end = node.end;
    return true;
  }

  NodeList parse_list(std::initializer_list<std::string_view> stops, bool subshell = false, bool case_arm = false) {
    NodeList out;
    while (true) {
      const std::string seps = skip_separators(case_arm);
      if (at_end() || at_kw(stops)) break;
      if (is_sep(cur(), ")")) {
        if (subshell || case_arm) break;
        ++p_;  // stray
        continue;
      }
      if (case_arm && is_sep(cur(), ";;")) break;
      const std::string joined_by = out.empty() || (first_sep_ != "&&" && first_sep_ != "||") ? "" : first_sep_;
      Node n = parse_command();
      n.joined_by = joined_by;
      if (!join_into(out, n, seps)) out.push_back(std::move(n));
      if (++steps_ > kMaxNodes) {
        p_ = t_.size();
        break;
      }
    }
    return out;
  }

  Node parse_command() {
    const ShellWord& t = cur();
    if (is_kw(t, "if")) return parse_if();
    if (is_kw(t, "for") || is_kw(t, "select")) return parse_for();
    if (is_kw(t, "while") || is_kw(t, "until")) return parse_loop();
    if (is_kw(t, "case")) return parse_case();
    if (is_kw(t, "{")) return parse_group(Node::group, "}");
    if (is_kw(t, "!") || is_kw(t, "time")) {
      ++p_;
      return at_end() ? Node{} : parse_command();
    }
    if (is_sep(t, "(")) {
      if (p_ + 1 < t_.size() && is_sep(t_[p_ + 1], "(")) return parse_arith();
      return parse_group(Node::subshell, ")");
    }
    if (is_kw(t, "function") && p_ + 1 < t_.size() && is_word(t_[p_ + 1])) {
      ++p_;
      std::string name = cur().text;
      ++p_;
      if (p_ + 1 < t_.size() && is_sep(cur(), "(") && is_sep(t_[p_ + 1], ")")) p_ += 2;
      return parse_function(std::move(name), t.start);
    }
    if (is_word(t) && !t.quoted && is_identifier(t.text) && p_ + 2 < t_.size() && is_sep(t_[p_ + 1], "(") &&
        is_sep(t_[p_ + 2], ")")) {
      std::string name = t.text;
      const size_t start = t.start;
      p_ += 3;
      return parse_function(std::move(name), start);
    }
    return parse_simple();
  }

  Node parse_function(std::string name, size_t start) {
    Node n;
    n.kind = Node::funcdef;
    n.name = std::move(name);
    n.start = start;
    while (!at_end() && is_sep(cur(), "\n")) ++p_;
    if (at_end()) return n;
    Node body = parse_command();
    n.end = body.end;
    n.parts.push_back(body.kind == Node::group || body.kind == Node::subshell ? std::move(body.parts[0])
                                                                              : NodeList{std::move(body)});
    return n;
  }

  Node parse_group(Node::Kind kind, std::string_view close) {
    Node n;
    n.kind = kind;
    n.start = cur().start;
    ++p_;
    n.parts.push_back(kind == Node::subshell ? parse_list({}, true) : parse_list({close}));
    if (!at_end()) {
      n.end = cur().end;
      ++p_;
    } else {
      note_open(kind == Node::subshell ? "(" : "{", n.start);
    }
    return n;
  }

  Node parse_arith() {  // (( expr ))
    Node n;
    n.kind = Node::arith;
    n.start = cur().start;
    int depth = 0;
    while (!at_end()) {
      if (is_sep(cur(), "("))
        ++depth;
      else if (is_sep(cur(), ")") && --depth == 0) {
        n.end = cur().end;
        ++p_;
        break;
      } else if (is_sep(cur(), "\n") && depth <= 0) {
        break;
      }
      ++p_;
    }
    return n;
  }

  Node parse_if() {
    Node n;
    n.kind = Node::if_;
    n.start = cur().start;
    ++p_;
    while (true) {
      n.parts.push_back(parse_list({"then"}));
      if (!at_kw({"then"})) break;
      ++p_;
      n.parts.push_back(parse_list({"elif", "else", "fi"}));
      if (at_kw({"elif"})) {
        ++p_;
        continue;
      }
      if (at_kw({"else"})) {
        ++p_;
        n.parts.push_back(parse_list({"fi"}));
        n.has_else = true;
      }
      break;
    }
    if (n.parts.size() % 2 == 1 && !n.has_else) n.parts.emplace_back();  // `if` cut before `then`
    if (at_kw({"fi"})) {
      n.end = cur().end;
      ++p_;
    } else {
      note_open("if", n.start);
    }
    return n;
  }

  Node parse_for() {
    Node n;
    n.kind = Node::for_;
    n.start = cur().start;
    ++p_;
    if (!at_end() && is_sep(cur(), "(")) {  // for (( ...; ...; ... ))
      parse_arith();
      n.has_list = false;
      n.name.clear();
    } else if (!at_end() && is_word(cur())) {
      n.name = cur().text;
      ++p_;
      while (!at_end() && is_sep(cur(), "\n")) ++p_;
      if (at_kw({"in"})) {
        ++p_;
        while (!at_end() && is_word(cur())) n.words.push_back(t_[p_++]);
      } else {
        n.has_list = false;
      }
    }
    skip_separators(false);
    if (at_kw({"do"})) ++p_;
    n.parts.push_back(parse_list({"done"}));
    close_with("done", n);
    return n;
  }

  Node parse_loop() {
    Node n;
    n.kind = Node::loop;
    n.until = cur().text == "until";
    n.start = cur().start;
    ++p_;
    n.parts.push_back(parse_list({"do"}));
    if (at_kw({"do"})) ++p_;
    n.parts.push_back(parse_list({"done"}));
    close_with("done", n);
    return n;
  }

  void close_with(std::string_view kw, Node& n) {
    if (at_kw({kw})) {
      n.end = cur().end;
      ++p_;
    } else {
      note_open(n.kind == Node::case_ ? "case" : n.kind == Node::for_ ? "for" : "while", n.start);
    }
  }

  Node parse_case() {
    Node n;
    n.kind = Node::case_;
    n.start = cur().start;
    ++p_;
    if (!at_end() && is_word(cur())) n.words.push_back(t_[p_++]);
    while (!at_end() && is_sep(cur(), "\n")) ++p_;
    if (at_kw({"in"})) ++p_;
    while (true) {
      while (!at_end() && (cur().kind == ShellWord::separator && cur().text != ")" && cur().text != "(")) ++p_;
      if (at_end() || at_kw({"esac"})) break;
      if (is_sep(cur(), "(")) ++p_;
      std::vector<ShellWord> pats;
      while (!at_end() && !is_sep(cur(), ")")) {
        if (is_word(cur())) pats.push_back(cur());
        ++p_;
      }
      if (at_end()) break;
      ++p_;  // `)`
      n.patterns.push_back(std::move(pats));
      n.parts.push_back(parse_list({"esac"}, false, true));
      if (!at_end() && is_sep(cur(), ";;")) ++p_;
    }
    close_with("esac", n);
    return n;
  }

  // `<MODEL>` written as a placeholder: the shell sees `< MODEL >` (two redirections).
  bool placeholder(Node& n) {
    if (p_ + 2 >= t_.size()) return false;
    const ShellWord& lt = t_[p_];
    const ShellWord& name = t_[p_ + 1];
    const ShellWord& gt = t_[p_ + 2];
    if (lt.text != "<" || !is_word(name) || gt.kind != ShellWord::redirection || gt.text != ">" ||
        lt.end != name.start || name.end != gt.start)
      return false;
    ShellWord w = name;
    w.text = "<" + name.text + ">";
    w.offsets.insert(w.offsets.begin(), static_cast<uint32_t>(lt.start));
    w.offsets.push_back(static_cast<uint32_t>(gt.start));
    for (auto& e : w.expansions) ++e.pos;
    w.start = lt.start;
    w.end = gt.end;
    w.quoted = true;  // not an assignment, not an option
    w.unquoted_prefix = 0;
    w.expansions.push_back({0, w.text.size(), w.text, "", ShellExpansion::special, true});
    notes_.push_back({"warning",
                      fmt::format("{} looks like a placeholder to fill in; a shell reads it as the redirections "
                                  "`< {}` and `>`: the value is unknown",
                                  w.text, name.text),
                      pos_(lt.start)});
    p_ += 3;
    // A word glued to it on either side belongs to it (`/models/<NAME>`).
    if (!n.words.empty() && n.words.back().end == w.start) {
      ShellWord& prev = n.words.back();
      for (auto& e : w.expansions) e.pos += prev.text.size();
      prev.text += w.text;
      prev.offsets.insert(prev.offsets.end(), w.offsets.begin(), w.offsets.end());
      prev.expansions.insert(prev.expansions.end(), w.expansions.begin(), w.expansions.end());
      prev.end = w.end;
      prev.quoted = true;
    } else {
      n.words.push_back(std::move(w));
    }
    return true;
  }

  void redirection(Node& n) {
    const ShellWord& op = cur();
    ++p_;
    if (at_end() || !is_word(cur())) return;
    if (op.text == "<<<") n.herestrings.push_back(cur());
    ++p_;
    if ((op.text == "<<" || op.text == "<<-") && !at_end() && cur().kind == ShellWord::heredoc)
      n.heredocs.push_back(t_[p_++]);
  }

  Node parse_simple() {
    Node n;
    n.kind = Node::simple;
    n.start = cur().start;
    const bool double_bracket = is_kw(cur(), "[[");
    while (!at_end()) {
      const ShellWord& t = cur();
      if (t.kind == ShellWord::separator) {
        if (!double_bracket || t.text == "\n" || t.text == ";") break;
        n.words.push_back(t);  // && || ( ) inside [[ ]]
        ++p_;
        continue;
      }
      if (t.kind == ShellWord::redirection) {
        if (!placeholder(n)) redirection(n);
        continue;
      }
      if (t.kind == ShellWord::heredoc) {
        ++p_;
        continue;
      }
      if (double_bracket && is_kw(t, "]]")) {
        n.words.push_back(t);
        ++p_;
        break;
      }
      if (array_assignment(n)) continue;
      n.words.push_back(t);
      ++p_;
    }
    n.end = n.words.empty() ? n.start : n.words.back().end;
    return n;
  }

  // NAME=( a b c ) before the command words.
  bool array_assignment(Node& n) {
    const ShellWord& t = cur();
    if (t.quoted || t.text.size() < 2 || t.text.back() != '=' || p_ + 1 >= t_.size()) return false;
    const ShellWord& open = t_[p_ + 1];
    const std::string name =
        t.text.substr(0, t.text.size() - (t.text.size() > 2 && t.text[t.text.size() - 2] == '+' ? 2 : 1));
    if (!is_sep(open, "(") || open.start != t.end || !is_identifier(name)) return false;
    for (const auto& w : n.words)
      if (w.text.find('=') == std::string::npos) return false;  // only before the command word
    ArrayAssign a{t, {}};
    p_ += 2;
    while (!at_end() && !is_sep(cur(), ")")) {
      if (is_word(cur())) a.items.push_back(cur());
      ++p_;
    }
    if (!at_end()) ++p_;
    n.arrays.push_back(std::move(a));
    return true;
  }

  static constexpr size_t kMaxNodes = 200000;
  std::vector<ShellWord> t_;
  std::string_view text_;
  const PosMap& pos_;
  bool join_;
  std::vector<ReaderNote>& notes_;
  size_t p_ = 0;
  size_t steps_ = 0;
  std::string first_sep_;  // the first separator skip_separators skipped
};

}  // namespace

bool is_identifier(std::string_view s) {
  if (s.empty() || !shell_name_start(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return shell_name_char(c); });
}

bool split_assignment(const ShellWord& w, std::string& name, ShellWord& value, bool& append) {
  if (w.kind != ShellWord::word) return false;
  const size_t eq = w.text.find('=');
  if (eq == std::string::npos || eq == 0 || eq >= w.unquoted_prefix + 1) return false;
  append = w.text[eq - 1] == '+';
  const std::string_view n(w.text.data(), append ? eq - 1 : eq);
  if (!is_identifier(n)) return false;
  for (const auto& e : w.expansions)
    if (e.pos < eq) return false;
  name = std::string(n);
  value = w;
  value.text = w.text.substr(eq + 1);
  value.offsets.assign(w.offsets.begin() + static_cast<long>(std::min(eq + 1, w.offsets.size())), w.offsets.end());
  value.unquoted_prefix = w.unquoted_prefix > eq + 1 ? w.unquoted_prefix - eq - 1 : 0;
  value.expansions.clear();
  for (auto e : w.expansions) {
    e.pos -= eq + 1;
    value.expansions.push_back(e);
  }
  return true;
}

NodeList parse_script(std::vector<ShellWord> words, std::string_view text, const PosMap& pos, bool join,
                      std::vector<ReaderNote>& notes) {
  return Parser(std::move(words), text, pos, join, notes).parse_all();
}

}  // namespace specprobe::serving::shell
