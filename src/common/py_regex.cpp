// See py_regex.hpp for what is supported and why this is not std::regex.
#include "common/py_regex.hpp"
#include "common/ascii.hpp"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <set>

namespace specprobe {
namespace {

constexpr size_t kMaxPattern = 512;
constexpr size_t kMaxProgram = 4096;
constexpr int kMaxGroupDepth = 16;
constexpr int kMaxRepeat = 1000;

bool is_word(unsigned char c) {
  // Python's str patterns are Unicode-aware: a byte of a multi-byte UTF-8 character stands for a
  // letter here (names are UTF-8), which is what \w means for the scripts found in names.
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
bool is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

struct Node {
  enum Kind { empty, ch, any, cls, assert_, cat, alt, rep } kind = empty;
  unsigned char c = 0;
  uint32_t set = 0;      // cls: index into the class table
  int min = 0, max = 0;  // rep; max -1: unbounded
  std::vector<std::unique_ptr<Node>> kids;
};
using NodeP = std::unique_ptr<Node>;

struct Refused {
  std::string why;
};

class Parser {
 public:
  Parser(std::string_view p, std::vector<std::vector<bool>>& classes) : p_(p), classes_(classes) {}

  NodeP parse() {
    NodeP n = alternation(0);
    if (i_ < p_.size()) fail("unbalanced parenthesis");
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& why) { throw Refused{fmt::format("{} at position {}", why, i_)}; }
  bool more() const { return i_ < p_.size(); }
  char peek(size_t ahead = 0) const { return i_ + ahead < p_.size() ? p_[i_ + ahead] : '\0'; }

  NodeP alternation(int depth) {
    auto n = std::make_unique<Node>();
    n->kind = Node::alt;
    n->kids.push_back(sequence(depth));
    while (more() && peek() == '|') {
      ++i_;
      n->kids.push_back(sequence(depth));
    }
    return n->kids.size() == 1 ? std::move(n->kids[0]) : std::move(n);
  }

  NodeP sequence(int depth) {
    auto n = std::make_unique<Node>();
    n->kind = Node::cat;
    while (more() && peek() != '|' && peek() != ')') {
      NodeP a = atom(depth);
      const bool zero_width = a->kind == Node::assert_;
      int lo = 0, hi = 0;
      if (repeat_at(lo, hi)) {
        if (zero_width) fail("nothing to repeat");
        if (peek() == '+') fail("possessive repeat is not supported");
        if (peek() == '?') ++i_;  // lazy: the same set of matches
        int lo2 = 0, hi2 = 0;
        if (repeat_at(lo2, hi2)) fail("multiple repeat");
        auto r = std::make_unique<Node>();
        r->kind = Node::rep;
        r->min = lo;
        r->max = hi;
        r->kids.push_back(std::move(a));
        a = std::move(r);
      }
      n->kids.push_back(std::move(a));
    }
    return n;
  }

  // A repeat at i_ (consumed when found): *, +, ?, or a well-formed {m}, {m,}, {,n}, {m,n}
  // (Python reads any other '{' as a literal).
  bool repeat_at(int& lo, int& hi) {
    const char c = peek();
    if (c == '*' || c == '+' || c == '?') {
      ++i_;
      lo = c == '+' ? 1 : 0;
      hi = c == '?' ? 1 : -1;
      return true;
    }
    if (c != '{') return false;
    size_t j = i_ + 1;
    auto number = [&](int& v) {
      const size_t s = j;
      long long x = 0;
      while (j < p_.size() && is_ascii_digit(p_[j]) && j - s < 9) x = x * 10 + (p_[j++] - '0');
      if (j < p_.size() && is_ascii_digit(p_[j])) return false;  // too many digits for a repeat we take
      v = static_cast<int>(x);
      return j > s;
    };
    int a = 0, b = -1;
    const bool has_a = number(a);
    if (j < p_.size() && p_[j] == '}') {
      if (!has_a) return false;
      b = a;
    } else if (j < p_.size() && p_[j] == ',') {
      ++j;
      int v = 0;
      if (number(v)) b = v;
      if (j >= p_.size() || p_[j] != '}') return false;
    } else {
      return false;
    }
    i_ = j + 1;
    if (a > kMaxRepeat || b > kMaxRepeat) fail(fmt::format("repeat count over {}", kMaxRepeat));
    if (b >= 0 && b < a) fail("min repeat greater than max repeat");
    lo = a;
    hi = b;
    return true;
  }

  NodeP leaf(Node::Kind k, unsigned char c = 0, uint32_t cls = 0) {
    auto n = std::make_unique<Node>();
    n->kind = k;
    n->c = c;
    n->set = cls;
    return n;
  }

  uint32_t add_class(std::vector<bool> set) {
    classes_.push_back(std::move(set));
    return static_cast<uint32_t>(classes_.size() - 1);
  }

  static void add_shorthand(std::vector<bool>& set, char e) {
    for (int b = 0; b < 256; ++b) {
      const auto u = static_cast<unsigned char>(b);
      bool in = false;
      switch (e) {
        case 'd':
          in = is_ascii_digit(u);
          break;
        case 'D':
          in = !is_ascii_digit(u);
          break;
        case 'w':
          in = is_word(u);
          break;
        case 'W':
          in = !is_word(u);
          break;
        case 's':
          in = is_space(u);
          break;
        case 'S':
          in = !is_space(u);
          break;
      }
      if (in) set[b] = true;
    }
  }

  // The byte an escape \e stands for, for escapes that are one byte (inside and outside classes).
  std::optional<unsigned char> escaped_byte(char e) {
    switch (e) {
      case 't':
        return '\t';
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 'f':
        return '\f';
      case 'v':
        return '\v';
      case 'a':
        return '\a';
      case 'x': {
        auto hex = [](char h) {
          return is_ascii_digit(h) ? h - '0' : (h | 0x20) >= 'a' && (h | 0x20) <= 'f' ? (h | 0x20) - 'a' + 10 : -1;
        };
        const int h1 = hex(peek()), h2 = hex(peek(1));
        if (h1 < 0 || h2 < 0) fail("incomplete escape \\x");
        i_ += 2;
        return static_cast<unsigned char>(h1 * 16 + h2);
      }
    }
    if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || is_ascii_digit(e)) return std::nullopt;
    return static_cast<unsigned char>(e);
  }

  NodeP atom(int depth) {
    const char c = p_[i_++];
    switch (c) {
      case '(':
        return group(depth);
      case '[':
        return klass();
      case '.':
        return leaf(Node::any);
      case '^':
        return leaf(Node::assert_, '^');
      case '$':
        return leaf(Node::assert_, '$');
      case '*':
      case '+':
      case '?':
        --i_;
        fail("nothing to repeat");
      case '{': {
        --i_;
        int lo = 0, hi = 0;
        if (repeat_at(lo, hi)) fail("nothing to repeat");
        ++i_;
        return leaf(Node::ch, '{');
      }
      case '\\': {
        if (!more()) fail("bad escape (end of pattern)");
        const char e = p_[i_++];
        if (e == 'd' || e == 'D' || e == 'w' || e == 'W' || e == 's' || e == 'S') {
          std::vector<bool> set(256, false);
          add_shorthand(set, e);
          return leaf(Node::cls, 0, add_class(std::move(set)));
        }
        if (e == 'A' || e == 'Z' || e == 'b' || e == 'B') return leaf(Node::assert_, static_cast<unsigned char>(e));
        if (is_ascii_digit(e)) fail("backreferences are not supported");
        if (auto b = escaped_byte(e)) return leaf(Node::ch, *b);
        fail(fmt::format("unsupported escape \\{}", e));
      }
    }
    const auto lead = static_cast<unsigned char>(c);
    if (lead < 0xC0) return leaf(Node::ch, lead);
    // A multi-byte UTF-8 character is one atom, so that a repeat applies to all of it.
    auto n = std::make_unique<Node>();
    n->kind = Node::cat;
    n->kids.push_back(leaf(Node::ch, lead));
    while (more() && (static_cast<unsigned char>(peek()) & 0xC0) == 0x80)
      n->kids.push_back(leaf(Node::ch, static_cast<unsigned char>(p_[i_++])));
    return n;
  }

  NodeP group(int depth) {
    if (depth + 1 > kMaxGroupDepth) fail(fmt::format("groups nested deeper than {}", kMaxGroupDepth));
    if (peek() == '?') {
      if (peek(1) == ':') {
        i_ += 2;
      } else if (peek(1) == 'P' && peek(2) == '<') {
        i_ += 3;
        const size_t s = i_;
        while (more() && (is_word(static_cast<unsigned char>(peek())))) ++i_;
        if (i_ == s || peek() != '>') fail("bad group name");
        if (!names_.insert(std::string(p_.substr(s, i_ - s))).second) fail("redefinition of group name");
        ++i_;
      } else if (peek(1) == '=' || peek(1) == '!' || (peek(1) == '<' && (peek(2) == '=' || peek(2) == '!'))) {
        fail("lookaround is not supported");
      } else {
        fail("inline flags and (?P=...) are not supported");
      }
    }
    NodeP n = alternation(depth + 1);
    if (!more() || peek() != ')') fail("missing ), unterminated subpattern");
    ++i_;
    return n;
  }

  NodeP klass() {
    std::vector<bool> set(256, false);
    bool negate = false;
    if (peek() == '^') {
      negate = true;
      ++i_;
    }
    bool first = true;
    for (;;) {
      if (!more()) fail("unterminated character set");
      char c = p_[i_++];
      if (c == ']' && !first) break;
      first = false;
      int lo;
      if (c == '\\') {
        if (!more()) fail("bad escape (end of pattern)");
        const char e = p_[i_++];
        if (e == 'd' || e == 'D' || e == 'w' || e == 'W' || e == 's' || e == 'S') {
          add_shorthand(set, e);
          if (peek() == '-' && peek(1) != ']' && i_ + 1 < p_.size()) fail(fmt::format("bad character range \\{}-", e));
          continue;
        }
        if (e == 'b') {
          lo = '\b';
        } else if (auto b = escaped_byte(e)) {
          lo = *b;
        } else {
          fail(fmt::format("unsupported escape \\{} in a character set", e));
        }
      } else {
        lo = static_cast<unsigned char>(c);
      }
      int hi = lo;
      if (peek() == '-' && peek(1) != ']' && i_ + 1 < p_.size()) {
        ++i_;
        char d = p_[i_++];
        if (d == '\\') {
          if (!more()) fail("bad escape (end of pattern)");
          const char e = p_[i_++];
          auto b = escaped_byte(e);
          if (!b) fail(fmt::format("bad character range ending in \\{}", e));
          hi = *b;
        } else {
          hi = static_cast<unsigned char>(d);
        }
        if (hi < lo) fail("bad character range");
      }
      for (int b = lo; b <= hi; ++b) set[b] = true;
    }
    if (negate)
      for (int b = 0; b < 256; ++b) set[b] = !set[b];
    return leaf(Node::cls, 0, add_class(std::move(set)));
  }

  std::string_view p_;
  size_t i_ = 0;
  std::set<std::string> names_;
  std::vector<std::vector<bool>>& classes_;
};

class Compiler {
 public:
  explicit Compiler(std::vector<PyRegex::Inst>& prog) : prog_(prog) {}

  void emit(const Node& n) {
    using I = PyRegex::Inst;
    switch (n.kind) {
      case Node::empty:
        return;
      case Node::ch:
        push({I::ch, n.c});
        return;
      case Node::any:
        push({I::any});
        return;
      case Node::cls:
        push({I::cls, 0, n.set});
        return;
      case Node::assert_:
        push({I::assert_, n.c});
        return;
      case Node::cat:
        for (const NodeP& k : n.kids) emit(*k);
        return;
      case Node::alt: {
        std::vector<size_t> jumps;
        for (size_t k = 0; k < n.kids.size(); ++k) {
          if (k + 1 < n.kids.size()) {
            const size_t split = push({I::split});
            prog_[split].x = here();
            emit(*n.kids[k]);
            jumps.push_back(push({I::jmp}));
            prog_[split].y = here();
          } else {
            emit(*n.kids[k]);
          }
        }
        for (size_t j : jumps) prog_[j].x = here();
        return;
      }
      case Node::rep: {
        for (int k = 0; k < n.min; ++k) emit(*n.kids[0]);
        if (n.max < 0) {  // L: split body, out; body; jmp L
          const size_t split = push({I::split});
          prog_[split].x = here();
          emit(*n.kids[0]);
          push({I::jmp, 0, static_cast<uint32_t>(split)});
          prog_[split].y = here();
          return;
        }
        std::vector<size_t> splits;  // each optional copy may be skipped to the end
        for (int k = n.min; k < n.max; ++k) {
          splits.push_back(push({I::split}));
          prog_[splits.back()].x = here();
          emit(*n.kids[0]);
        }
        for (size_t s : splits) prog_[s].y = here();
        return;
      }
    }
  }

  size_t push(PyRegex::Inst inst) {
    if (prog_.size() >= kMaxProgram)
      throw Refused{fmt::format("pattern compiles to over {} instructions", kMaxProgram)};
    prog_.push_back(inst);
    return prog_.size() - 1;
  }

 private:
  uint32_t here() const { return static_cast<uint32_t>(prog_.size()); }
  std::vector<PyRegex::Inst>& prog_;
};

}  // namespace

std::variant<PyRegex, std::string> PyRegex::compile(std::string_view pattern) {
  if (pattern.size() > kMaxPattern) return fmt::format("pattern longer than {} bytes", kMaxPattern);
  PyRegex re;
  try {
    NodeP root = Parser(pattern, re.classes_).parse();
    Compiler c(re.prog_);
    c.emit(*root);
    c.push({Inst::done});
  } catch (const Refused& r) {
    return r.why;
  }
  return re;
}

bool PyRegex::match(std::string_view v) const {
  const size_t n = v.size();
  std::vector<uint32_t> clist, nlist, stack;
  std::vector<size_t> mark(prog_.size(), SIZE_MAX);  // the position a pc was last added at
  auto holds = [&](unsigned char a, size_t pos) {
    switch (a) {
      case '^':
      case 'A':
        return pos == 0;
      case '$':
        return pos == n || (pos + 1 == n && v[pos] == '\n');
      case 'Z':
        return pos == n;
      case 'b':
      case 'B': {
        const bool before = pos > 0 && is_word(static_cast<unsigned char>(v[pos - 1]));
        const bool after = pos < n && is_word(static_cast<unsigned char>(v[pos]));
        if (n == 0) return false;  // Python: neither \b nor \B matches in an empty string
        return (before != after) == (a == 'b');
      }
    }
    return false;
  };
  // Follows jumps, splits and assertions from pc at pos; true when the program can finish there.
  auto add = [&](std::vector<uint32_t>& list, uint32_t pc, size_t pos) {
    stack.assign(1, pc);
    while (!stack.empty()) {
      const uint32_t p = stack.back();
      stack.pop_back();
      if (mark[p] == pos) continue;
      mark[p] = pos;
      const Inst& in = prog_[p];
      switch (in.op) {
        case Inst::jmp:
          stack.push_back(in.x);
          break;
        case Inst::split:
          stack.push_back(in.y);
          stack.push_back(in.x);
          break;
        case Inst::assert_:
          if (holds(in.c, pos)) stack.push_back(p + 1);
          break;
        case Inst::done:
          return true;
        default:
          list.push_back(p);
      }
    }
    return false;
  };
  if (add(clist, 0, 0)) return true;
  for (size_t pos = 0; pos < n && !clist.empty(); ++pos) {
    const auto b = static_cast<unsigned char>(v[pos]);
    nlist.clear();
    for (uint32_t p : clist) {
      const Inst& in = prog_[p];
      const bool step = (in.op == Inst::ch && in.c == b) || (in.op == Inst::any && b != '\n') ||
                        (in.op == Inst::cls && classes_[in.x][b]);
      if (step && add(nlist, p + 1, pos + 1)) return true;
    }
    clist.swap(nlist);
  }
  return false;
}

}  // namespace specprobe
