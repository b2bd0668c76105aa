// dump_json (common/json.hpp) writes exactly what nlohmann's dump writes, pretty and compact.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include <catch2/catch.hpp>

#include "common/byte_image.hpp"
#include "common/json.hpp"

using specprobe::dump_json;
using specprobe::Json;

namespace {

std::string reference(const Json& j, int indent) { return j.dump(indent, ' ', false, Json::error_handler_t::replace); }

std::string ours(const Json& j, int indent) {
  std::string out = "prefix:";  // appended to, never replaced
  dump_json(j, out, indent);
  return out.substr(7);
}

// Strings mixing plain text, every escape, control bytes, DEL, valid multi-byte UTF-8 and bytes
// that are not UTF-8 (lone continuation bytes, truncated sequences, overlong forms).
std::string random_string(std::mt19937& rng) {
  static const std::vector<std::string> kPieces = {"a",        "Z",         " ",
                                                   "0",        "\"",        "\\",
                                                   "/",        "\b",        "\f",
                                                   "\n",       "\r",        "\t",
                                                   "\x01",     "\x1f",      std::string(1, '\0'),
                                                   "\x7f",     "é",         "€",
                                                   "𝄞",        "\x80",      "\xbf",
                                                   "\xc3",     "\xe2\x82",  "\xf0\x9d\x84",
                                                   "\xc0\xaf", "\xff",      "{}",
                                                   "[1,2]",    "key: value"};
  std::uniform_int_distribution<size_t> len(0, 12), pick(0, kPieces.size() - 1);
  std::string s;
  for (size_t n = len(rng); n > 0; --n) s += kPieces[pick(rng)];
  return s;
}

Json random_value(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 4 ? 5 : 7);
  switch (kind(rng)) {
    case 0:
      return nullptr;
    case 1:
      return std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    case 2:
      return std::uniform_int_distribution<int64_t>(std::numeric_limits<int64_t>::min(),
                                                    std::numeric_limits<int64_t>::max())(rng);
    case 3:
      return std::uniform_int_distribution<uint64_t>(0, std::numeric_limits<uint64_t>::max())(rng);
    case 4: {
      static const double kFloats[] = {0.0,     -0.0,    0.5,  1.0,          1e300,
                                       -2.5e-8, 3.14159, 1e16, std::nan(""), std::numeric_limits<double>::infinity()};
      return kFloats[std::uniform_int_distribution<size_t>(0, std::size(kFloats) - 1)(rng)];
    }
    case 5:
      return random_string(rng);
    case 6: {
      Json a = Json::array();
      for (int n = std::uniform_int_distribution<int>(0, 4)(rng); n > 0; --n) a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      Json o = Json::object();
      for (int n = std::uniform_int_distribution<int>(0, 4)(rng); n > 0; --n)
        o[random_string(rng)] = random_value(rng, depth + 1);
      return o;
    }
  }
}

}  // namespace

TEST_CASE("dump_json: the corners nlohmann's dump has", "[common][json]") {
  const Json cases[] = {
      Json::object(),
      Json::array(),
      Json::array({Json::object(), Json::array(), nullptr}),
      {{"a", {{"b", Json::array({1, -2, 3.5})}}}, {"empty", Json::object()}},
      "plain",
      "tab\there \"quoted\" back\\slash \x01 \x1f \x7f",
      "bad \xff utf-8 \xc3 and good é €",
      std::nan(""),
      -0.0,
      1e-7,
      static_cast<uint64_t>(18446744073709551615ULL),
      static_cast<int64_t>(std::numeric_limits<int64_t>::min()),
  };
  for (const Json& j : cases) {
    for (int indent : {-1, 0, 2, 4}) {
      INFO(reference(j, -1) << " indent " << indent);
      CHECK(ours(j, indent) == reference(j, indent));
    }
  }
}

TEST_CASE("dump_json equals nlohmann's dump on random documents", "[common][json]") {
  std::mt19937 rng(20261129);
  for (int i = 0; i < 3000; ++i) {
    const Json j = random_value(rng, 0);
    for (int indent : {-1, 2}) {
      INFO("document " << i << " indent " << indent);
      REQUIRE(ours(j, indent) == reference(j, indent));
    }
  }
}

TEST_CASE("JsonObjectWriter and write_object_with write what dump_json writes", "[common][json]") {
  std::mt19937 rng(20261130);
  for (int i = 0; i < 2000; ++i) {
    Json object = Json::object();
    for (int n = std::uniform_int_distribution<int>(0, 5)(rng); n > 0; --n)
      object[random_string(rng)] = random_value(rng, 1);
    // One member written by the caller: one the object holds, or a new one.
    std::string name = random_string(rng);
    if (!object.empty() && std::uniform_int_distribution<int>(0, 1)(rng) == 1)
      name = std::next(object.begin(), std::uniform_int_distribution<size_t>(0, object.size() - 1)(rng)).key();
    else
      object[name] = random_value(rng, 1);
    Json rest = object;
    rest.erase(name);
    for (int indent : {-1, 2}) {
      for (int depth : {0, 1, 3}) {
        INFO("document " << i << " indent " << indent << " depth " << depth);
        // The reference: the object nested DEPTH levels down in single-member objects.
        Json nested = object;
        for (int d = 0; d < depth; ++d) nested = Json{{"x", nested}};
        std::string want = reference(nested, indent);
        std::string got = "prefix:";
        for (int d = 0; d < depth; ++d) {
          got += '{';
          specprobe::json_newline(got, indent, d + 1);
          got += indent >= 0 ? "\"x\": " : "\"x\":";
        }
        specprobe::write_object_with(rest, name, got, indent, depth,
                                     [&](int d) { dump_json(object[name], got, indent, d); });
        for (int d = depth; d > 0; --d) {
          specprobe::json_newline(got, indent, d - 1);
          got += '}';
        }
        REQUIRE(got.substr(7) == want);
      }
    }
  }
}

TEST_CASE("JsonObjectWriter's typed members", "[common][json]") {
  const Json want = {{"a", nullptr},  {"b", true},          {"c", -42},
                     {"d", "x\"y\n"}, {"e", Json::array()}, {"f", Json::array({"one", "t\two"})},
                     {"g", nullptr},  {"h", "set"},         {"i", Json::object()}};
  for (int indent : {-1, 2}) {
    std::string got;
    specprobe::JsonObjectWriter w(got, indent, 0);
    w.key("a").null();
    w.key("b").boolean(true);
    w.key("c").integer(-42);
    w.key("d").string("x\"y\n");
    w.key("e").strings({});
    w.key("f").strings({"one", "t\two"});
    w.key("g").string_or_null("");
    w.key("h").string_or_null("set");
    w.key("i").value(Json::object());
    w.close();
    CHECK(got == reference(want, indent));
    std::string empty;
    specprobe::JsonObjectWriter e(empty, indent, 3);
    e.close();
    CHECK(empty == "{}");
    // Arrays element by element: [[], [{"k": 1}, "s"]]
    std::string arrays;
    specprobe::JsonArrayWriter outer(arrays, indent, 0);
    specprobe::JsonArrayWriter none(arrays, indent, outer.next());
    none.close();
    specprobe::JsonArrayWriter two(arrays, indent, outer.next());
    specprobe::JsonObjectWriter k(arrays, indent, two.next());
    k.key("k").integer(1);
    k.close();
    two.next();
    specprobe::dump_json_string("s", arrays);
    two.close();
    outer.close();
    CHECK(arrays == reference(Json::array({Json::array(), Json::array({{{"k", 1}}, "s"})}), indent));
  }
}

TEST_CASE("JSON values in a catalog image read back as written, and fail cleanly cut short or corrupt",
          "[common][json][embedded]") {
  std::mt19937 rng(20261131);
  for (int i = 0; i < 1000; ++i) {
    const Json j = random_value(rng, 0);
    specprobe::ByteWriter w;
    w.json(j);
    w.u8(7);
    const std::string bytes = w.bytes();
    specprobe::ByteReader r(bytes);
    const Json back = r.json();
    INFO("document " << i);
    // NaN is the one value not equal to itself: compare the texts.
    REQUIRE(reference(back, -1) == reference(j, -1));
    REQUIRE(r.u8() == 7);
    REQUIRE(r.done());
    // Every shorter prefix is cut short: an error, never a crash or a read past the end.
    for (size_t n = 0; n + 1 < bytes.size(); n += 1 + n / 8) {
      specprobe::ByteReader cut(std::string_view(bytes).substr(0, n));
      (void)cut.json();
      (void)cut.u8();
      REQUIRE_FALSE(cut.done());
    }
    // Random bytes flipped: whatever it reads, it returns.
    std::string flipped = bytes;
    flipped[std::uniform_int_distribution<size_t>(0, flipped.size() - 1)(rng)] ^=
        static_cast<char>(std::uniform_int_distribution<int>(1, 255)(rng));
    specprobe::ByteReader bad(flipped);
    (void)bad.json();
  }
  // Nesting past any catalog's: refused, not recursed into.
  std::string deep;
  for (int d = 0; d < 100000; ++d) deep += std::string("\x07\x01\x00\x00\x00", 5);
  specprobe::ByteReader r(deep);
  CHECK(r.json().is_null());
  CHECK_FALSE(r.ok());
}
