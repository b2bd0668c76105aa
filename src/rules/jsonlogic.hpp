// JSON Logic (jsonlogic.com) evaluator over the facts document, plus PEP 440 version operators.
// Rule conditions, applicability tests and message parameters are JSON Logic; see
// rules/README.md for the operator list. Pure CPU code, no I/O; never throws.
//
// Semantics follow json-logic-js (the reference implementation): JavaScript truthiness except
// that an empty array is falsy, JavaScript loose equality for "==", JavaScript number and string
// coercions for arithmetic and comparison. Deliberate differences, all at corners a rule does
// not reach:
//  - "==", "===", "in" compare arrays and objects by value (JavaScript compares references, so
//    two separately written arrays are never equal there).
//  - Strings are byte strings: "substr" and "var" string indexing count bytes, "<" on strings
//    compares bytes (identical to UTF-16 order for ASCII).
//  - "*" with no arguments is an error (JavaScript throws); with one it returns that argument as
//    a number.
//  - Results that JavaScript would give as NaN or +-Infinity are JSON numbers holding NaN/inf;
//    they print as null. Integral results are returned as JSON integers.
//  - "log" returns its argument and prints nothing (library code does not write to stdout).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace specprobe::jsonlogic {

// Bounds against hostile or runaway logic. Exceeding one is an error, never a crash.
struct Limits {
  int max_depth = 256;                // nesting of operations (and of values walked)
  std::size_t max_steps = 1'000'000;  // operations evaluated per evaluate() call
  std::size_t max_size = 1'000'000;   // elements of a built array / bytes of a built string
};

// Evaluates `logic` against `data` (normally the facts document; read in place, never copied
// while evaluating; only the final result is copied out, so prefer logic that returns scalars).
// An object with exactly one key is an operation; any other value is a literal (arrays are
// evaluated element-wise). Errors (kind input): unknown operator, a bad specifier string in
// "ver_in", "*" without arguments, a limit exceeded. Parsed version and specifier strings are
// memoized per thread (at most 4096 of each), which is the only state kept between calls;
// concurrent calls from several threads are safe.
Expected<nlohmann::json> evaluate(const nlohmann::json& logic, const nlohmann::json& data, const Limits& limits = {});

// LOGIC compiled once: operators resolved and literal "var" paths split, so that logic evaluated
// many times (a rule in every cell of the what-if sweep) pays for neither again. Evaluating a
// Program gives exactly what evaluate(LOGIC, data, LIMITS) gives, errors included. It keeps its
// own copy of the logic; copies of a Program share it. A default Program is the literal null.
class Program {
 public:
  Program();
  explicit Program(nlohmann::json logic, const Limits& limits = {});

  Expected<nlohmann::json> evaluate(const nlohmann::json& data) const;
  // truthy(evaluate(data)) without copying the result out; false with ERROR set on an error.
  bool test(const nlohmann::json& data, std::string* error = nullptr) const;
  const nlohmann::json& logic() const;
  // Whether everything it reads of the data is named literally (referenced_vars lists it all): no
  // "var" of a computed name or of the whole document, no "missing" of computed names, outside
  // the per-item logic of map/filter/all/some/none/reduce. Then two data documents that agree on
  // referenced_vars(logic()) (and what lies under them) give the same result.
  bool closed() const;

  struct Compiled;

 private:
  std::shared_ptr<const Compiled> compiled_;
};

// Checks without evaluating: every operator is known, fixed-arity operators ("==", "ver<",
// "substr", ...) have an allowed number of arguments, literal version strings given to "ver*"
// operators and literal specifier strings given to "ver_in" parse, objects that are not
// operations (zero or several keys) do not appear, and nesting stays within max_depth.
// Used by the rule loader so a bad rule is rejected at load time. Errors name the offending
// operator; kind input.
Status validate(const nlohmann::json& logic, const Limits& limits = {});

// Every fact name the logic reads through "var", "missing" and "missing_some" with a literal
// name ("spec.next_n"), in first-seen order, without duplicates. Names read inside the per-item
// logic of map/filter/all/some/none/reduce refer to the item, not the facts, and are left out,
// as are "" (the whole document) and names computed by logic. Used to attach evidence.
std::vector<std::string> referenced_vars(const nlohmann::json& logic);

// JSON Logic truthiness: false, null, 0, NaN, "" and [] are falsy; everything else (including
// "0" and {}) is truthy.
bool truthy(const nlohmann::json& value);

// JavaScript "==" (with arrays/objects compared by value, see above).
bool loose_equals(const nlohmann::json& a, const nlohmann::json& b);

// JavaScript "===" (numbers by value whatever their JSON representation: 1 === 1.0).
bool strict_equals(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace specprobe::jsonlogic
