// PEP 440 parsing, ordering and specifier matching (see version.hpp for the contract).
// A hand-written scanner rather than std::regex: it runs for every "ver*" operator of every
// rule evaluation, and std::regex is both slow and recursive.
#include "common/version.hpp"
#include "common/ascii.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace specprobe {
namespace {

constexpr std::size_t kMaxDigits = 18;  // fits std::uint64_t without overflow checks

bool is_alnum(char c) { return is_ascii_digit(c) || (c >= 'a' && c <= 'z'); }
bool is_sep(char c) { return c == '.' || c == '-' || c == '_'; }
bool is_hex(char c) { return is_ascii_digit(c) || (c >= 'a' && c <= 'f'); }

// Cursor over the lower-cased text. Each try_* either consumes what it matched or nothing.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  bool done() const { return i_ == s_.size(); }
  bool failed() const { return failed_; }
  char peek(std::size_t ahead = 0) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }
  std::size_t pos() const { return i_; }
  void reset(std::size_t pos) { i_ = pos; }

  bool try_char(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  bool try_sep() {
    if (!is_sep(peek())) return false;
    ++i_;
    return true;
  }
  bool try_word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  // Digits as a number; nullopt when there are none. Too many digits marks the scan failed.
  std::optional<std::uint64_t> try_number() {
    std::size_t start = i_;
    std::uint64_t n = 0;
    while (is_ascii_digit(peek())) {
      n = n * 10 + static_cast<std::uint64_t>(peek() - '0');
      ++i_;
    }
    if (i_ == start) return std::nullopt;
    if (i_ - start > kMaxDigits) failed_ = true;
    return n;
  }
  std::string_view rest() const { return s_.substr(i_); }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
  bool failed_ = false;
};

// "[sep]word[sep]N" with N optional (0); the first matching word wins, so longer spellings
// come first. Returns the index of the word in `words`.
std::optional<std::pair<std::size_t, std::uint64_t>> try_labelled(Scanner& sc,
                                                                  std::initializer_list<std::string_view> words) {
  const std::size_t start = sc.pos();
  sc.try_sep();
  std::size_t index = 0;
  for (std::string_view w : words) {
    if (sc.try_word(w)) {
      const std::size_t after_word = sc.pos();
      const bool sep = sc.try_sep();
      std::optional<std::uint64_t> n = sc.try_number();
      if (!n && sep) sc.reset(after_word);  // the separator belongs to the next part
      return std::pair{index, n.value_or(0)};
    }
    ++index;
  }
  sc.reset(start);
  return std::nullopt;
}

int compare_u64(std::uint64_t a, std::uint64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

// Digit strings of any length, numerically.
int compare_digits(std::string_view a, std::string_view b) {
  while (a.size() > 1 && a.front() == '0') a.remove_prefix(1);
  while (b.size() > 1 && b.front() == '0') b.remove_prefix(1);
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

bool all_digits(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_ascii_digit); }

int compare_release(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t x = i < a.size() ? a[i] : 0;
    const std::uint64_t y = i < b.size() ? b[i] : 0;
    if (int c = compare_u64(x, y)) return c;
  }
  return 0;
}

// PEP 440's pre-release key: dev-only releases sort before any pre-release, finals after.
std::pair<int, std::uint64_t> pre_key(const Version& v) {
  if (!v.pre && !v.post && v.dev) return {-1, 0};
  if (!v.pre) return {3, 0};
  return {static_cast<int>(v.pre->kind), v.pre->number};
}

int compare_local(const Version& a, const Version& b) {
  if (a.local.empty() || b.local.empty()) {
    return a.local.empty() == b.local.empty() ? 0 : (a.local.empty() ? -1 : 1);
  }
  const std::vector<std::string> x = a.local_segments();
  const std::vector<std::string> y = b.local_segments();
  const std::size_t n = std::min(x.size(), y.size());
  for (std::size_t i = 0; i < n; ++i) {
    const bool xn = all_digits(x[i]);
    const bool yn = all_digits(y[i]);
    int c = 0;
    if (xn && yn) {
      c = compare_digits(x[i], y[i]);
    } else if (xn != yn) {
      c = xn ? 1 : -1;  // numbers sort after strings
    } else {
      const int s = x[i].compare(y[i]);
      c = s < 0 ? -1 : (s > 0 ? 1 : 0);
    }
    if (c != 0) return c;
  }
  return compare_u64(x.size(), y.size());
}

int compare(const Version& a, const Version& b) {
  if (int c = compare_u64(a.epoch, b.epoch)) return c;
  if (int c = compare_release(a.release, b.release)) return c;
  const auto pa = pre_key(a);
  const auto pb = pre_key(b);
  if (pa != pb) return pa < pb ? -1 : 1;
  const std::pair<int, std::uint64_t> posta{a.post ? 1 : 0, a.post.value_or(0)};
  const std::pair<int, std::uint64_t> postb{b.post ? 1 : 0, b.post.value_or(0)};
  if (posta != postb) return posta < postb ? -1 : 1;
  const std::pair<int, std::uint64_t> deva{a.dev ? 0 : 1, a.dev.value_or(0)};
  const std::pair<int, std::uint64_t> devb{b.dev ? 0 : 1, b.dev.value_or(0)};
  if (deva != devb) return deva < devb ? -1 : 1;
  return compare_local(a, b);
}

bool release_prefix_matches(const Version& v, const Version& prefix) {
  if (v.epoch != prefix.epoch) return false;
  for (std::size_t i = 0; i < prefix.release.size(); ++i) {
    const std::uint64_t x = i < v.release.size() ? v.release[i] : 0;
    if (x != prefix.release[i]) return false;
  }
  return true;
}

bool has_suffix_parts(const Version& v) { return v.pre || v.post || v.dev || !v.local.empty(); }

}  // namespace

std::vector<std::string> Version::local_segments() const {
  std::vector<std::string> out;
  std::string cur;
  for (char c : local) {
    if (is_sep(c)) {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!local.empty()) out.push_back(std::move(cur));
  return out;
}

std::optional<std::string> Version::git_hash() const {
  for (const std::string& seg : local_segments()) {
    std::string_view s = seg;
    bool prefixed = false;
    if (s.size() > 1 && s.front() == 'g') {
      s.remove_prefix(1);
      prefixed = true;
    }
    if (s.size() < 7 || s.size() > 40 || !std::all_of(s.begin(), s.end(), is_hex)) continue;
    const bool has_letter = std::any_of(s.begin(), s.end(), [](char c) { return !is_ascii_digit(c); });
    if (prefixed || has_letter) return std::string(s);
  }
  return std::nullopt;
}

std::string Version::str() const {
  std::string out;
  if (epoch != 0) out += fmt::format("{}!", epoch);
  for (std::size_t i = 0; i < release.size(); ++i) {
    if (i != 0) out += '.';
    out += fmt::format("{}", release[i]);
  }
  if (pre) {
    static constexpr std::array<std::string_view, 3> kNames{"a", "b", "rc"};
    out += fmt::format("{}{}", kNames[static_cast<std::size_t>(pre->kind)], pre->number);
  }
  if (post) out += fmt::format(".post{}", *post);
  if (dev) out += fmt::format(".dev{}", *dev);
  if (!local.empty()) {
    out += '+';
    for (char c : local) out += is_sep(c) ? '.' : c;
  }
  return out;
}

Version Version::public_version() const {
  Version v = *this;
  v.local.clear();
  return v;
}

std::optional<Version> parse_version(std::string_view text) {
  const std::string s = ascii_lower(ascii_trim(text));
  Scanner sc(s);
  Version v;
  sc.try_char('v');

  std::optional<std::uint64_t> first = sc.try_number();
  if (!first) return std::nullopt;
  if (sc.try_char('!')) {
    v.epoch = *first;
    first = sc.try_number();
    if (!first) return std::nullopt;
  }
  v.release.push_back(*first);
  while (sc.peek() == '.' && is_ascii_digit(sc.peek(1))) {
    sc.try_char('.');
    v.release.push_back(*sc.try_number());
  }

  if (auto pre = try_labelled(sc, {"alpha", "a", "beta", "b", "preview", "pre", "c", "rc"})) {
    static constexpr std::array<Version::PreKind, 8> kKinds{
        Version::PreKind::alpha, Version::PreKind::alpha, Version::PreKind::beta, Version::PreKind::beta,
        Version::PreKind::rc,    Version::PreKind::rc,    Version::PreKind::rc,   Version::PreKind::rc};
    v.pre = Version::Pre{kKinds[pre->first], pre->second};
  }

  // Implicit post release: "1.0-1".
  const std::size_t before_post = sc.pos();
  if (sc.peek() == '-' && is_ascii_digit(sc.peek(1))) {
    sc.try_char('-');
    v.post = sc.try_number();
  } else {
    sc.reset(before_post);
    if (auto post = try_labelled(sc, {"post", "rev", "r"})) v.post = post->second;
  }

  if (auto dev = try_labelled(sc, {"dev"})) v.dev = dev->second;

  if (sc.try_char('+')) {
    const std::string_view local = sc.rest();
    bool prev_sep = true;  // a label may not start or end with a separator, nor repeat one
    for (char c : local) {
      if (is_sep(c)) {
        if (prev_sep) return std::nullopt;
        prev_sep = true;
      } else if (is_alnum(c)) {
        prev_sep = false;
      } else {
        return std::nullopt;
      }
    }
    if (prev_sep) return std::nullopt;
    v.local = std::string(local);
    sc.reset(s.size());
  }

  if (!sc.done() || sc.failed()) return std::nullopt;
  return v;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
  const int c = compare(a, b);
  return c < 0 ? std::strong_ordering::less : (c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal);
}

bool operator==(const Version& a, const Version& b) { return compare(a, b) == 0; }

Expected<SpecifierSet> parse_specifiers(std::string_view text) {
  SpecifierSet set;
  const std::string_view whole = ascii_trim(text);
  if (whole.empty()) return set;

  std::size_t start = 0;
  while (start <= whole.size()) {
    std::size_t comma = whole.find(',', start);
    if (comma == std::string_view::npos) comma = whole.size();
    const std::string_view clause = ascii_trim(whole.substr(start, comma - start));
    start = comma + 1;

    if (clause.empty()) return input_error(fmt::format("empty version specifier in '{}'", whole));
    static constexpr std::array<std::pair<std::string_view, Specifier::Op>, 8> kOps{{
        {"===", Specifier::Op::arbitrary},
        {"~=", Specifier::Op::compatible},
        {"==", Specifier::Op::eq},
        {"!=", Specifier::Op::ne},
        {"<=", Specifier::Op::le},
        {">=", Specifier::Op::ge},
        {"<", Specifier::Op::lt},
        {">", Specifier::Op::gt},
    }};
    Specifier spec;
    spec.text = std::string(clause);
    std::string_view rest;
    bool found = false;
    for (const auto& [name, op] : kOps) {
      if (clause.substr(0, name.size()) == name) {
        spec.op = op;
        rest = ascii_trim(clause.substr(name.size()));
        found = true;
        break;
      }
    }
    if (!found) {
      return input_error(fmt::format("version specifier '{}' has no operator (==, !=, <, <=, >, >=, ~=)", clause));
    }
    if (spec.op == Specifier::Op::arbitrary) {
      if (rest.empty()) return input_error(fmt::format("version specifier '{}' has no version", clause));
      set.specifiers.push_back(std::move(spec));
      continue;
    }
    if (rest.size() >= 2 && rest.substr(rest.size() - 2) == ".*") {
      if (spec.op != Specifier::Op::eq && spec.op != Specifier::Op::ne) {
        return input_error(fmt::format("version specifier '{}': '.*' only goes with == and !=", clause));
      }
      spec.wildcard = true;
      rest.remove_suffix(2);
    }
    std::optional<Version> v = parse_version(rest);
    if (!v) return input_error(fmt::format("version specifier '{}' does not hold a PEP 440 version", clause));
    if (spec.wildcard && has_suffix_parts(*v)) {
      return input_error(fmt::format("version specifier '{}': '.*' must follow the release numbers", clause));
    }
    if (spec.op == Specifier::Op::compatible && (v->release.size() < 2 || !v->local.empty())) {
      return input_error(fmt::format("version specifier '{}': ~= needs at least two release numbers", clause));
    }
    spec.version = std::move(*v);
    set.specifiers.push_back(std::move(spec));
  }
  return set;
}

bool satisfies(const Version& v, const Specifier& spec) {
  const Version& target = spec.version;
  switch (spec.op) {
    case Specifier::Op::eq:
    case Specifier::Op::ne: {
      bool equal = false;
      if (spec.wildcard) {
        equal = release_prefix_matches(v, target);
      } else if (target.local.empty()) {
        equal = compare(v.public_version(), target) == 0;
      } else {
        equal = compare(v, target) == 0;
      }
      return spec.op == Specifier::Op::eq ? equal : !equal;
    }
    case Specifier::Op::lt:
      return compare(v.public_version(), target) < 0;
    case Specifier::Op::le:
      return compare(v.public_version(), target) <= 0;
    case Specifier::Op::gt:
      return compare(v.public_version(), target) > 0;
    case Specifier::Op::ge:
      return compare(v.public_version(), target) >= 0;
    case Specifier::Op::compatible: {
      if (compare(v.public_version(), target) < 0) return false;
      Version prefix;
      prefix.epoch = target.epoch;
      prefix.release.assign(target.release.begin(), target.release.end() - 1);
      return release_prefix_matches(v, prefix);
    }
    case Specifier::Op::arbitrary: {
      const std::string_view want = ascii_trim(std::string_view(spec.text).substr(3));
      return ascii_lower(want) == v.str();
    }
  }
  return false;
}

bool satisfies(const Version& v, const SpecifierSet& set) {
  return std::all_of(set.specifiers.begin(), set.specifiers.end(), [&](const Specifier& s) { return satisfies(v, s); });
}

bool version_satisfies(std::string_view version, std::string_view specifiers) {
  const std::optional<Version> v = parse_version(version);
  if (!v) return false;
  const Expected<SpecifierSet> set = parse_specifiers(specifiers);
  if (!set) return false;
  return satisfies(*v, *set);
}

}  // namespace specprobe
