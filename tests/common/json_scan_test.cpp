// The shared JSON scanner (common/json_scan): byte positions of values and errors, in-place
// unescaping, nesting limits, UTF-8 validation, every error message, the lax number option of the
// safetensors reader, line/column, and the relaxed mode's lexical walk for Python's words.
#include "common/json_scan.hpp"
#include "common/utf8.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using specprobe::JsonScanner;
using specprobe::JsonScanOptions;

namespace {

// A scanner over its own copy of TEXT.
struct Scan {
  explicit Scan(std::string text, JsonScanOptions options = {})
      : buf(std::move(text)), sc(buf.data(), buf.size(), options) {}
  std::string buf;
  JsonScanner sc;
};

// The error skip_value() records for TEXT ("" when it accepts the whole text).
std::string skip_error(const std::string& text, JsonScanOptions options = {}) {
  Scan s(text, options);
  if (!s.sc.skip_value()) return s.sc.error();
  return s.sc.at_end() ? "" : "trailing";
}

std::string string_error(const std::string& text) {
  Scan s(text);
  std::string_view out;
  return s.sc.string(out) ? "" : s.sc.error();
}

// Each (input, expected) row of CASES through F.
template <typename F>
void check_rows(F f, std::initializer_list<std::pair<std::string, std::string>> cases) {
  for (const auto& [input, expected] : cases) {
    INFO(input);
    CHECK(f(input) == expected);
  }
}

std::string unescaped(const std::string& text) {
  Scan s(text);
  std::string_view out;
  REQUIRE(s.sc.string(out));
  return std::string(out);
}

}  // namespace

TEST_CASE("json_scan: strings are unescaped in place and viewed in the buffer", "[json_scan]") {
  Scan s(R"(  "a\"b\\c\/d\b\f\n\r\t" "x\u00e9y" "\ud83d\ude00" "plain")");
  std::string_view v;
  REQUIRE(s.sc.string(v));
  CHECK(v == "a\"b\\c/d\b\f\n\r\t");
  CHECK(v.data() == s.buf.data() + 3);  // the view starts after the opening quote
  CHECK(s.sc.pos() == 24);              // after the closing quote
  REQUIRE(s.sc.string(v));
  CHECK(v == "x\xc3\xa9y");
  REQUIRE(s.sc.string(v));
  CHECK(v == "\xf0\x9f\x98\x80");
  REQUIRE(s.sc.string(v));
  CHECK(v == "plain");
  CHECK(v.data() == s.buf.data() + s.buf.size() - 6);
  CHECK(s.sc.at_end());
  CHECK(unescaped(R"("\u0041\u07ff\uffff")") == "A\xdf\xbf\xef\xbf\xbf");
  CHECK(unescaped(R"("")").empty());
}

TEST_CASE("json_scan: string errors name the byte", "[json_scan]") {
  check_rows(string_error, {
                               {"  x", "expected a string at byte 2"},
                               {"", "expected a string at byte 0"},
                               {"\"ab\x01\"", "control character in string at byte 3"},   // before any escape
                               {"\"\\n\x1f\"", "control character in string at byte 4"},  // after one: past it
                               {R"("a\x")", "invalid escape at byte 4"},
                               {R"("abc)", "unterminated string at byte 4"},
                               {R"("a\n)", "unterminated string at byte 4"},
                               {"\"a\\", "unterminated string at byte 3"},
                               {R"("\u12")", "short \\u escape at byte 3"},
                               {R"("\u12G4")", "invalid \\u escape at byte 6"},
                               {R"("\ud800")", "lone surrogate at byte 7"},
                               {R"("\ud800x")", "lone surrogate at byte 7"},
                               {R"("\udc00")", "lone surrogate at byte 7"},
                               {R"("\ud800\u0041")", "invalid surrogate pair at byte 13"},
                               {R"("\ud800\u00")", "short \\u escape at byte 9"},
                           });
}

TEST_CASE("json_scan: unsigned integers", "[json_scan]") {
  auto uint_of = [](const std::string& text, uint64_t& v) {
    Scan s(text);
    return s.sc.uint(v) ? std::string() : s.sc.error();
  };
  uint64_t v = 0;
  CHECK(uint_of(" 0", v).empty());
  CHECK(v == 0);
  CHECK(uint_of("18446744073709551615", v).empty());
  CHECK(v == UINT64_MAX);
  check_rows([&](const std::string& t) { return uint_of(t, v); },
             {
                 {"18446744073709551616", "number out of range at byte 19"},
                 {"-1", "negative number at byte 0"},
                 {"x", "expected a number at byte 0"},
                 {"  ", "expected a number at byte 2"},
                 {"01", "leading zero at byte 2"},
                 {"1.0", "expected an integer at byte 1"},
                 {"1e3", "expected an integer at byte 1"},
                 {"1E3", "expected an integer at byte 1"},
             });
}

TEST_CASE("json_scan: numbers, literals and values", "[json_scan]") {
  for (const char* ok : {"0", "-0", "12", "-12.5", "1e5", "1E+5", "2.5e-3", "true", "false", "null", "\"s\"", "[]",
                         "{}", " [1, {\"a\": [true, null]}, \"x\"] ", "{\"a\":{\"b\":[]}}"})
    CHECK(skip_error(ok).empty());
  check_rows([](const std::string& t) { return skip_error(t); }, {
                                                                     {"-", "expected a digit at byte 1"},
                                                                     {"1.", "expected a digit at byte 2"},
                                                                     {"1.e5", "expected a digit at byte 2"},
                                                                     {"1e", "expected a digit at byte 2"},
                                                                     {"1e+", "expected a digit at byte 3"},
                                                                     {"-x", "expected a digit at byte 1"},
                                                                     {"01", "trailing"},  // "0", then a stray digit
                                                                     {"", "expected a value at byte 0"},
                                                                     {"   ", "expected a value at byte 3"},
                                                                     {"x", "invalid value at byte 0"},
                                                                     {"tru", "invalid value at byte 0"},
                                                                     {"[1,]", "invalid value at byte 3"},
                                                                     {"[1 2]", "expected ']' at byte 3"},
                                                                     {"{\"a\" 1}", "expected ':' at byte 5"},
                                                                     {"{\"a\":1,}", "expected a string at byte 7"},
                                                                     {"{\"a\":1", "expected '}' at byte 6"},
                                                                     {"{1:2}", "expected a string at byte 1"},
                                                                 });
  // literal() is a prefix match: what follows is the caller's to judge.
  Scan s("truex");
  CHECK(s.sc.literal());
  CHECK(s.sc.pos() == 4);
  CHECK_FALSE(Scan("nul").sc.literal());
}

TEST_CASE("json_scan: number() reads only the number's extent", "[json_scan]") {
  Scan s("  -12.5e+3,");
  REQUIRE(s.sc.number());
  CHECK(std::string_view(s.sc.data() + 2, s.sc.pos() - 2) == "-12.5e+3");
  CHECK(s.sc.peek(','));
  Scan m("  -7");
  CHECK(m.sc.peek_number());
  CHECK_FALSE(Scan(" x").sc.peek_number());
  CHECK_FALSE(Scan("").sc.peek_number());
}

TEST_CASE("json_scan: lax skipped numbers (the safetensors reader's option)", "[json_scan]") {
  const JsonScanOptions lax{.max_depth = 64, .lax_skipped_numbers = true};
  for (const char* text : {"1.2.3", "0-", "-", "1e5e5", "--1", "01"}) {
    CHECK(skip_error(text, lax).empty());
    CHECK_FALSE(skip_error(text).empty());
  }
  CHECK(skip_error("[1.2.3, -]", lax).empty());
  CHECK(skip_error("[1.2.3x]", lax) == "expected ']' at byte 6");
  // Strict parts stay strict: strings, literals, structure.
  CHECK(skip_error("+1", lax) == "invalid value at byte 0");
  CHECK(skip_error("[1,]", lax) == "invalid value at byte 3");
}

TEST_CASE("json_scan: nesting limits", "[json_scan]") {
  auto nested = [](int levels) {
    return std::string(static_cast<size_t>(levels), '[') + std::string(static_cast<size_t>(levels), ']');
  };
  // skip_value(0) reads max_depth + 1 levels of brackets: depth counts from 0.
  CHECK(skip_error(nested(65), {.max_depth = 64}).empty());
  CHECK(skip_error(nested(66), {.max_depth = 64}) == "nesting too deep at byte 65");
  CHECK(skip_error(nested(257)).empty());
  CHECK(skip_error(nested(258)) == "nesting too deep at byte 257");
  CHECK(skip_error(nested(100000)) == "nesting too deep at byte 257");  // stops there, no deep recursion
  std::string obj;
  for (int i = 0; i < 70; ++i) obj += "{\"a\":";
  obj += "1" + std::string(70, '}');
  CHECK(skip_error(obj, {.max_depth = 64}) == "nesting too deep at byte 325");
  // A caller passes the depth of the value it skips.
  Scan s("[[1]]", {.max_depth = 1});
  CHECK_FALSE(s.sc.skip_value(1));
  CHECK(s.sc.error() == "nesting too deep at byte 1");
}

TEST_CASE("json_scan: members, elements and the first error", "[json_scan]") {
  Scan s(R"({"a": [1, 2], "b\u0021": "x", "c": {}} )");
  std::vector<std::string> keys;
  size_t elements = 0;
  REQUIRE(s.sc.members([&](std::string_view key) {
    keys.emplace_back(key);
    if (key == "a")
      return s.sc.elements([&] {
        ++elements;
        uint64_t v = 0;
        return s.sc.uint(v);
      });
    return s.sc.skip_value(1);
  }));
  CHECK(keys == std::vector<std::string>{"a", "b!", "c"});
  CHECK(elements == 2);
  CHECK(s.sc.at_end());
  // A failing step stops the walk; the first recorded error is kept.
  Scan f(R"({"a": x})");
  CHECK_FALSE(f.sc.members([&](std::string_view) { return f.sc.fail("bad member"); }));
  CHECK_FALSE(f.sc.expect('}'));
  CHECK(f.sc.error() == "bad member at byte 5");
  CHECK_FALSE(Scan("[").sc.elements([] { return true; }));
  Scan e("x");
  CHECK_FALSE(e.sc.elements([] { return true; }));
  CHECK(e.sc.error() == "expected '[' at byte 0");
}

TEST_CASE("json_scan: UTF-8 validation names the first bad byte", "[json_scan]") {
  auto utf8_error = [](const std::string& text) {
    Scan s(text);
    return s.sc.validate_utf8() ? std::string() : s.sc.error();
  };
  CHECK(utf8_error("{\"caf\xc3\xa9\": \"\xe2\x82\xac \xf0\x9f\x98\x80\"}").empty());
  CHECK(utf8_error("").empty());
  check_rows(utf8_error, {
                             {"abcdefghij\xff", "invalid UTF-8 at byte 10"},                  // not a lead byte
                             {"ab\x80", "invalid UTF-8 at byte 2"},                           // lone continuation
                             {"ab\xc3", "invalid UTF-8 at byte 2"},                           // truncated
                             {"ab\xc3(", "invalid UTF-8 at byte 2"},                          // bad continuation
                             {"\xc0\xaf", "invalid UTF-8 at byte 0"},                         // overlong '/'
                             {"x\xe0\x80\xaf", "invalid UTF-8 at byte 1"},                    // overlong, 3 bytes
                             {"xy\xed\xa0\x80", "invalid UTF-8 at byte 2"},                   // surrogate U+D800
                             {"\xf4\x90\x80\x80", "invalid UTF-8 at byte 0"},                 // past U+10FFFF
                             {"0123456789\xf8\x88\x80\x80\x80", "invalid UTF-8 at byte 10"},  // 5-byte form
                         });
  CHECK(specprobe::first_invalid_utf8("ok\xc3\xa9") == std::string_view::npos);
}

TEST_CASE("json_scan: line and column of an offset", "[json_scan]") {
  using specprobe::json_line_col;
  const std::string text = "{\n  \"a\": 1,\r\n\"b\"}";
  CHECK(json_line_col(text, 0) == std::pair{1, 1});
  CHECK(json_line_col(text, 1) == std::pair{1, 2});
  CHECK(json_line_col(text, 2) == std::pair{2, 1});
  CHECK(json_line_col(text, 4) == std::pair{2, 3});
  CHECK(json_line_col(text, 13) == std::pair{3, 1});
  CHECK(json_line_col(text, 1000) == std::pair{3, 5});  // past the end: the end
  CHECK(json_line_col("", 0) == std::pair{1, 1});
}

TEST_CASE("json_scan: relaxed mode finds Python's non-finite words", "[json_scan][json_relaxed]") {
  using specprobe::scan_python_words;
  auto words = [](std::string_view text) {
    std::vector<std::pair<size_t, std::string>> out;
    for (const auto& w : scan_python_words(text, 256).words) out.emplace_back(w.offset, std::string(w.word));
    return out;
  };
  using W = std::vector<std::pair<size_t, std::string>>;
  CHECK(words(R"({"a": [0.0, Infinity], "b": -Infinity, "c": NaN})") ==
        W{{12, "Infinity"}, {28, "-Infinity"}, {44, "NaN"}});
  CHECK(words("NaN") == W{{0, "NaN"}});
  // Inside strings, escaped quotes included, nothing is a word.
  CHECK(words(R"(["NaN", "a\"NaN", "\\", NaN])") == W{{24, "NaN"}});
  CHECK(words("\"unterminated NaN").empty());
  CHECK(words("\"\\").empty());
  // No identifier character may touch a word; a '-' that cannot start one leaves the rest.
  CHECK(words("[NaNx, xNaN, 1NaN, NaN_, Infinity2, -Infinity_]").empty());
  CHECK(words("[x-Infinity]") == W{{3, "Infinity"}});
  CHECK(words("[1.Infinity]") == W{{3, "Infinity"}});
  CHECK(words("[-NaN, Infinit, NAN, nan, infinity]") == W{{2, "NaN"}});
  // The grammar is not checked: that is nlohmann's, after the words are replaced.
  CHECK(words("NaN NaN }}} ]") == W{{0, "NaN"}, {4, "NaN"}});
}

TEST_CASE("json_scan: relaxed mode bounds nesting lexically", "[json_scan][json_relaxed]") {
  using specprobe::scan_python_words;
  const std::string deep = std::string(256, '[') + std::string(256, ']');
  CHECK_FALSE(scan_python_words(deep, 256).too_deep);
  const auto r = scan_python_words("[" + deep + "]", 256);
  CHECK(r.too_deep);
  CHECK(r.too_deep_at == 256);
  // Brackets in strings do not count; closers never take the depth below zero; mixed kinds count.
  CHECK_FALSE(scan_python_words("\"" + std::string(300, '[') + "\"", 256).too_deep);
  CHECK(scan_python_words("]]]]" + std::string(3, '{'), 2).too_deep_at == 6);
  CHECK(scan_python_words("[{]{[", 2).too_deep_at == 4);
  // The walk stops at the bracket: words after it are not reported.
  const auto stopped = scan_python_words("[[NaN, [NaN", 2);
  CHECK(stopped.too_deep_at == 7);
  CHECK(stopped.words.size() == 1);
}
