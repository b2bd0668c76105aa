// The deploy-script shell's word expansion, tests and arithmetic (see shell/internal.hpp).
#include <algorithm>
#include <cctype>
#include <charconv>

#include "inputs/shell/internal.hpp"

namespace specprobe::serving {

std::string unresolved_mark(std::string_view name) {
  std::string s(1, kMarkOpen);
  s += name;
  s += kMarkClose;
  return s;
}

std::vector<std::string> unresolved_names(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while ((i = s.find(kMarkOpen, i)) != std::string_view::npos) {
    const size_t j = s.find(kMarkClose, i + 1);
    if (j == std::string_view::npos) break;
    std::string name(s.substr(i + 1, j - i - 1));
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
    i = j + 1;
  }
  return out;
}

bool has_unresolved(std::string_view s) { return s.find(kMarkOpen) != std::string_view::npos; }

std::string show_unresolved(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == kMarkOpen)
      out += "${";
    else if (c == kMarkClose)
      out += "}";
    else
      out += c;
  }
  for (size_t p; (p = out.find("${<")) != std::string::npos;) {  // placeholders: <NAME>
    const size_t q = out.find(">}", p);
    if (q == std::string::npos) break;
    out.erase(q + 1, 1);
    out.erase(p, 2);
  }
  for (size_t p; (p = out.find("${$(")) != std::string::npos;) {  // command substitutions
    const size_t q = out.find(")}", p);
    if (q == std::string::npos) break;
    out.erase(q + 1, 1);
    out.erase(p, 2);
  }
  return out;
}

namespace shell {
namespace {

// A piece of an expanded word: bytes with their source offsets; SPLIT marks bytes that came
// from an unquoted expansion (field splitting applies to them).
struct Built {
  std::string text;
  std::vector<uint32_t> offsets;
  std::vector<bool> split;
  bool any_quoted = false;
  std::vector<std::vector<ShellWord>> lists;  // "$@" / "${a[@]}" alone in a word: one field each
};

struct Value {
  std::string text;
  std::vector<uint32_t> offsets;                    // empty: place at the expansion
  std::vector<std::string> list;                    // set with is_list
  std::vector<std::vector<uint32_t>> list_offsets;  // LIST's bytes in the script (may be empty)
  bool is_list = false;
  bool unset = true;
};

void append(Built& b, std::string_view text, const std::vector<uint32_t>& offs, uint32_t at, bool split) {
  for (size_t k = 0; k < text.size(); ++k) {
    b.text += text[k];
    b.offsets.push_back(k < offs.size() ? offs[k] : at);
    b.split.push_back(split);
  }
}

Value lookup(const std::string& name, Scope& s) {
  Value v;
  auto it = s.vars->find(name);
  if (it == s.vars->end()) return v;
  v.unset = false;
  if (it->second.is_array) {
    v.is_list = true;
    v.list = it->second.array;
    v.list_offsets = it->second.array_offsets;
    v.text = v.list.empty() ? std::string() : v.list.front();
    return v;
  }
  v.text = it->second.text;
  v.offsets = it->second.offsets;
  return v;
}

Value marker(const std::string& name, Scope& s, const std::string& reason) {
  if (s.reasons && !reason.empty() && !s.reasons->count(name)) (*s.reasons)[name] = reason;
  Value v;
  v.text = unresolved_mark(name);
  v.unset = false;
  return v;
}

Value special(const ShellExpansion& e, Scope& s) {
  const char c = e.name.empty() ? '?' : e.name[0];
  if (c == '<') return marker(e.name, s, "a placeholder to fill in");
  if (std::isdigit(static_cast<unsigned char>(c)) && c != '0') {
    const size_t n = static_cast<size_t>(c - '0');
    if (s.args && n <= s.args->size()) {
      Value v;
      v.text = (*s.args)[n - 1];
      v.unset = false;
      return v;
    }
    return marker(std::string("$") + c, s, "a positional argument given when the script runs");
  }
  if ((c == '@' || c == '*') && s.args) {
    Value v;
    v.is_list = c == '@';
    v.list = *s.args;
    for (const auto& a : *s.args) v.text += (v.text.empty() ? "" : " ") + a;
    v.unset = false;
    return v;
  }
  if (c == '#' && s.args) {
    Value v;
    v.text = std::to_string(s.args->size());
    v.unset = false;
    return v;
  }
  return marker(std::string("$") + c, s, "known only when the script runs");
}

// Text of a ${...:-word} word: its own words expanded and joined by spaces.
Value expand_fragment(std::string_view raw, const std::vector<uint32_t>& offs, Scope& s) {
  Value v;
  v.unset = false;
  if (raw.empty() || s.depth > 16) return v;
  const PosMap pos = *s.pos;
  LineIndex none;
  auto words = split_shell_words(raw, none);
  if (!words) {
    v.text = std::string(raw);
    v.offsets = offs;
    return v;
  }
  ++s.depth;
  for (ShellWord w : *words) {
    if (w.kind != ShellWord::word) continue;
    for (auto& o : w.offsets) o = o < offs.size() ? offs[o] : (offs.empty() ? 0 : offs.back());
    for (auto& e : w.expansions) (void)e;
    std::vector<ShellWord> fields;
    expand_word(w, false, s, fields);
    for (const auto& f : fields) {
      if (!v.text.empty()) {
        v.text += ' ';
        v.offsets.push_back(f.offsets.empty() ? 0 : f.offsets.front());
      }
      v.text += f.text;
      v.offsets.insert(v.offsets.end(), f.offsets.begin(), f.offsets.end());
    }
  }
  --s.depth;
  return v;
}

// Prefix/suffix removal ${X#pat} ${X##pat} ${X%pat} ${X%%pat}.
std::string strip_pattern(const std::string& v, const std::string& pat, bool prefix, bool longest) {
  const size_t n = v.size();
  for (size_t k = 0; k <= n; ++k) {
    const size_t len = longest ? n - k : k;
    const std::string part = prefix ? v.substr(0, len) : v.substr(n - len);
    if (glob_match(pat, part)) return prefix ? v.substr(len) : v.substr(0, n - len);
  }
  return v;
}

Value braced(const ShellExpansion& e, Scope& s, const ShellWord& w) {
  const std::string& x = e.expr;
  // Offsets of the expression text inside the word: it starts after "${".
  auto expr_offsets = [&](size_t from) {
    std::vector<uint32_t> o;
    for (size_t k = e.pos + 2 + from; k < e.pos + e.len - 1 && k < w.offsets.size(); ++k) o.push_back(w.offsets[k]);
    return o;
  };
  if (!x.empty() && x[0] == '#' && is_identifier(x.substr(1))) {
    Value v = lookup(x.substr(1), s);
    if (v.unset) return marker(x.substr(1), s, "not set in the file");
    if (has_unresolved(v.text)) return marker(x.substr(1), s, "");
    Value out;
    out.unset = false;
    out.text = std::to_string(v.is_list ? v.list.size() : v.text.size());
    return out;
  }
  size_t k = 0;
  while (k < x.size() && shell_name_char(x[k])) ++k;
  const std::string name = x.substr(0, k);
  if (name.empty() || !(shell_name_start(name[0]) || std::all_of(name.begin(), name.end(), ::isdigit)))
    return marker("${" + x + "}", s, "an expansion specprobe does not evaluate");
  Value v;
  if (std::isdigit(static_cast<unsigned char>(name[0]))) {
    ShellExpansion sp;
    sp.name = name;
    v = name.size() == 1 ? special(sp, s) : marker("$" + name, s, "");
    if (has_unresolved(v.text)) v.unset = true;
  } else {
    v = lookup(name, s);
  }
  std::string rest = x.substr(k);
  if (!rest.empty() && rest[0] == '[') {  // arrays
    const size_t close = rest.find(']');
    const std::string idx = close == std::string::npos ? "" : rest.substr(1, close - 1);
    rest = close == std::string::npos ? "" : rest.substr(close + 1);
    if (!v.unset && v.is_list) {
      if (idx == "@" || idx == "*") {
        v.is_list = idx == "@";
        std::string joined;
        for (const auto& a : v.list) joined += (joined.empty() ? "" : " ") + a;
        v.text = joined;
      } else {
        int i = 0;
        auto [p, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), i);
        if (ec != std::errc() || p != idx.data() + idx.size() || i < 0 || static_cast<size_t>(i) >= v.list.size())
          return marker(name, s, "an array element specprobe cannot tell");
        v.text = v.list[static_cast<size_t>(i)];
        if (static_cast<size_t>(i) < v.list_offsets.size() &&
            v.list_offsets[static_cast<size_t>(i)].size() == v.text.size())
          v.offsets = v.list_offsets[static_cast<size_t>(i)];
        v.is_list = false;
      }
    } else if (!v.unset && idx != "0" && idx != "@" && idx != "*") {
      return marker(name, s, "an array element specprobe cannot tell");
    }
  } else if (v.is_list) {
    v.is_list = false;
  }
  if (rest.empty()) {
    if (v.unset) return marker(name, s, "not set in the file");
    return v;
  }
  const bool colon = rest[0] == ':';
  const size_t opk = colon ? 1 : 0;
  const char op = opk < rest.size() ? rest[opk] : '\0';
  const bool empty = !v.unset && v.text.empty() && !v.is_list;
  const bool unknown = !v.unset && has_unresolved(v.text);
  const size_t word_at = k + (rest.size() - rest.size()) + opk + 1;
  const std::string word = opk + 1 <= rest.size() ? rest.substr(opk + 1) : "";
  auto word_value = [&] { return expand_fragment(word, expr_offsets(k + opk + 1), s); };
  (void)word_at;
  switch (op) {
    case '-':
    case '=': {
      if (unknown) return v;
      if (!(v.unset || (colon && empty))) return v;
      Value d = word_value();
      if (op == '=') {
        ShellValue& sv = (*s.vars)[name];
        sv.text = d.text;
        sv.offsets = d.offsets;
      }
      return d;
    }
    case '?':
      if (v.unset || (colon && empty)) {
        const std::string msg = word.empty() ? "parameter null or not set" : word;
        return marker(name, s, fmt::format("required (${{{}:?...}}: {}) and not set in the file", name, msg));
      }
      return v;
    case '+': {
      if (unknown) return marker(name, s, "");
      if (v.unset || (colon && empty)) {
        Value none;
        none.unset = false;
        return none;
      }
      return word_value();
    }
    case '#':
    case '%': {
      if (v.unset) return marker(name, s, "not set in the file");
      if (unknown) return v;
      const bool longest = opk + 1 < rest.size() && rest[opk + 1] == op;
      const std::string pat = rest.substr(opk + (longest ? 2 : 1));
      if (has_unresolved(pat) || pat.find('$') != std::string::npos) return marker(name, s, "");
      Value out;
      out.unset = false;
      out.text = strip_pattern(v.text, pat, op == '#', longest);
      return out;
    }
    default:
      if (v.unset) return marker(name, s, "not set in the file");
      return marker(name, s, fmt::format("${{{}}} is an expansion specprobe does not evaluate", x));
  }
}

Value evaluate(const ShellExpansion& e, const ShellWord& w, Scope& s) {
  switch (e.kind) {
    case ShellExpansion::plain: {
      Value v = lookup(e.name, s);
      if (v.unset) return marker(e.name, s, "not set in the file");
      if (v.is_list) v.is_list = false;
      return v;
    }
    case ShellExpansion::special:
      return special(e, s);
    case ShellExpansion::braced:
      return braced(e, s, w);
    case ShellExpansion::arith: {
      if (auto r = eval_arith(e.expr, *s.vars)) {
        Value v;
        v.unset = false;
        v.text = std::to_string(*r);
        return v;
      }
      return marker("$((" + e.expr.substr(0, 40) + "))", s, "arithmetic over values specprobe cannot tell");
    }
    case ShellExpansion::command:
      break;
  }
  std::string shown = e.expr.substr(0, 40);
  for (char& c : shown)
    if (c == '\n' || c == kMarkOpen || c == kMarkClose) c = ' ';
  return marker("$(" + shown + (e.expr.size() > 40 ? "...)" : ")"), s, "a command substitution, never run");
}

void split_fields(const Built& b, const ShellWord& w, std::vector<ShellWord>& out) {
  ShellWord f;
  bool have = false;
  auto flush = [&] {
    if (have) {
      f.kind = ShellWord::word;
      f.quoted = w.quoted;
      f.unquoted_prefix = std::min(w.unquoted_prefix, f.text.size());
      f.end = f.offsets.empty() ? f.start : f.offsets.back() + 1;
      out.push_back(std::move(f));
    }
    f = ShellWord{};
    have = false;
  };
  int in_marker = 0;  // inside an unresolved value's marker: one unknown word, never split (SP1015 would
                      // read "$(seq -s ' ' 1 64)" as the words of a value)
  for (size_t k = 0; k < b.text.size(); ++k) {
    const char c = b.text[k];
    if (c == kMarkOpen) ++in_marker;
    if (c == kMarkClose && in_marker > 0) --in_marker;
    if (b.split[k] && in_marker == 0 && (c == ' ' || c == '\t' || c == '\n')) {
      flush();
      continue;
    }
    if (!have) f.start = b.offsets[k];
    have = true;
    f.text += c;
    f.offsets.push_back(b.offsets[k]);
  }
  flush();
}

}  // namespace

bool expand_word(const ShellWord& w, bool split, Scope& s, std::vector<ShellWord>& out) {
  if (w.expansions.empty()) {
    out.push_back(w);
    return true;
  }
  Built b;
  b.any_quoted = w.quoted;
  std::vector<ShellExpansion> ex = w.expansions;
  std::sort(ex.begin(), ex.end(), [](const auto& a, const auto& c) { return a.pos < c.pos; });
  size_t i = 0;
  for (const ShellExpansion& e : ex) {
    if (e.pos < i || e.pos + e.len > w.text.size()) continue;
    append(
        b, std::string_view(w.text).substr(i, e.pos - i),
        std::vector<uint32_t>(w.offsets.begin() + static_cast<long>(i), w.offsets.begin() + static_cast<long>(e.pos)),
        0, false);
    const uint32_t at = e.pos < w.offsets.size() ? w.offsets[e.pos] : static_cast<uint32_t>(w.start);
    Value v = evaluate(e, w, s);
    if (v.text.size() > *s.budget) return false;
    *s.budget -= v.text.size();
    if (v.is_list && e.quoted && ex.size() == 1 && e.pos == 0 && e.len == w.text.size()) {  // "$@", "${a[@]}"
      for (size_t k = 0; k < v.list.size(); ++k) {
        const std::string& item = v.list[k];
        ShellWord f;
        f.text = item;
        const bool placed = k < v.list_offsets.size() && v.list_offsets[k].size() == item.size() && !item.empty();
        if (placed)
          f.offsets = v.list_offsets[k];
        else
          f.offsets.assign(item.size(), at);
        f.start = placed ? f.offsets.front() : at;
        f.end = placed ? f.offsets.back() + 1 : at + 1;
        f.quoted = true;
        out.push_back(std::move(f));
      }
      return true;
    }
    append(b, v.text, v.offsets, at, split && !e.quoted);
    i = e.pos + e.len;
  }
  append(b, std::string_view(w.text).substr(i),
         std::vector<uint32_t>(w.offsets.begin() + static_cast<long>(std::min(i, w.offsets.size())), w.offsets.end()),
         0, false);
  if (!split) {
    ShellWord f = w;
    f.text = std::move(b.text);
    f.offsets = std::move(b.offsets);
    f.expansions.clear();
    f.unquoted_prefix = std::min(w.unquoted_prefix, f.text.size());
    out.push_back(std::move(f));
    return true;
  }
  const size_t before = out.size();
  split_fields(b, w, out);
  if (out.size() == before && w.quoted) {  // "" or "$EMPTY": one empty field
    ShellWord f = w;
    f.text.clear();
    f.offsets.clear();
    f.expansions.clear();
    out.push_back(std::move(f));
  }
  for (size_t k = before; k < out.size(); ++k) out[k].expansions.clear();
  return true;
}

ShellWord expand_single(const ShellWord& w, Scope& s) {
  std::vector<ShellWord> f;
  if (!expand_word(w, false, s, f) || f.empty()) {
    ShellWord e = w;
    e.text.clear();
    e.offsets.clear();
    e.expansions.clear();
    return e;
  }
  return f.front();
}

bool glob_match(std::string_view p, std::string_view s) {
  size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '[') {
      const size_t close = p.find(']', pi + 1);
      if (close != std::string_view::npos) {
        const std::string_view set = p.substr(pi + 1, close - pi - 1);
        bool neg = !set.empty() && (set[0] == '!' || set[0] == '^');
        bool hit = false;
        for (size_t k = neg ? 1 : 0; k < set.size(); ++k) {
          if (k + 2 < set.size() && set[k + 1] == '-') {
            hit |= s[si] >= set[k] && s[si] <= set[k + 2];
            k += 2;
          } else {
            hit |= s[si] == set[k];
          }
        }
        if (hit != neg) {
          pi = close + 1;
          ++si;
          continue;
        }
      }
    } else if (pi < p.size() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == s[si]))) {
      ++pi;
      ++si;
      continue;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = si;
      continue;
    }
    if (star == std::string_view::npos) return false;
    pi = star + 1;
    si = ++mark;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

namespace {

std::string unquote_pattern(const ShellWord& w) {
  // A quoted right-hand side of [[ == ]] matches literally; escape glob characters.
  if (!w.quoted) return w.text;
  std::string out;
  for (size_t k = 0; k < w.text.size(); ++k) {
    const char c = w.text[k];
    if (k >= w.unquoted_prefix && (c == '*' || c == '?' || c == '['))
      out += '[', out += c, out += ']';
    else
      out += c;
  }
  return out;
}

std::optional<long long> to_number(const std::string& s) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<bool> binary_test(const ShellWord& a, const std::string& op, const ShellWord& b, bool double_bracket) {
  if (has_unresolved(a.text) || has_unresolved(b.text)) return std::nullopt;
  if (op == "=" || op == "==") return double_bracket ? glob_match(unquote_pattern(b), a.text) : a.text == b.text;
  if (op == "!=") return double_bracket ? !glob_match(unquote_pattern(b), a.text) : a.text != b.text;
  const auto x = to_number(a.text), y = to_number(b.text);
  if (!x || !y) return std::nullopt;
  if (op == "-eq") return *x == *y;
  if (op == "-ne") return *x != *y;
  if (op == "-gt") return *x > *y;
  if (op == "-ge") return *x >= *y;
  if (op == "-lt") return *x < *y;
  if (op == "-le") return *x <= *y;
  return std::nullopt;
}

}  // namespace

std::optional<bool> eval_test(const std::vector<ShellWord>& words) {
  if (words.empty()) return std::nullopt;
  const std::string& head = words.front().text;
  if (head == "true" || head == ":") return true;
  if (head == "false") return false;
  std::vector<ShellWord> args(words.begin() + 1, words.end());
  const bool dbl = head == "[[";
  if (head == "[" || dbl) {
    if (args.empty() || args.back().text != (dbl ? "]]" : "]")) return std::nullopt;
    args.pop_back();
  } else if (head != "test") {
    return std::nullopt;
  }
  bool negate = false;
  if (!args.empty() && args.front().text == "!" && !args.front().quoted) {
    negate = true;
    args.erase(args.begin());
  }
  std::optional<bool> r;
  for (const auto& a : args)
    if (!a.quoted && (a.text == "&&" || a.text == "||" || a.text == "-a" || a.text == "-o")) return std::nullopt;
  if (args.size() == 1) {
    if (!has_unresolved(args[0].text)) r = !args[0].text.empty();
  } else if (args.size() == 2 && (args[0].text == "-n" || args[0].text == "-z")) {
    if (!has_unresolved(args[1].text)) r = args[0].text == "-n" ? !args[1].text.empty() : args[1].text.empty();
  } else if (args.size() == 3) {
    r = binary_test(args[0], args[1].text, args[2], dbl);
  } else if (args.empty()) {
    r = false;
  }
  if (r && negate) r = !*r;
  return r;
}

namespace {

struct Arith {
  std::string_view s;
  const ShellVars& vars;
  size_t i = 0;
  bool ok = true;
  int depth = 0;

  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  long long primary() {
    ws();
    if (i < s.size() && s[i] == '(') {
      ++i;
      if (++depth > 32) return ok = false, 0;
      const long long v = sum();
      --depth;
      ws();
      if (i < s.size() && s[i] == ')')
        ++i;
      else
        ok = false;
      return v;
    }
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
      const bool neg = s[i++] == '-';
      const long long v = primary();
      return neg ? -v : v;
    }
    if (i < s.size() && s[i] == '$') ++i;
    const size_t b = i;
    if (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      auto v = to_number(std::string(s.substr(b, i - b)));
      if (!v) ok = false;
      return v.value_or(0);
    }
    while (i < s.size() && shell_name_char(s[i])) ++i;
    const std::string name(s.substr(b, i - b));
    auto it = vars.find(name);
    if (name.empty() || it == vars.end() || it->second.is_array) return ok = false, 0;
    auto v = to_number(it->second.text);
    if (!v) ok = false;
    return v.value_or(0);
  }
  long long product() {
    long long v = primary();
    while (ok) {
      ws();
      if (i >= s.size() || (s[i] != '*' && s[i] != '/' && s[i] != '%')) break;
      const char op = s[i++];
      const long long r = primary();
      if (op == '*')
        v *= r;
      else if (r == 0)
        ok = false;
      else
        v = op == '/' ? v / r : v % r;
    }
    return v;
  }
  long long sum() {
    long long v = product();
    while (ok) {
      ws();
      if (i >= s.size() || (s[i] != '+' && s[i] != '-')) break;
      const char op = s[i++];
      const long long r = product();
      v = op == '+' ? v + r : v - r;
    }
    return v;
  }
};

}  // namespace

std::optional<long long> eval_arith(std::string_view expr, const ShellVars& vars) {
  if (expr.size() > 200 || has_unresolved(expr)) return std::nullopt;
  Arith a{expr, vars};
  const long long v = a.sum();
  a.ws();
  if (!a.ok || a.i != expr.size()) return std::nullopt;
  if (v > (1LL << 53) || v < -(1LL << 53)) return std::nullopt;
  return v;
}

}  // namespace shell
}  // namespace specprobe::serving
