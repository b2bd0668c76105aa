// JSON Logic evaluator (see jsonlogic.hpp for the contract and the deliberate differences from
// json-logic-js). Evaluation reads the data document in place: "var" returns a reference into
// it, and only values an operator builds are owned. Errors are sticky in the Evaluator so the
// hot path carries no Expected<> per node.
#include "rules/jsonlogic.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "common/version.hpp"

namespace specprobe::jsonlogic {
// Internal to this file; a named namespace because Program::Compiled holds a compiled tree.
namespace detail {

using json = nlohmann::json;

constexpr int kMaxValueDepth = 256;                     // nesting of data values walked by equality and ToString
constexpr double kMaxSafeInteger = 9007199254740992.0;  // 2^53

// ---------------------------------------------------------------------------------------------
// Operators

enum class Op {
  var,
  missing,
  missing_some,
  if_,
  eq,
  strict_eq,
  ne,
  strict_ne,
  lt,
  le,
  gt,
  ge,
  not_,
  double_not,
  and_,
  or_,
  in,
  cat,
  substr,
  add,
  sub,
  mul,
  div,
  mod,
  min,
  max,
  merge,
  all,
  some,
  none,
  map,
  filter,
  reduce,
  log,
  ver_lt,
  ver_le,
  ver_gt,
  ver_ge,
  ver_eq,
  ver_ne,
  ver_in,
  ver_known,
};

constexpr int kAny = -1;

struct OpInfo {
  std::string_view name;
  Op op;
  int min_args;  // checked by validate() only; evaluation is as lenient as json-logic-js
  int max_args;  // kAny: unbounded
};

constexpr OpInfo kOps[] = {
    {"var", Op::var, 0, 2},
    {"missing", Op::missing, 0, kAny},
    {"missing_some", Op::missing_some, 2, 2},
    {"if", Op::if_, 0, kAny},
    {"?:", Op::if_, 0, kAny},
    {"==", Op::eq, 2, 2},
    {"===", Op::strict_eq, 2, 2},
    {"!=", Op::ne, 2, 2},
    {"!==", Op::strict_ne, 2, 2},
    {"<", Op::lt, 2, 3},
    {"<=", Op::le, 2, 3},
    {">", Op::gt, 2, 2},
    {">=", Op::ge, 2, 2},
    {"!", Op::not_, 1, 1},
    {"!!", Op::double_not, 1, 1},
    {"and", Op::and_, 1, kAny},
    {"or", Op::or_, 1, kAny},
    {"in", Op::in, 2, 2},
    {"cat", Op::cat, 0, kAny},
    {"substr", Op::substr, 2, 3},
    {"+", Op::add, 0, kAny},
    {"-", Op::sub, 1, 2},
    {"*", Op::mul, 1, kAny},
    {"/", Op::div, 2, 2},
    {"%", Op::mod, 2, 2},
    {"min", Op::min, 0, kAny},
    {"max", Op::max, 0, kAny},
    {"merge", Op::merge, 0, kAny},
    {"all", Op::all, 2, 2},
    {"some", Op::some, 2, 2},
    {"none", Op::none, 2, 2},
    {"map", Op::map, 2, 2},
    {"filter", Op::filter, 2, 2},
    {"reduce", Op::reduce, 2, 3},
    {"log", Op::log, 1, 1},
    {"ver<", Op::ver_lt, 2, 2},
    {"ver<=", Op::ver_le, 2, 2},
    {"ver>", Op::ver_gt, 2, 2},
    {"ver>=", Op::ver_ge, 2, 2},
    {"ver==", Op::ver_eq, 2, 2},
    {"ver!=", Op::ver_ne, 2, 2},
    {"ver_in", Op::ver_in, 2, 2},
    {"ver_known", Op::ver_known, 1, 1},
};

const OpInfo* find_op(std::string_view name) {
  static const std::unordered_map<std::string_view, const OpInfo*> table = [] {
    std::unordered_map<std::string_view, const OpInfo*> t;
    for (const OpInfo& info : kOps) t.emplace(info.name, &info);
    return t;
  }();
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

bool is_scoped(Op op) {
  return op == Op::all || op == Op::some || op == Op::none || op == Op::map || op == Op::filter || op == Op::reduce;
}

// The argument list of an operation as written: {"op": [a, b]} or the unary shorthand {"op": a}.
struct Args {
  const json* raw = nullptr;
  bool single = false;

  explicit Args(const json& value) : raw(&value), single(!value.is_array()) {}
  std::size_t size() const { return single ? 1 : raw->size(); }
  const json& operator[](std::size_t i) const { return single ? *raw : (*raw)[i]; }
};

// ---------------------------------------------------------------------------------------------
// JavaScript coercions

enum class Kind { null, boolean, number, string, array, object };

Kind kind_of(const json& v) {
  switch (v.type()) {
    case json::value_t::boolean:
      return Kind::boolean;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return Kind::number;
    case json::value_t::string:
      return Kind::string;
    case json::value_t::array:
      return Kind::array;
    case json::value_t::object:
      return Kind::object;
    default:
      return Kind::null;  // null, discarded, binary
  }
}

bool is_js_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim_js(std::string_view s) {
  while (!s.empty() && is_js_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_js_space(s.back())) s.remove_suffix(1);
  return s;
}

double nan() { return std::numeric_limits<double>::quiet_NaN(); }
double inf() { return std::numeric_limits<double>::infinity(); }

double number_of(const json& v) {
  switch (v.type()) {
    case json::value_t::number_integer:
      return static_cast<double>(v.get<std::int64_t>());
    case json::value_t::number_unsigned:
      return static_cast<double>(v.get<std::uint64_t>());
    default:
      return v.get<double>();
  }
}

// A full decimal literal ("1.5e3", ".5", "5."); nullopt when s is not exactly one.
std::optional<double> parse_decimal(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (!(s.front() >= '0' && s.front() <= '9') && s.front() != '.') return std::nullopt;  // no inf/nan
  double d = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) {
    // Overflow or underflow: the sign of the magnitude decides, as in JavaScript.
    const bool tiny =
        s.find_first_of("eE") != std::string_view::npos && s.find('-', s.find_first_of("eE")) != std::string_view::npos;
    return tiny ? 0.0 : inf();
  }
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return d;
}

// JavaScript Number(string).
double string_to_number(std::string_view text) {
  std::string_view s = trim_js(text);
  if (s.empty()) return 0;
  if (s.size() > 2 && s[0] == '0') {
    int base = 0;
    if (s[1] == 'x' || s[1] == 'X') base = 16;
    if (s[1] == 'o' || s[1] == 'O') base = 8;
    if (s[1] == 'b' || s[1] == 'B') base = 2;
    if (base != 0) {
      double n = 0;
      for (char c : s.substr(2)) {
        int digit = -1;
        if (c >= '0' && c <= '9') digit = c - '0';
        if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
        if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
        if (digit < 0 || digit >= base) return nan();
        n = n * base + digit;
      }
      return n;
    }
  }
  double sign = 1;
  if (s.front() == '+' || s.front() == '-') {
    sign = s.front() == '-' ? -1 : 1;
    s.remove_prefix(1);
  }
  if (s == "Infinity") return sign * inf();
  std::optional<double> d = parse_decimal(s);
  return d ? sign * *d : nan();
}

// JavaScript parseFloat(string): the longest decimal prefix after leading white space.
double parse_float_prefix(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && is_js_space(s.front())) s.remove_prefix(1);
  double sign = 1;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    sign = s.front() == '-' ? -1 : 1;
    s.remove_prefix(1);
  }
  if (s.substr(0, 8) == "Infinity") return sign * inf();
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0;
  std::size_t digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return nan();
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (j < s.size() && is_digit(s[j])) {
      while (j < s.size() && is_digit(s[j])) ++j;
      i = j;
    }
  }
  std::string_view literal = s.substr(0, i);
  if (literal.back() == '.') literal.remove_suffix(1);
  if (literal.front() == '.') {
    std::string padded = "0" + std::string(literal);
    return sign * parse_decimal(padded).value_or(nan());
  }
  return sign * parse_decimal(literal).value_or(nan());
}

// JavaScript Number#toString for doubles.
std::string js_number_string(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  if (d == 0) return "0";
  char buf[64];
  const double mag = std::fabs(d);
  if (mag >= 1e-6 && mag < 1e21) {
    auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
    return std::string(buf, r.ptr);
  }
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string s(buf, r.ptr);
  // C++ writes "1e-07" / "1e+21"; JavaScript writes "1e-7" / "1e+21".
  std::size_t e = s.find('e');
  if (e != std::string::npos && e + 2 < s.size()) {
    std::size_t digits = e + 2;
    while (digits + 1 < s.size() && s[digits] == '0') s.erase(digits, 1);
  }
  return s;
}

std::string js_number_string(const json& v) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  return js_number_string(v.get<double>());
}

// Guard for recursion over data values (deeply nested arrays in the facts).
struct DepthGuard {
  bool overflow = false;
  bool enter(int depth) {
    if (depth > kMaxValueDepth) overflow = true;
    return !overflow;
  }
};

// JavaScript String(v), with Array#join's rule that null elements become "". `top` is false for
// array elements.
void append_js_string(std::string& out, const json& v, DepthGuard& g, int depth, bool top) {
  if (!g.enter(depth)) return;
  switch (kind_of(v)) {
    case Kind::null:
      if (top) out += "null";
      return;
    case Kind::boolean:
      out += v.get<bool>() ? "true" : "false";
      return;
    case Kind::number:
      out += js_number_string(v);
      return;
    case Kind::string:
      out += v.get_ref<const std::string&>();
      return;
    case Kind::array: {
      bool first = true;
      for (const json& e : v) {
        if (!first) out += ',';
        first = false;
        append_js_string(out, e, g, depth + 1, false);
      }
      return;
    }
    case Kind::object:
      out += "[object Object]";
      return;
  }
}

std::string js_string(const json& v, DepthGuard& g) {
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  append_js_string(out, v, g, 0, true);
  return out;
}

// JavaScript Number(v).
double js_number(const json& v, DepthGuard& g) {
  switch (kind_of(v)) {
    case Kind::null:
      return 0;
    case Kind::boolean:
      return v.get<bool>() ? 1 : 0;
    case Kind::number:
      return number_of(v);
    case Kind::string:
      return string_to_number(v.get_ref<const std::string&>());
    case Kind::array:
      return string_to_number(js_string(v, g));
    case Kind::object:
      return nan();
  }
  return nan();
}

// JavaScript parseFloat(v) (used by "+" and "*").
double js_parse_float(const json& v, DepthGuard& g) {
  if (v.is_number()) return number_of(v);
  if (v.is_string()) return parse_float_prefix(v.get_ref<const std::string&>());
  return parse_float_prefix(js_string(v, g));
}

// JavaScript ToIntegerOrInfinity.
double js_integer(double d) {
  if (std::isnan(d)) return 0;
  return std::trunc(d);
}

json make_number(double d) {
  if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) <= kMaxSafeInteger) {
    return json(static_cast<std::int64_t>(d));
  }
  return json(d);
}

bool numbers_equal(const json& a, const json& b) {
  if (a.is_number_integer() && b.is_number_integer()) {
    if (a.is_number_unsigned() == b.is_number_unsigned()) return a == b;
  }
  return number_of(a) == number_of(b);
}

bool strict_eq(const json& a, const json& b, DepthGuard& g, int depth) {
  if (!g.enter(depth)) return false;
  const Kind ka = kind_of(a);
  if (ka != kind_of(b)) return false;
  switch (ka) {
    case Kind::null:
      return true;
    case Kind::boolean:
      return a.get<bool>() == b.get<bool>();
    case Kind::number:
      return numbers_equal(a, b);
    case Kind::string:
      return a.get_ref<const std::string&>() == b.get_ref<const std::string&>();
    case Kind::array: {
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!strict_eq(a[i], b[i], g, depth + 1)) return false;
      }
      return true;
    }
    case Kind::object: {
      if (a.size() != b.size()) return false;
      for (auto it = a.begin(); it != a.end(); ++it) {
        auto other = b.find(it.key());
        if (other == b.end() || !strict_eq(it.value(), *other, g, depth + 1)) return false;
      }
      return true;
    }
  }
  return false;
}

// JavaScript abstract equality.
bool loose_eq(const json& a, const json& b, DepthGuard& g) {
  const Kind ka = kind_of(a);
  const Kind kb = kind_of(b);
  if (ka == kb) return strict_eq(a, b, g, 0);
  if (ka == Kind::null || kb == Kind::null) return false;
  const bool a_obj = ka == Kind::array || ka == Kind::object;
  const bool b_obj = kb == Kind::array || kb == Kind::object;
  if (a_obj && b_obj) return false;
  if (a_obj) return loose_eq(json(js_string(a, g)), b, g);
  if (b_obj) return loose_eq(a, json(js_string(b, g)), g);
  // Two primitives of different kinds among boolean, number, string: both go to numbers.
  return js_number(a, g) == js_number(b, g);
}

// JavaScript abstract relational comparison: nullopt when either side is NaN.
std::optional<int> js_compare(const json& a, const json& b, DepthGuard& g) {
  if (a.is_number() && b.is_number()) {
    if (a.is_number_integer() && b.is_number_integer() && a.is_number_unsigned() == b.is_number_unsigned()) {
      return a < b ? -1 : (b < a ? 1 : 0);
    }
    const double x = number_of(a);
    const double y = number_of(b);
    if (std::isnan(x) || std::isnan(y)) return std::nullopt;
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  const bool a_obj = a.is_array() || a.is_object();
  const bool b_obj = b.is_array() || b.is_object();
  const json pa = a_obj ? json(js_string(a, g)) : json();
  const json pb = b_obj ? json(js_string(b, g)) : json();
  const json& x = a_obj ? pa : a;
  const json& y = b_obj ? pb : b;
  if (x.is_string() && y.is_string()) {
    const int c = x.get_ref<const std::string&>().compare(y.get_ref<const std::string&>());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  const double nx = js_number(x, g);
  const double ny = js_number(y, g);
  if (std::isnan(nx) || std::isnan(ny)) return std::nullopt;
  return nx < ny ? -1 : (nx > ny ? 1 : 0);
}

// "0", "17": the property names that index an array. "01", "-1", "1.0" do not.
std::optional<std::size_t> array_index(std::string_view s) {
  if (s.empty() || s.size() > 15 || (s.size() > 1 && s.front() == '0')) return std::nullopt;
  std::size_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// Compilation: the logic as a tree whose operators are resolved and whose literal "var" paths are
// split once, so that a rule evaluated in every cell of the sweep pays neither again (issue 49).
// The tree mirrors the JSON node for node (same depths, same evaluation order), so a compiled
// evaluation is the interpretation of the same logic, step for step.

// One step of a literal "var" path ("a.b.0" -> "a", "b", "0").
struct Segment {
  std::string_view name;
  std::optional<std::size_t> index;  // array_index(name)
};

struct Node {
  enum class Kind : std::uint8_t { literal, array, op, unknown_op, too_deep };
  // How a "var" names what it reads: a literal path split at compile time, the whole document
  // (null or ""), or a value computed when evaluated.
  enum class VarName : std::uint8_t { dynamic, whole, path };
  Kind kind = Kind::literal;
  VarName var = VarName::dynamic;
  const json* value = nullptr;   // literal (an array of scalars included): the value itself
  const OpInfo* info = nullptr;  // op
  std::string_view key;          // unknown_op: the operator as written
  std::vector<Node> args;        // op: its arguments ({"op": a} is one); array: its elements
  std::vector<Segment> path;     // var with VarName::path
};
using NodeArgs = std::vector<Node>;

std::vector<Segment> split_path(std::string_view path) {
  std::vector<Segment> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string_view seg =
        path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    out.push_back({seg, array_index(seg)});
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return out;
}

// LOGIC (which must outlive the tree) compiled; nodes past MAX_DEPTH are not compiled: evaluation
// fails on reaching that depth, as it does interpreting.
// Whether NODE reads only literally named data (Program::closed), outside per-item logic.
bool reads_literal_names(const Node& n) {
  if (n.kind == Node::Kind::array)
    return std::all_of(n.args.begin(), n.args.end(), [](const Node& a) { return reads_literal_names(a); });
  if (n.kind == Node::Kind::too_deep) return false;
  if (n.kind != Node::Kind::op) return true;
  auto literal_names = [](const Node& a) {
    if (a.kind != Node::Kind::literal) return false;
    if (a.value->is_string()) return !a.value->get_ref<const std::string&>().empty();
    return a.value->is_array() && std::all_of(a.value->begin(), a.value->end(), [](const json& e) {
             return e.is_string() && !e.get_ref<const std::string&>().empty();
           });
  };
  switch (n.info->op) {
    case Op::var:
      return n.var == Node::VarName::path && (n.args.size() < 2 || reads_literal_names(n.args[1]));
    case Op::missing:
      return std::all_of(n.args.begin(), n.args.end(), literal_names);
    case Op::missing_some:
      return n.args.size() == 2 && reads_literal_names(n.args[0]) && literal_names(n.args[1]);
    default:
      break;
  }
  if (is_scoped(n.info->op)) {
    // The body reads the items; the source (and reduce's initial value) read the data.
    if (!n.args.empty() && !reads_literal_names(n.args[0])) return false;
    return !(n.info->op == Op::reduce && n.args.size() > 2 && !reads_literal_names(n.args[2]));
  }
  return std::all_of(n.args.begin(), n.args.end(), [](const Node& a) { return reads_literal_names(a); });
}

Node compile_node(const json& logic, int depth, int max_depth) {
  Node n;
  if (depth > max_depth) {
    n.kind = Node::Kind::too_deep;
    return n;
  }
  n.value = &logic;
  if (logic.is_array()) {
    // An array of scalars holds no logic: evaluation borrows it instead of rebuilding it.
    const bool scalars = std::none_of(logic.begin(), logic.end(), [](const json& e) { return e.is_structured(); });
    if (scalars) return n;
    n.kind = Node::Kind::array;
    n.args.reserve(logic.size());
    for (const json& e : logic) n.args.push_back(compile_node(e, depth + 1, max_depth));
    return n;
  }
  if (!logic.is_object() || logic.size() != 1) return n;
  const auto it = logic.begin();
  n.info = find_op(it.key());
  if (n.info == nullptr) {
    n.kind = Node::Kind::unknown_op;
    n.key = it.key();
    return n;
  }
  n.kind = Node::Kind::op;
  const json& raw = it.value();
  if (raw.is_array()) {
    n.args.reserve(raw.size());
    for (const json& e : raw) n.args.push_back(compile_node(e, depth + 1, max_depth));
  } else {
    n.args.push_back(compile_node(raw, depth + 1, max_depth));
  }
  if (n.info->op == Op::var && !n.args.empty() && n.args[0].kind == Node::Kind::literal) {
    const json& name = *n.args[0].value;
    if (name.is_null() || (name.is_string() && name.get_ref<const std::string&>().empty())) {
      n.var = Node::VarName::whole;
    } else if (name.is_string()) {
      n.var = Node::VarName::path;
      n.path = split_path(name.get_ref<const std::string&>());
    }
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

// A value that is either borrowed (from the logic, the data, or a value a caller keeps alive)
// or owned (built by an operator).
class Val {
 public:
  Val() = default;
  explicit Val(json owned) : own_(std::move(owned)) {}
  static Val ref(const json& j) {
    Val v;
    v.ref_ = &j;
    return v;
  }
  const json& get() const { return ref_ != nullptr ? *ref_ : own_; }
  json take() && { return ref_ != nullptr ? json(*ref_) : std::move(own_); }

 private:
  const json* ref_ = nullptr;
  json own_;
};

// What "var" reads. Inside reduce it is the pair {current, accumulator}, kept as two pointers
// so that no object is built per step.
struct Scope {
  const json* data = nullptr;
  const json* current = nullptr;
  const json* accumulator = nullptr;
  bool reduce = false;
};

class Evaluator {
 public:
  explicit Evaluator(const Limits& limits) : limits_(limits) {}

  Val eval(const Node& node, const Scope& scope, int depth);
  std::optional<Error>& error() { return error_; }

 private:
  Val fail(std::string message) {
    if (!error_) error_ = input_error(std::move(message));
    return Val();
  }
  Val arg(const NodeArgs& args, std::size_t i, const Scope& scope, int depth) {
    return i < args.size() ? eval(args[i], scope, depth) : Val();
  }
  std::vector<Val> all_args(const NodeArgs& args, const Scope& scope, int depth) {
    std::vector<Val> out;
    out.reserve(args.size());
    for (std::size_t i = 0; i < args.size() && !error_; ++i) out.push_back(eval(args[i], scope, depth));
    return out;
  }
  bool check_guard(const DepthGuard& g) {
    if (g.overflow) fail(fmt::format("json logic value nested deeper than {} levels", kMaxValueDepth));
    return !g.overflow;
  }
  bool check_size(std::size_t n, std::string_view op) {
    if (n > limits_.max_size) {
      fail(fmt::format("json logic '{}' built a value larger than {} elements", op, limits_.max_size));
      return false;
    }
    return true;
  }

  Val lookup(const json& name, const Scope& scope, Val fallback);
  Val walk(const std::vector<Segment>& path, const Scope& scope, Val fallback);
  Val whole(const Scope& scope);
  json missing_keys(const json* list, const std::vector<Val>* args, const Scope& scope);
  Val compare_op(Op op, const NodeArgs& args, const Scope& scope, int depth);
  Val arithmetic(Op op, const NodeArgs& args, const Scope& scope, int depth);
  Val scoped(Op op, const NodeArgs& args, const Scope& scope, int depth);
  Val version_op(Op op, std::string_view name, const NodeArgs& args, const Scope& scope, int depth);
  Val substr(const NodeArgs& args, const Scope& scope, int depth);

  const Limits& limits_;
  std::size_t steps_ = 0;
  std::optional<Error> error_;
};

Val Evaluator::whole(const Scope& scope) {
  if (!scope.reduce) return scope.data != nullptr ? Val::ref(*scope.data) : Val();
  json pair = json::object();
  pair["current"] = *scope.current;
  pair["accumulator"] = *scope.accumulator;
  return Val(std::move(pair));
}

// json-logic-js "var": walks a dotted path; a missing step gives the fallback, a null found at
// the end is returned as null.
Val Evaluator::lookup(const json& name, const Scope& scope, Val fallback) {
  if (name.is_null() || (name.is_string() && name.get_ref<const std::string&>().empty())) return whole(scope);
  if (name.is_string()) return walk(split_path(name.get_ref<const std::string&>()), scope, std::move(fallback));
  DepthGuard g;
  const std::string storage = js_string(name, g);
  if (!check_guard(g)) return Val();
  return walk(split_path(storage), scope, std::move(fallback));
}

Val Evaluator::walk(const std::vector<Segment>& path, const Scope& scope, Val fallback) {
  const json* cur = scope.data;
  json temp;  // holds a computed step ("length", a character of a string)
  bool first = true;
  for (const Segment& seg : path) {
    if (first && scope.reduce) {
      if (seg.name == "current") {
        cur = scope.current;
      } else if (seg.name == "accumulator") {
        cur = scope.accumulator;
      } else {
        return fallback;
      }
    } else if (cur == nullptr || cur->is_null()) {
      return fallback;
    } else if (cur->is_object()) {
      auto it = cur->find(seg.name);
      if (it == cur->end()) return fallback;
      cur = &*it;
    } else if (cur->is_array() || cur->is_string()) {
      const std::size_t size = cur->is_array() ? cur->size() : cur->get_ref<const std::string&>().size();
      if (seg.name == "length") {
        json next(static_cast<std::int64_t>(size));
        temp = std::move(next);
        cur = &temp;
      } else {
        if (!seg.index || *seg.index >= size) return fallback;
        if (cur->is_array()) {
          cur = &(*cur)[*seg.index];
        } else {
          json next(std::string(1, cur->get_ref<const std::string&>()[*seg.index]));
          temp = std::move(next);
          cur = &temp;
        }
      }
    } else {
      return fallback;  // numbers and booleans have no properties a rule can read
    }
    first = false;
  }
  if (cur == &temp) return Val(std::move(temp));
  return cur != nullptr ? Val::ref(*cur) : fallback;
}

// Keys (from `list`, or from the evaluated arguments) whose value is absent, null or "".
json Evaluator::missing_keys(const json* list, const std::vector<Val>* args, const Scope& scope) {
  json out = json::array();
  auto check = [&](const json& key) {
    Val v = lookup(key, scope, Val());
    const json& got = v.get();
    if (got.is_null() || (got.is_string() && got.get_ref<const std::string&>().empty())) out.push_back(key);
  };
  if (list != nullptr) {
    for (const json& key : *list) check(key);
  } else {
    for (const Val& key : *args) check(key.get());
  }
  return out;
}

Val Evaluator::compare_op(Op op, const NodeArgs& args, const Scope& scope, int depth) {
  // json-logic-js evaluates every argument before comparing, the third of "<"/"<=" included.
  Val a = arg(args, 0, scope, depth);
  Val b = arg(args, 1, scope, depth);
  Val c = args.size() > 2 ? arg(args, 2, scope, depth) : Val();
  if (error_) return Val();
  DepthGuard g;
  bool result = false;
  switch (op) {
    case Op::eq:
      result = loose_eq(a.get(), b.get(), g);
      break;
    case Op::ne:
      result = !loose_eq(a.get(), b.get(), g);
      break;
    case Op::strict_eq:
      result = strict_eq(a.get(), b.get(), g, 0);
      break;
    case Op::strict_ne:
      result = !strict_eq(a.get(), b.get(), g, 0);
      break;
    case Op::lt:
    case Op::le: {
      auto holds = [op](std::optional<int> c) { return c && (op == Op::lt ? *c < 0 : *c <= 0); };
      result = holds(js_compare(a.get(), b.get(), g));
      if (args.size() > 2) result = result && holds(js_compare(b.get(), c.get(), g));  // between
      break;
    }
    case Op::gt: {
      const std::optional<int> order = js_compare(a.get(), b.get(), g);
      result = order && *order > 0;
      break;
    }
    case Op::ge: {
      const std::optional<int> order = js_compare(a.get(), b.get(), g);
      result = order && *order >= 0;
      break;
    }
    default:
      break;
  }
  if (!check_guard(g)) return Val();
  return Val(json(result));
}

Val Evaluator::arithmetic(Op op, const NodeArgs& args, const Scope& scope, int depth) {
  DepthGuard g;
  double result = 0;
  switch (op) {
    case Op::add:
    case Op::mul: {
      std::vector<Val> vals = all_args(args, scope, depth);
      if (error_) return Val();
      if (op == Op::mul && vals.empty()) return fail("json logic '*' needs at least one argument");
      result = op == Op::add ? 0 : 1;
      for (const Val& v : vals) {
        const double x = js_parse_float(v.get(), g);
        result = op == Op::add ? result + x : result * x;
      }
      break;
    }
    case Op::min:
    case Op::max: {
      std::vector<Val> vals = all_args(args, scope, depth);
      if (error_) return Val();
      result = op == Op::min ? inf() : -inf();
      for (const Val& v : vals) {
        const double x = js_number(v.get(), g);
        if (std::isnan(x)) {
          result = nan();
          break;
        }
        result = op == Op::min ? std::min(result, x) : std::max(result, x);
      }
      break;
    }
    case Op::sub: {
      Val a = arg(args, 0, scope, depth);
      if (args.size() < 2) {
        if (error_) return Val();
        result = args.size() == 0 ? nan() : -js_number(a.get(), g);
        break;
      }
      Val b = arg(args, 1, scope, depth);
      if (error_) return Val();
      result = js_number(a.get(), g) - js_number(b.get(), g);
      break;
    }
    case Op::div:
    case Op::mod: {
      Val a = arg(args, 0, scope, depth);
      Val b = arg(args, 1, scope, depth);
      if (error_) return Val();
      const double x = args.size() > 0 ? js_number(a.get(), g) : nan();
      const double y = args.size() > 1 ? js_number(b.get(), g) : nan();
      result = op == Op::div ? x / y : std::fmod(x, y);
      break;
    }
    default:
      break;
  }
  if (!check_guard(g)) return Val();
  return Val(make_number(result));
}

// String#substr with json-logic-js's extension: a negative length drops that many characters
// from the end.
Val Evaluator::substr(const NodeArgs& args, const Scope& scope, int depth) {
  Val source = arg(args, 0, scope, depth);
  Val start_v = arg(args, 1, scope, depth);
  Val len_v = arg(args, 2, scope, depth);
  if (error_) return Val();
  DepthGuard g;
  const std::string s = js_string(source.get(), g);
  const double size = static_cast<double>(s.size());
  double start = args.size() > 1 ? js_integer(js_number(start_v.get(), g)) : 0;
  if (start < 0) start = std::max(size + start, 0.0);
  start = std::min(start, size);
  double length = size - start;
  if (args.size() > 2) {
    const double len = js_integer(js_number(len_v.get(), g));
    length = len < 0 ? std::max(size - start + len, 0.0) : std::min(len, size - start);
  }
  if (!check_guard(g)) return Val();
  return Val(json(s.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(length))));
}

// all / some / none / map / filter / reduce: the second argument runs once per item of the
// first, with "var" reading the item (or {current, accumulator} for reduce).
Val Evaluator::scoped(Op op, const NodeArgs& args, const Scope& scope, int depth) {
  Val source = arg(args, 0, scope, depth);
  if (error_) return Val();
  static const json kNull;
  static const Node kNullNode = compile_node(kNull, 0, 0);
  const Node& body = args.size() > 1 ? args[1] : kNullNode;
  const json& items = source.get();

  if (op == Op::reduce) {
    Val acc = arg(args, 2, scope, depth);
    if (error_ || !items.is_array()) return acc;
    json acc_value = std::move(acc).take();
    for (const json& item : items) {
      Scope inner;
      inner.reduce = true;
      inner.current = &item;
      inner.accumulator = &acc_value;
      json next = eval(body, inner, depth).take();
      if (error_) return Val();
      acc_value = std::move(next);
    }
    return Val(std::move(acc_value));
  }

  if (!items.is_array()) {
    switch (op) {
      case Op::map:
      case Op::filter:
        return Val(json::array());
      case Op::none:
        return Val(json(true));
      default:
        return Val(json(false));
    }
  }
  if (op == Op::all && items.empty()) return Val(json(false));

  json out = json::array();
  for (const json& item : items) {
    Scope inner;
    inner.data = &item;
    Val r = eval(body, inner, depth);
    if (error_) return Val();
    switch (op) {
      case Op::all:
        if (!truthy(r.get())) return Val(json(false));
        break;
      case Op::some:
        if (truthy(r.get())) return Val(json(true));
        break;
      case Op::none:
        if (truthy(r.get())) return Val(json(false));
        break;
      case Op::map:
        out.push_back(std::move(r).take());
        break;
      case Op::filter:
        if (truthy(r.get())) out.push_back(item);
        break;
      default:
        break;
    }
  }
  switch (op) {
    case Op::all:
    case Op::none:
      return Val(json(true));
    case Op::some:
      return Val(json(false));
    default:
      return Val(std::move(out));
  }
}

// Parsed versions and specifier sets, memoized per thread: a run compares the same handful of
// strings (installed versions, rule literals) thousands of times, and parsing allocates.
// References into the maps stay valid during one evaluate() call (node-based maps, no erase);
// trim() runs only at the start of a call. Once full, new strings are parsed into the caller's
// scratch slot instead, so hostile input cannot grow the maps within a call.
struct ParseCache {
  static constexpr std::size_t kMaxEntries = 4096;
  struct Specs {
    std::optional<SpecifierSet> set;
    std::string error;
  };
  std::unordered_map<std::string, std::optional<Version>> versions;
  std::unordered_map<std::string, Specs> specs;

  static ParseCache& get() {
    thread_local ParseCache cache;
    return cache;
  }
  void trim() {
    if (versions.size() > kMaxEntries) versions.clear();
    if (specs.size() > kMaxEntries) specs.clear();
  }
  const std::optional<Version>& version(const std::string& text, std::optional<Version>& scratch) {
    auto it = versions.find(text);
    if (it != versions.end()) return it->second;
    if (versions.size() >= kMaxEntries) return scratch = parse_version(text);
    return versions.emplace(text, parse_version(text)).first->second;
  }
  const Specs& specifiers(const std::string& text, Specs& scratch) {
    auto it = specs.find(text);
    if (it != specs.end()) return it->second;
    Expected<SpecifierSet> parsed = parse_specifiers(text);
    Specs entry;
    if (parsed) {
      entry.set = std::move(*parsed);
    } else {
      entry.error = parsed.error().message;
    }
    if (specs.size() >= kMaxEntries) return scratch = std::move(entry);
    return specs.emplace(text, std::move(entry)).first->second;
  }
};

// The parsed version of a string (or integer) value; nullptr when it is not a version.
const Version* version_of(const json& v, std::optional<Version>& scratch) {
  const std::optional<Version>* parsed = nullptr;
  if (v.is_string()) {
    parsed = &ParseCache::get().version(v.get_ref<const std::string&>(), scratch);
  } else if (v.is_number_integer()) {
    parsed = &ParseCache::get().version(js_number_string(v), scratch);
  }
  return parsed != nullptr && parsed->has_value() ? &**parsed : nullptr;
}

Val Evaluator::version_op(Op op, std::string_view name, const NodeArgs& args, const Scope& scope, int depth) {
  std::optional<Version> scratch_a;
  std::optional<Version> scratch_b;
  Val a = arg(args, 0, scope, depth);
  if (op == Op::ver_known) {
    if (error_) return Val();
    return Val(json(version_of(a.get(), scratch_a) != nullptr));
  }
  Val b = arg(args, 1, scope, depth);
  if (error_) return Val();
  if (op == Op::ver_in) {
    if (!b.get().is_string())
      return fail(fmt::format("json logic '{}' needs a specifier string as its second argument", name));
    ParseCache::Specs scratch_specs;
    const ParseCache::Specs& specs = ParseCache::get().specifiers(b.get().get_ref<const std::string&>(), scratch_specs);
    if (!specs.set) return fail(fmt::format("json logic '{}': {}", name, specs.error));
    const Version* v = version_of(a.get(), scratch_a);
    return Val(json(v != nullptr && satisfies(*v, *specs.set)));
  }
  const Version* x = version_of(a.get(), scratch_a);
  const Version* y = version_of(b.get(), scratch_b);
  if (x == nullptr || y == nullptr) return Val(json(false));
  const std::strong_ordering c = *x <=> *y;
  bool result = false;
  switch (op) {
    case Op::ver_lt:
      result = c < 0;
      break;
    case Op::ver_le:
      result = c <= 0;
      break;
    case Op::ver_gt:
      result = c > 0;
      break;
    case Op::ver_ge:
      result = c >= 0;
      break;
    case Op::ver_eq:
      result = c == 0;
      break;
    case Op::ver_ne:
      result = c != 0;
      break;
    default:
      break;
  }
  return Val(json(result));
}

Val Evaluator::eval(const Node& node, const Scope& scope, int depth) {
  if (error_) return Val();
  if (depth > limits_.max_depth) {
    return fail(fmt::format("json logic nested deeper than {} levels", limits_.max_depth));
  }
  if (++steps_ > limits_.max_steps) {
    return fail(fmt::format("json logic evaluation exceeded {} steps", limits_.max_steps));
  }
  switch (node.kind) {
    case Node::Kind::literal:
      return Val::ref(*node.value);
    case Node::Kind::array: {
      json out = json::array();
      out.get_ref<json::array_t&>().reserve(node.args.size());
      for (const Node& e : node.args) {
        Val v = eval(e, scope, depth + 1);
        if (error_) return Val();
        out.push_back(std::move(v).take());
      }
      return Val(std::move(out));
    }
    case Node::Kind::unknown_op:
      return fail(fmt::format("unknown json logic operator '{}'", node.key));
    case Node::Kind::too_deep:  // not reached: the depth check above fails first
      return fail(fmt::format("json logic nested deeper than {} levels", limits_.max_depth));
    case Node::Kind::op:
      break;
  }
  const OpInfo* info = node.info;
  const NodeArgs& args = node.args;
  const int next = depth + 1;

  switch (info->op) {
    case Op::var: {
      Val name = arg(args, 0, scope, next);
      Val fallback = arg(args, 1, scope, next);
      if (error_) return Val();
      if (node.var == Node::VarName::path) return walk(node.path, scope, std::move(fallback));
      if (node.var == Node::VarName::whole) return whole(scope);
      return lookup(name.get(), scope, std::move(fallback));
    }
    case Op::missing: {
      std::vector<Val> vals = all_args(args, scope, next);
      if (error_) return Val();
      const json* list = !vals.empty() && vals[0].get().is_array() ? &vals[0].get() : nullptr;
      return Val(missing_keys(list, &vals, scope));
    }
    case Op::missing_some: {
      Val need = arg(args, 0, scope, next);
      Val options = arg(args, 1, scope, next);
      if (error_) return Val();
      const json& opts = options.get();
      std::vector<Val> single;
      if (!opts.is_array()) single.push_back(Val::ref(opts));
      json missing = missing_keys(opts.is_array() ? &opts : nullptr, &single, scope);
      const double count = static_cast<double>(opts.is_array() ? opts.size() : 1);
      DepthGuard g;
      const double needed = js_number(need.get(), g);
      if (!check_guard(g)) return Val();
      if (count - static_cast<double>(missing.size()) >= needed) return Val(json::array());
      return Val(std::move(missing));
    }
    case Op::if_: {
      const std::size_t n = args.size();
      std::size_t i = 0;
      for (; i + 1 < n; i += 2) {
        Val cond = eval(args[i], scope, next);
        if (error_) return Val();
        if (truthy(cond.get())) return eval(args[i + 1], scope, next);
      }
      if (i < n) return eval(args[i], scope, next);
      return Val();
    }
    case Op::and_:
    case Op::or_: {
      Val current;
      for (std::size_t i = 0; i < args.size(); ++i) {
        current = eval(args[i], scope, next);
        if (error_) return Val();
        if (truthy(current.get()) == (info->op == Op::or_)) return current;
      }
      return current;
    }
    case Op::not_:
    case Op::double_not: {
      Val a = arg(args, 0, scope, next);
      if (error_) return Val();
      return Val(json(truthy(a.get()) == (info->op == Op::double_not)));
    }
    case Op::eq:
    case Op::ne:
    case Op::strict_eq:
    case Op::strict_ne:
    case Op::lt:
    case Op::le:
    case Op::gt:
    case Op::ge:
      return compare_op(info->op, args, scope, next);
    case Op::in: {
      Val needle = arg(args, 0, scope, next);
      Val hay = arg(args, 1, scope, next);
      if (error_) return Val();
      DepthGuard g;
      bool found = false;
      if (hay.get().is_string()) {
        found = hay.get().get_ref<const std::string&>().find(js_string(needle.get(), g)) != std::string::npos;
      } else if (hay.get().is_array()) {
        for (const json& e : hay.get()) {
          if (strict_eq(e, needle.get(), g, 0)) {
            found = true;
            break;
          }
        }
      }
      if (!check_guard(g)) return Val();
      return Val(json(found));
    }
    case Op::cat: {
      std::string out;
      DepthGuard g;
      for (std::size_t i = 0; i < args.size(); ++i) {
        Val v = eval(args[i], scope, next);
        if (error_) return Val();
        append_js_string(out, v.get(), g, 0, false);
        if (!check_guard(g) || !check_size(out.size(), "cat")) return Val();
      }
      return Val(json(std::move(out)));
    }
    case Op::substr:
      return substr(args, scope, next);
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::div:
    case Op::mod:
    case Op::min:
    case Op::max:
      return arithmetic(info->op, args, scope, next);
    case Op::merge: {
      json out = json::array();
      for (std::size_t i = 0; i < args.size(); ++i) {
        Val v = eval(args[i], scope, next);
        if (error_) return Val();
        if (v.get().is_array()) {
          if (!check_size(out.size() + v.get().size(), "merge")) return Val();
          json part = std::move(v).take();
          for (json& e : part) out.push_back(std::move(e));
        } else {
          if (!check_size(out.size() + 1, "merge")) return Val();
          out.push_back(std::move(v).take());
        }
      }
      return Val(std::move(out));
    }
    case Op::all:
    case Op::some:
    case Op::none:
    case Op::map:
    case Op::filter:
    case Op::reduce:
      return scoped(info->op, args, scope, next);
    case Op::log:
      return arg(args, 0, scope, next);
    case Op::ver_lt:
    case Op::ver_le:
    case Op::ver_gt:
    case Op::ver_ge:
    case Op::ver_eq:
    case Op::ver_ne:
    case Op::ver_in:
    case Op::ver_known:
      return version_op(info->op, info->name, args, scope, next);
  }
  return fail(fmt::format("json logic operator '{}' is not implemented", info->name));
}

// ---------------------------------------------------------------------------------------------
// Validation and var collection

Status validate_node(const json& logic, const Limits& limits, int depth) {
  if (depth > limits.max_depth) {
    return input_error(fmt::format("json logic nested deeper than {} levels", limits.max_depth));
  }
  if (logic.is_array()) {
    for (const json& e : logic) {
      Status s = validate_node(e, limits, depth + 1);
      if (!s) return s;
    }
    return Ok{};
  }
  if (!logic.is_object()) return Ok{};
  if (logic.size() != 1) {
    // Keys only: dumping the value would recurse through whatever it holds.
    std::string keys;
    for (auto it = logic.begin(); it != logic.end() && keys.size() < 60; ++it) {
      keys += keys.empty() ? "" : ", ";
      keys += it.key();
    }
    return input_error(
        fmt::format("json logic object with {} keys ({}) is not an operation (an operation has exactly one key)",
                    logic.size(), keys));
  }
  const auto it = logic.begin();
  const OpInfo* info = find_op(it.key());
  if (info == nullptr) return input_error(fmt::format("unknown json logic operator '{}'", it.key()));
  const Args args(it.value());
  const int n = static_cast<int>(args.size());
  if (n < info->min_args || (info->max_args != kAny && n > info->max_args)) {
    const std::string want = info->max_args == kAny ? fmt::format("at least {}", info->min_args)
                             : info->min_args == info->max_args
                                 ? fmt::format("{}", info->min_args)
                                 : fmt::format("{} to {}", info->min_args, info->max_args);
    return input_error(
        fmt::format("json logic '{}' takes {} argument{}, got {}", info->name, want, want == "1" ? "" : "s", n));
  }
  switch (info->op) {
    case Op::ver_lt:
    case Op::ver_le:
    case Op::ver_gt:
    case Op::ver_ge:
    case Op::ver_eq:
    case Op::ver_ne:
    case Op::ver_in:
      for (std::size_t i = 0; i < args.size(); ++i) {
        const json& a = args[i];
        if (info->op == Op::ver_in && i == 1) {
          if (a.is_string()) {
            Expected<SpecifierSet> set = parse_specifiers(a.get_ref<const std::string&>());
            if (!set) return input_error(fmt::format("json logic '{}': {}", info->name, set.error().message));
          } else if (!a.is_object()) {
            return input_error(
                fmt::format("json logic '{}' needs a specifier string as its second argument", info->name));
          }
        } else if (a.is_string() && !parse_version(a.get_ref<const std::string&>())) {
          return input_error(fmt::format("json logic '{}': '{}' is not a PEP 440 version", info->name,
                                         a.get_ref<const std::string&>()));
        }
      }
      break;
    default:
      break;
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    Status s = validate_node(args[i], limits, depth + 1);
    if (!s) return s;
  }
  return Ok{};
}

void add_name(std::vector<std::string>& out, std::string name) {
  if (name.empty()) return;
  for (const std::string& have : out) {
    if (have == name) return;
  }
  out.push_back(std::move(name));
}

// A literal fact name ("a.b", 3) as a string, or nullopt for logic and other values.
std::optional<std::string> literal_name(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return js_number_string(v);
  return std::nullopt;
}

void collect_vars(const json& logic, std::vector<std::string>& out, int depth) {
  if (depth > kMaxValueDepth) return;
  if (logic.is_array()) {
    for (const json& e : logic) collect_vars(e, out, depth + 1);
    return;
  }
  if (!logic.is_object() || logic.size() != 1) return;
  const auto it = logic.begin();
  const OpInfo* info = find_op(it.key());
  if (info == nullptr) return;
  const Args args(it.value());
  auto names_in = [&](const json& v) {
    if (auto name = literal_name(v)) {
      add_name(out, std::move(*name));
    } else {
      collect_vars(v, out, depth + 1);
    }
  };
  switch (info->op) {
    case Op::var:
      if (args.size() > 0) names_in(args[0]);
      if (args.size() > 1) collect_vars(args[1], out, depth + 1);
      return;
    case Op::missing:
      for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i].is_array()) {
          for (const json& k : args[i]) names_in(k);
        } else {
          names_in(args[i]);
        }
      }
      return;
    case Op::missing_some:
      if (args.size() > 0) collect_vars(args[0], out, depth + 1);
      if (args.size() > 1) {
        if (args[1].is_array()) {
          for (const json& k : args[1]) names_in(k);
        } else {
          names_in(args[1]);
        }
      }
      return;
    default:
      break;
  }
  if (is_scoped(info->op)) {
    if (args.size() > 0) collect_vars(args[0], out, depth + 1);
    if (info->op == Op::reduce && args.size() > 2) collect_vars(args[2], out, depth + 1);
    return;
  }
  for (std::size_t i = 0; i < args.size(); ++i) collect_vars(args[i], out, depth + 1);
}

}  // namespace detail

using namespace detail;

bool truthy(const json& value) {
  switch (value.type()) {
    case json::value_t::boolean:
      return value.get<bool>();
    case json::value_t::number_integer:
      return value.get<std::int64_t>() != 0;
    case json::value_t::number_unsigned:
      return value.get<std::uint64_t>() != 0;
    case json::value_t::number_float: {
      const double d = value.get<double>();
      return d != 0 && !std::isnan(d);
    }
    case json::value_t::string:
      return !value.get_ref<const std::string&>().empty();
    case json::value_t::array:
      return !value.empty();
    case json::value_t::object:
      return true;
    default:
      return false;
  }
}

bool loose_equals(const json& a, const json& b) {
  DepthGuard g;
  const bool eq = loose_eq(a, b, g);
  return eq && !g.overflow;
}

bool strict_equals(const json& a, const json& b) {
  DepthGuard g;
  const bool eq = strict_eq(a, b, g, 0);
  return eq && !g.overflow;
}

namespace {

// Evaluates ROOT (compiled from logic that is alive) on DATA.
Expected<json> run(const Node& root, const json& data, const Limits& limits) {
  ParseCache::get().trim();
  Evaluator ev(limits);
  Scope scope;
  scope.data = &data;
  Val result = ev.eval(root, scope, 0);
  if (ev.error()) return std::move(*ev.error());
  return std::move(result).take();
}

}  // namespace

Expected<json> evaluate(const json& logic, const json& data, const Limits& limits) {
  try {
    return run(compile_node(logic, 0, limits.max_depth), data, limits);
  } catch (const std::exception& e) {
    return internal_error(fmt::format("json logic evaluation failed: {}", e.what()));
  }
}

// The program's own copy of the logic and the tree compiled from that copy (pointing into it: a
// Compiled is built in place and never moved).
struct Program::Compiled {
  Compiled(json l, const Limits& lim) : logic(std::move(l)), limits(lim) {
    root = compile_node(logic, 0, limits.max_depth);
    closed = reads_literal_names(root);
  }
  Compiled(const Compiled&) = delete;
  Compiled& operator=(const Compiled&) = delete;
  json logic;
  Limits limits;
  Node root;
  bool closed = false;
};

Program::Program() : Program(json()) {}

Program::Program(json logic, const Limits& limits)
    : compiled_(std::make_shared<const Compiled>(std::move(logic), limits)) {}

Expected<json> Program::evaluate(const json& data) const {
  try {
    return run(compiled_->root, data, compiled_->limits);
  } catch (const std::exception& e) {
    return internal_error(fmt::format("json logic evaluation failed: {}", e.what()));
  }
}

bool Program::test(const json& data, std::string* error) const {
  try {
    ParseCache::get().trim();
    Evaluator ev(compiled_->limits);
    Scope scope;
    scope.data = &data;
    Val result = ev.eval(compiled_->root, scope, 0);
    if (ev.error()) {
      if (error) *error = ev.error()->message;
      return false;
    }
    return truthy(result.get());
  } catch (const std::exception& e) {
    if (error) *error = fmt::format("json logic evaluation failed: {}", e.what());
    return false;
  }
}

const json& Program::logic() const { return compiled_->logic; }

bool Program::closed() const { return compiled_->closed; }

Status validate(const json& logic, const Limits& limits) {
  try {
    return validate_node(logic, limits, 0);
  } catch (const std::exception& e) {
    return internal_error(fmt::format("json logic validation failed: {}", e.what()));
  }
}

std::vector<std::string> referenced_vars(const json& logic) {
  std::vector<std::string> out;
  try {
    collect_vars(logic, out, 0);
  } catch (const std::exception&) {
    // Only allocation can fail here; a partial list is still useful evidence.
  }
  return out;
}

}  // namespace specprobe::jsonlogic
