// The JSON scanner shared by the readers that need byte positions or source locations rather than
// a tree: safetensors shard headers (error messages name the byte), the checkpoint index (~90k
// names kept as views of the file's buffer) and, in its relaxed mode, config.json files as Python
// writes them (errors name file:line:col of the original text).
//
// Strict mode (JsonScanner) is RFC 8259 read with a cursor: the caller walks the grammar it
// expects with members() / elements() / string() / uint() and skips the rest with skip_value().
// Strings are unescaped in place (an escape never grows, so the result always fits where the
// escaped text was) and returned as views of the buffer. The first violation is recorded as
// "<what> at byte <offset>" and the step that met it returns false, as does each step above it
// (members(), elements(), skip_value()) up to the caller. The scanner never reads past the
// buffer, never allocates per value and never recurses deeper than the max_depth it is given.
//
// Options (JsonScanOptions), each off unless a reader asks for it:
//   - max_depth: how deep skip_value() may nest.
//   - lax_skipped_numbers: inside skip_value(), a number is its first character ('-' or a digit)
//     and then any run of "0123456789.eE+-" ("1.2.3", "0-", "-"). The safetensors reader has
//     skipped the values of unknown keys this way since its first version; the option keeps that
//     reader accepting exactly what it accepted. Strict numbers everywhere else.
//
// Relaxed mode (scan_python_words): Python's json module writes NaN, Infinity and -Infinity as
// bare words, which strict JSON has no spelling for. The relaxed reader (inputs/json_relaxed)
// replaces them and lets nlohmann::json build the value and word any syntax error; this mode only
// finds the words and bounds the nesting, by a lexical walk that does not check the grammar:
//   - a string runs from '"' to the next '"' not escaped by a backslash (its contents unchecked);
//   - outside strings '{' and '[' open a level and '}' and ']' close one (never below zero); a
//     level past max_depth stops the walk with that bracket's offset;
//   - outside strings "NaN", "Infinity" and "-Infinity" are words when no [A-Za-z0-9_] touches
//     either end ("NaNx", "1NaN" and "-Infinity2" are not).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace specprobe {

struct JsonScanOptions {
  int max_depth = 256;               // skip_value(depth) fails past this depth
  bool lax_skipped_numbers = false;  // see the file comment
};

class JsonScanner {
 public:
  // Scans TEXT (N bytes), which strings are unescaped into: keep it alive while views are used.
  JsonScanner(char* text, size_t n, JsonScanOptions options = {}) : s_(text), n_(n), opt_(options) {}

  // --- cursor and errors
  size_t pos() const { return pos_; }
  const char* data() const { return s_; }
  // Records "<what> at byte <pos>" unless an error is recorded already; returns false.
  bool fail(std::string_view what);
  const std::string& error() const { return err_; }

  // --- lexical steps. Each but ws() and at_end() skips whitespace first.
  // The whole buffer is well-formed UTF-8 (common/utf8): else "invalid UTF-8 at byte <first bad>".
  bool validate_utf8();
  void ws() {
    while (pos_ < n_ && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool at_end() {
    ws();
    return pos_ == n_;
  }
  bool peek(char c) {  // the next byte is C (not consumed)
    ws();
    return pos_ < n_ && s_[pos_] == c;
  }
  bool peek_number() {  // the next byte starts a number: '-' or a digit
    ws();
    return pos_ < n_ && (s_[pos_] == '-' || (s_[pos_] >= '0' && s_[pos_] <= '9'));
  }
  bool consume(char c) {  // the next byte is C, then stepped over; no error when it is not
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  bool expect(char c);  // consume(C), else "expected 'C'"
  // A string; OUT views it unescaped, in the buffer.
  bool string(std::string_view& out);
  // A non-negative integer that fits uint64 (no fraction, exponent or leading zero).
  bool uint(uint64_t& out);
  // An RFC 8259 number; only its extent is read (the caller reads the digits from data()).
  bool number();
  // true, false or null: stepped over and true; false (no error) when none is next.
  bool literal();

  // --- grammar
  // Any value, nested at most max_depth - DEPTH levels further ("nesting too deep").
  bool skip_value(int depth = 0);
  // An object at the cursor: VALUE(key) reads each member's value after the ':'.
  template <typename Value>
  bool members(Value value) {
    if (!expect('{')) return false;
    if (consume('}')) return true;
    while (true) {
      std::string_view key;
      if (!string(key) || !expect(':') || !value(key)) return false;
      if (consume(',')) continue;
      return expect('}');
    }
  }
  // An array at the cursor: VALUE() reads each element.
  template <typename Value>
  bool elements(Value value) {
    if (!expect('[')) return false;
    if (consume(']')) return true;
    while (true) {
      if (!value()) return false;
      if (consume(',')) continue;
      return expect(']');
    }
  }

 private:
  bool hex4(uint32_t& out);
  void put_utf8(size_t& w, uint32_t cp);
  bool digits();

  char* s_;
  size_t n_;
  size_t pos_ = 0;
  JsonScanOptions opt_;
  std::string err_;
};

// 1-based line and column (in bytes) of byte OFFSET of TEXT; offsets past the end count as the end.
std::pair<int, int> json_line_col(std::string_view text, size_t offset);

// Relaxed mode (see the file comment): one bare non-finite word, WORD views TEXT.
struct PythonWord {
  size_t offset = 0;
  std::string_view word;  // "NaN", "Infinity" or "-Infinity"
};
struct PythonWords {
  std::vector<PythonWord> words;  // in text order
  bool too_deep = false;          // nesting passed max_depth; the walk stopped there
  size_t too_deep_at = 0;         // offset of the bracket that did
};
PythonWords scan_python_words(std::string_view text, int max_depth);

}  // namespace specprobe
