// JSON Logic evaluator: errors for malformed or hostile logic, validate(), referenced_vars(),
// NaN/Infinity corners the fixture file cannot spell, and the evaluation-cost budget.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rules/jsonlogic.hpp"

namespace {

using nlohmann::json;
namespace jl = specprobe::jsonlogic;

json eval_ok(const json& logic, const json& data = json::object()) {
  auto r = jl::evaluate(logic, data);
  INFO(logic.dump());
  if (!r) INFO(r.error().message);
  REQUIRE(r.has_value());
  return *r;
}

// No logic.dump() in these two: they also see depth bombs, and dump() recurses.
std::string eval_error(const json& logic, const json& data = json::object()) {
  auto r = jl::evaluate(logic, data);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().kind == specprobe::ErrorKind::input);
  return r.error().message;
}

std::string validate_error(const json& logic) {
  auto r = jl::validate(logic);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().kind == specprobe::ErrorKind::input);
  return r.error().message;
}

// {"!": {"!": ... {"var": "x"} ...}} nested n deep, built without recursion.
// (Moves, not initializer lists: those copy, and copying a deep value recurses.)
json nested_not(int n) {
  json logic = {{"var", "x"}};
  for (int i = 0; i < n; ++i) {
    json outer = json::object();
    outer["!"] = std::move(logic);
    logic = std::move(outer);
  }
  return logic;
}

json nested_array(int n) {
  json v = json::array({1});
  for (int i = 0; i < n; ++i) {
    json outer = json::array();
    outer.push_back(std::move(v));
    v = std::move(outer);
  }
  return v;
}

// The rule shape specprobe ships most: a version window, a GPU list and a numeric threshold.
json sample_rule() {
  return json::parse(R"({"and": [
      {"var": "spec.enabled"},
      {"ver_in": [{"var": "lib.vllm.version"}, ">=0.20.0,<0.28"]},
      {"in": [{"var": "gpu.sm"}, [90, 100]]},
      {">": [{"var": "spec.next_n"}, 1]},
      {"!": {"missing": ["model.dsa.present"]}},
      {"ver<": [{"var": "lib.deep_gemm.version"}, "2.1.0"]}
  ]})");
}

json sample_facts() {
  return json::parse(R"({
      "spec": {"enabled": true, "next_n": 3, "k": 2},
      "lib": {"vllm": {"version": "0.21.1rc1.dev208+g15332b582"}, "deep_gemm": {"version": "2.0.0+nv_dev.a6b593d"}},
      "gpu": {"sm": 90, "name": "H200"},
      "model": {"dsa": {"present": true}, "layers": [1, 2, 3]}
  })");
}

}  // namespace

TEST_CASE("jsonlogic unknown operator is an input error naming it", "[jsonlogic]") {
  CHECK(eval_error({{"frobnicate", {1, 2}}}).find("frobnicate") != std::string::npos);
  CHECK(eval_error({{"and", {true, {{"nested_bad", 1}}}}}).find("nested_bad") != std::string::npos);
  CHECK(eval_error(json::array({1, {{"bad_in_array", 1}}})).find("bad_in_array") != std::string::npos);
  CHECK(eval_error({{"map", {json::array({1}), {{"bad_in_body", 1}}}}}).find("bad_in_body") != std::string::npos);
}

TEST_CASE("jsonlogic if/and/or do not evaluate branches they skip", "[jsonlogic]") {
  const json bad = {{"bad", 1}};
  CHECK(eval_ok({{"if", {true, 1, bad}}}) == 1);
  CHECK(eval_ok({{"if", {false, bad, 2}}}) == 2);
  CHECK(eval_ok({{"and", {false, bad}}}) == false);
  CHECK(eval_ok({{"or", {true, bad}}}) == true);
  CHECK(eval_ok({{"some", {json::array({1}), true}}}) == true);
  eval_error({{"if", {bad, 1, 2}}});
  eval_error({{"and", {true, bad}}});
}

TEST_CASE("jsonlogic bad specifier strings and * without arguments are errors", "[jsonlogic]") {
  CHECK(eval_error({{"ver_in", {"1.0", ">>1"}}}).find(">>1") != std::string::npos);
  eval_error({{"ver_in", {"1.0", "1.0"}}});
  eval_error({{"ver_in", {"1.0", 5}}});
  eval_error({{"ver_in", {"1.0", ">=1.*"}}});
  eval_error({{"*", json::array()}});
}

TEST_CASE("jsonlogic depth bombs return errors", "[jsonlogic]") {
  SECTION("deeply nested operations") {
    const json bomb = nested_not(100000);
    CHECK(eval_error(bomb).find("deeper") != std::string::npos);
    CHECK(validate_error(bomb).find("deeper") != std::string::npos);
    CHECK(jl::referenced_vars(bomb).empty());
  }
  SECTION("deeply nested literal arrays") {
    const json bomb = nested_array(100000);
    eval_error(bomb);
    validate_error(bomb);
  }
  SECTION("deeply nested data compared or stringified") {
    json data = json::object();
    data["a"] = nested_array(5000);
    data["b"] = nested_array(5000);
    CHECK(eval_error({{"==", {{{"var", "a"}}, {{"var", "b"}}}}}, data).find("nested") != std::string::npos);
    eval_error({{"cat", {{{"var", "a"}}}}}, data);
    eval_error({{"==", {{{"var", "a"}}, "1"}}}, data);
    CHECK_FALSE(jl::strict_equals(data["a"], data["b"]));
  }
  SECTION("a depth just inside the limit evaluates") {
    CHECK(eval_ok(nested_not(200), {{"x", true}}) == true);
    CHECK(jl::validate(nested_not(200)).has_value());
  }
  SECTION("the limit is configurable") {
    jl::Limits limits;
    limits.max_depth = 10;
    CHECK_FALSE(jl::evaluate(nested_not(20), json::object(), limits).has_value());
    CHECK_FALSE(jl::validate(nested_not(20), limits).has_value());
  }
}

TEST_CASE("jsonlogic work and size are bounded", "[jsonlogic]") {
  json big = json::array();
  for (int i = 0; i < 2000; ++i) big.push_back(i);
  const json data = {{"xs", big}};
  SECTION("nested map over a large array runs out of steps") {
    // Map bodies cannot see the root data, so the inner array is a literal.
    const json inner = {{"map", {big, {{"+", {{{"var", ""}}, 1}}}}}};
    const json outer = {{"map", {{{"var", "xs"}}, inner}}};
    CHECK(eval_error(outer, data).find("steps") != std::string::npos);
  }
  SECTION("doubling merge in reduce hits the size bound") {
    json xs = json::array();
    for (int i = 0; i < 40; ++i) xs.push_back(i);
    const json logic = {
        {"reduce", {xs, {{"merge", {{{"var", "accumulator"}}, {{"var", "accumulator"}}}}}, json::array({1})}}};
    CHECK(eval_error(logic).find("larger") != std::string::npos);
  }
  SECTION("doubling cat in reduce hits the size bound") {
    json xs = json::array();
    for (int i = 0; i < 40; ++i) xs.push_back(i);
    const json logic = {{"reduce", {xs, {{"cat", {{{"var", "accumulator"}}, {{"var", "accumulator"}}}}}, "ab"}}};
    CHECK(eval_error(logic).find("larger") != std::string::npos);
  }
}

TEST_CASE("jsonlogic NaN and Infinity results", "[jsonlogic]") {
  auto is_nan = [](const json& v) { return v.is_number_float() && std::isnan(v.get<double>()); };
  CHECK(is_nan(eval_ok({{"+", {true, 1}}})));
  CHECK(is_nan(eval_ok({{"+", {"abc"}}})));
  CHECK(is_nan(eval_ok({{"-", {"abc", 1}}})));
  CHECK(is_nan(eval_ok({{"%", {1, 0}}})));
  CHECK(is_nan(eval_ok({{"min", {1, "x"}}})));
  CHECK(
      is_nan(eval_ok({{"reduce", {json::array({1, 2}), {{"+", {{{"var", "current"}}, {{"var", "accumulator"}}}}}}}})));
  CHECK(eval_ok({{"/", {1, 0}}}).get<double>() == std::numeric_limits<double>::infinity());
  CHECK(eval_ok({{"/", {-1, 0}}}).get<double>() == -std::numeric_limits<double>::infinity());
  CHECK(eval_ok({{"min", json::array()}}).get<double>() == std::numeric_limits<double>::infinity());
  CHECK(eval_ok({{"max", json::array()}}).get<double>() == -std::numeric_limits<double>::infinity());
  CHECK(eval_ok({{"+", {"Infinity"}}}).get<double>() == std::numeric_limits<double>::infinity());
  // NaN is falsy and equal to nothing, itself included.
  CHECK(eval_ok({{"!", {{{"+", {"abc"}}}}}}) == true);
  CHECK(eval_ok({{"==", {{{"+", {"abc"}}}, {{"+", {"abc"}}}}}}) == false);
  CHECK(eval_ok({{"<", {{{"+", {"abc"}}}, 1}}}) == false);
  CHECK(eval_ok({{">=", {{{"+", {"abc"}}}, 1}}}) == false);
  CHECK(eval_ok({{"cat", {{{"+", {"abc"}}}, {{"/", {1, 0}}}}}}) == "NaNInfinity");
}

TEST_CASE("jsonlogic deliberate differences from json-logic-js", "[jsonlogic]") {
  // Arrays compare by value (JavaScript compares references).
  CHECK(eval_ok({{"==", {json::array({1, 2}), json::array({1, 2})}}}) == true);
  CHECK(eval_ok({{"===", {json::array({1}), json::array({1})}}}) == true);
  CHECK(eval_ok({{"in", {json::array({1}), json::array({json::array({1}), 2})}}}) == true);
  // Integral arithmetic results are JSON integers.
  CHECK(eval_ok({{"/", {6, 3}}}).is_number_integer());
  CHECK(eval_ok({{"*", {"2"}}}) == 2);
}

TEST_CASE("jsonlogic truthy and equality helpers", "[jsonlogic]") {
  CHECK_FALSE(jl::truthy(json(nullptr)));
  CHECK_FALSE(jl::truthy(json(false)));
  CHECK_FALSE(jl::truthy(json(0)));
  CHECK_FALSE(jl::truthy(json(0.0)));
  CHECK_FALSE(jl::truthy(json(std::nan(""))));
  CHECK_FALSE(jl::truthy(json("")));
  CHECK_FALSE(jl::truthy(json::array()));
  CHECK(jl::truthy(json("0")));
  CHECK(jl::truthy(json::object()));
  CHECK(jl::truthy(json(-1)));
  CHECK(jl::truthy(json::array({0})));
  CHECK(jl::loose_equals(json(1), json("1")));
  CHECK(jl::loose_equals(json(0), json(false)));
  CHECK_FALSE(jl::loose_equals(json(nullptr), json(0)));
  CHECK_FALSE(jl::strict_equals(json(1), json("1")));
  CHECK(jl::strict_equals(json(1), json(1.0)));
  CHECK(jl::strict_equals(json(std::uint64_t{5}), json(5)));
}

TEST_CASE("jsonlogic var returns the data in place", "[jsonlogic]") {
  const json facts = sample_facts();
  CHECK(eval_ok({{"var", "model"}}, facts) == facts["model"]);
  CHECK(eval_ok({{"var", "model.layers.2"}}, facts) == 3);
  CHECK(eval_ok({{"var", ""}}, facts) == facts);
}

TEST_CASE("jsonlogic validate", "[jsonlogic]") {
  CHECK(jl::validate(sample_rule()).has_value());
  CHECK(jl::validate(json(true)).has_value());
  CHECK(jl::validate(json::parse(R"({"if": [{"var": "a"}, {"cat": ["x", {"var": "b"}]}, null]})")).has_value());
  CHECK(jl::validate(json::parse(R"({"ver_in": [{"var": "v"}, {"var": "spec"}]})")).has_value());

  CHECK(validate_error({{"frobnicate", 1}}).find("frobnicate") != std::string::npos);
  CHECK(validate_error({{"and", {true, {{"in", {1, {{"nope", 1}}}}}}}}).find("nope") != std::string::npos);
  CHECK(validate_error({{"==", {1}}}).find("'==' takes 2 arguments, got 1") != std::string::npos);
  CHECK(validate_error({{"!", json::array()}}).find("takes 1 argument,") != std::string::npos);
  CHECK(validate_error({{"ver<", {"1.0", "1.0", "2"}}}).find("ver<") != std::string::npos);
  validate_error({{"<", {1, 2, 3, 4}}});
  validate_error({{"substr", {"x"}}});
  validate_error({{"reduce", {json::array()}}});
  validate_error({{"missing_some", {1}}});
  validate_error({{"ver_known", {"1", "2"}}});
  CHECK(validate_error({{"ver<", {{{"var", "v"}}, "0.2O.0"}}}).find("0.2O.0") != std::string::npos);
  CHECK(validate_error({{"ver_in", {{{"var", "v"}}, ">=0.20,<<0.28"}}}).find("<<0.28") != std::string::npos);
  validate_error({{"ver_in", {{{"var", "v"}}, 3}}});
  CHECK(validate_error(json::parse(R"({"a": 1, "b": 2})")).find("2 keys") != std::string::npos);
  validate_error(json::parse(R"({"!": {}})"));
}

TEST_CASE("jsonlogic referenced_vars", "[jsonlogic]") {
  CHECK(jl::referenced_vars(sample_rule()) == std::vector<std::string>{"spec.enabled", "lib.vllm.version", "gpu.sm",
                                                                       "spec.next_n", "model.dsa.present",
                                                                       "lib.deep_gemm.version"});
  // Duplicates once, first-seen order; defaults are walked; "" and computed names are skipped.
  CHECK(jl::referenced_vars(json::parse(R"({"or": [{"var": "b"}, {"var": ["a", {"var": "c"}]}, {"var": "b"},
                                                   {"var": ""}, {"var": {"cat": ["x", {"var": "d"}]}}]})")) ==
        std::vector<std::string>{"b", "a", "c", "d"});
  // missing / missing_some names count; per-item names inside map/filter/reduce do not.
  CHECK(jl::referenced_vars(json::parse(R"({"and": [{"missing": ["m1", "m2"]}, {"missing_some": [1, ["s1"]]},
                                                    {"missing": "m3"},
                                                    {"map": [{"var": "list"}, {"var": "item_field"}]},
                                                    {"reduce": [{"var": "xs"}, {"var": "current"}, {"var": "init"}]}]})")) ==
        std::vector<std::string>{"m1", "m2", "s1", "m3", "list", "xs", "init"});
  CHECK(jl::referenced_vars(json::parse(R"({"var": 1})")) == std::vector<std::string>{"1"});
  CHECK(jl::referenced_vars(json(42)).empty());
}

TEST_CASE("jsonlogic sample rule over sample facts", "[jsonlogic]") {
  json facts = sample_facts();
  CHECK(jl::truthy(eval_ok(sample_rule(), facts)));
  facts["lib"]["vllm"]["version"] = "0.28.0";
  CHECK_FALSE(jl::truthy(eval_ok(sample_rule(), facts)));
  facts["lib"]["vllm"]["version"] = nullptr;
  CHECK_FALSE(jl::truthy(eval_ok(sample_rule(), facts)));
}

// A run evaluates rules about 10k times over one facts object: the evaluator keeps no state
// between calls, so the 10,000th evaluation gives what the first did. (How long they take is a
// figure, not a test: bench/check_bench times the whole check, rule evaluation included.)
TEST_CASE("jsonlogic 10k evaluations over one facts object give the same results", "[jsonlogic]") {
  const json facts = sample_facts();
  const json rule = sample_rule();
  const json params = json::parse(R"({"cat": ["next_n=", {"var": "spec.next_n"}, " on ", {"var": "gpu.name"}]})");
  const json first_rule = eval_ok(rule, facts), first_params = eval_ok(params, facts);
  REQUIRE(jl::truthy(first_rule));
  REQUIRE(first_params.is_string());
  int same = 0;
  for (int i = 0; i < 10000; ++i) {
    auto r = jl::evaluate(i % 2 == 0 ? rule : params, facts);
    if (r && *r == (i % 2 == 0 ? first_rule : first_params)) ++same;
  }
  CHECK(same == 10000);
}

TEST_CASE("jsonlogic Program: compiled once, the same answers and errors as evaluate", "[jsonlogic]") {
  const json facts = {{"spec", {{"k", 3}, {"method", "mtp"}}}, {"xs", {1, 2, 3}}};
  SECTION("it keeps its own copy of the logic") {
    json logic = {{"and", {{{"==", {{{"var", "spec.method"}}, "mtp"}}}, {{">", {{{"var", "spec.k"}}, 2}}}}}};
    const jl::Program program(logic);
    logic = nullptr;
    CHECK(program.test(facts));
    CHECK(program.evaluate(facts).value() == true);
    CHECK(program.logic().is_object());
  }
  SECTION("var paths: nested, array index, length, fallback, whole document, computed") {
    CHECK(jl::Program(json{{"var", "xs.1"}}).evaluate(facts).value() == 2);
    CHECK(jl::Program(json{{"var", "xs.length"}}).evaluate(facts).value() == 3);
    CHECK(jl::Program(json{{"var", {"spec.nope", 7}}}).evaluate(facts).value() == 7);
    CHECK(jl::Program(json{{"var", ""}}).evaluate(facts).value() == facts);
    CHECK(jl::Program(json{{"var", {{"cat", {"spec", ".k"}}}}}).evaluate(facts).value() == 3);
    CHECK(jl::Program(json{{"map", {{{"var", "xs"}}, {{"*", {{{"var", ""}}, 2}}}}}}).evaluate(facts).value() ==
          json({2, 4, 6}));
  }
  SECTION("errors as evaluate gives them, and test() is false with the message") {
    for (const json& bad : {json{{"nope", 1}}, nested_not(300), json{{"ver_in", {"1.0", ">=x"}}}}) {
      const auto want = jl::evaluate(bad, facts);
      REQUIRE_FALSE(want.has_value());
      const jl::Program program(bad);
      const auto got = program.evaluate(facts);
      REQUIRE_FALSE(got.has_value());
      CHECK(got.error().message == want.error().message);
      std::string error;
      CHECK_FALSE(program.test(facts, &error));
      CHECK(error == want.error().message);
    }
  }
  SECTION("limits given at compile time apply") {
    jl::Limits limits;
    limits.max_depth = 10;
    CHECK_FALSE(jl::Program(nested_not(20), limits).evaluate(json::object()).has_value());
    CHECK(jl::Program(nested_not(8), limits).evaluate(json::object()).has_value());
  }
  SECTION("closed: everything it reads of the data is named literally") {
    CHECK(jl::Program(json{{"==", {{{"var", "spec.k"}}, 3}}}).closed());
    CHECK(jl::Program(json{{"missing", {"a.b", "spec.k"}}}).closed());
    CHECK(jl::Program(json{{"some", {{{"var", "xs"}}, {{">", {{{"var", ""}}, 2}}}}}}).closed());  // per item
    CHECK(jl::Program(json(true)).closed());
    CHECK_FALSE(jl::Program(json{{"var", ""}}).closed());  // the whole document
    CHECK_FALSE(jl::Program(json{{"var", {{"cat", {"spec", ".k"}}}}}).closed());
    CHECK_FALSE(jl::Program(json{{"missing", {{{"var", "name"}}}}}).closed());
    CHECK_FALSE(jl::Program(json{{"map", {{{"var", {{"cat", {"x", "s"}}}}}, {{"var", ""}}}}}).closed());
  }
  SECTION("a default Program is the literal null") {
    CHECK(jl::Program().evaluate(facts).value().is_null());
    CHECK_FALSE(jl::Program().test(facts));
  }
}
