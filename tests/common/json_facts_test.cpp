// Typed reads of dotted facts (common/json.hpp).
#include <cmath>
#include <cstdint>
#include <limits>

#include <catch2/catch.hpp>

#include "common/json.hpp"

using specprobe::fact_int;
using specprobe::Json;

TEST_CASE("fact_int takes integers and integral floats in int64 range, nothing else", "[common][json]") {
  const Json f = {{"a", {{"int", 4}, {"whole", 4.0}, {"half", 4.5}, {"text", "4"}, {"null", nullptr}}}};
  CHECK(fact_int(f, "a.int") == 4);
  CHECK(fact_int(f, "a.whole") == 4);
  CHECK_FALSE(fact_int(f, "a.half").has_value());
  CHECK_FALSE(fact_int(f, "a.text").has_value());
  CHECK_FALSE(fact_int(f, "a.null").has_value());
  CHECK_FALSE(fact_int(f, "a.missing").has_value());
}

// Converting a double outside int64_t's range is undefined behaviour (UBSan's float-cast-overflow
// in the sanitized builds): such a value is not an integer fact.
TEST_CASE("fact_int: a float beyond int64 range, infinite or NaN is not an integer", "[common][json]") {
  const double big = 0x1p63;  // 2^63: one past INT64_MAX
  const Json f = {{"huge", 1e300},
                  {"neg_huge", -1e300},
                  {"two63", big},
                  {"min", -big},
                  {"inf", std::numeric_limits<double>::infinity()},
                  {"nan", std::numeric_limits<double>::quiet_NaN()}};
  CHECK_FALSE(fact_int(f, "huge").has_value());
  CHECK_FALSE(fact_int(f, "neg_huge").has_value());
  CHECK_FALSE(fact_int(f, "two63").has_value());
  CHECK(fact_int(f, "min") == std::numeric_limits<int64_t>::min());
  CHECK_FALSE(fact_int(f, "inf").has_value());
  CHECK_FALSE(fact_int(f, "nan").has_value());
}
