// Value conversion and fact writing shared by the vLLM and SGLang option builders.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "common/ascii.hpp"
#include "common/excerpt.hpp"
#include "inputs/options/options.hpp"

namespace specprobe::serving {

std::string canonical_name(std::string_view written) {
  while (!written.empty() && written.front() == '-') written.remove_prefix(1);
  std::string out(written);
  const size_t dot = out.find('.');
  for (size_t i = 0; i < out.size() && i < dot; ++i)
    if (out[i] == '_') out[i] = '-';
  return out;
}

std::string to_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

Expected<int64_t> to_int(const Json& v, std::string_view what, const SourceLocation& where, bool human) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      return input_error(fmt::format("{} is out of range: {}", what, excerpt(v)), where);
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e18) return static_cast<int64_t>(d);
    return input_error(fmt::format("{} must be an integer, got {}", what, excerpt(v)), where);
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (human) {
      if (auto h = human_readable_int(s)) return *h;
    } else {
      std::string_view t = s;
      while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
      while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
      bool neg = false;
      if (!t.empty() && (t.front() == '-' || t.front() == '+')) {
        neg = t.front() == '-';
        t.remove_prefix(1);
      }
      int64_t out = 0;
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
      if (!t.empty() && ec == std::errc() && p == t.data() + t.size()) return neg ? -out : out;
    }
    return input_error(fmt::format("{} must be an integer, got '{}'", what, excerpt(s)), where);
  }
  return input_error(fmt::format("{} must be an integer, got {}", what, excerpt(v)), where);
}

Expected<bool> to_bool(const Json& v, std::string_view what, const SourceLocation& where) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1)) return v.get<int64_t>() == 1;
  if (v.is_string()) {
    const std::string s = ascii_lower(v.get<std::string>());
    if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  }
  return input_error(fmt::format("{} takes no value (a flag), got {}", what, excerpt(v)), where);
}

Expected<double> to_float(const Json& v, std::string_view what, const SourceLocation& where) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    try {
      size_t used = 0;
      const double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (...) {
    }
    return input_error(fmt::format("{} must be a number, got '{}'", what, excerpt(s)), where);
  }
  return input_error(fmt::format("{} must be a number, got {}", what, excerpt(v)), where);
}

void write_common_facts(PlanWriter& w, const ReadContext& ctx, std::string_view engine) {
  const SourceLocation file{ctx.path};
  w.set("input.form", std::string(to_string(ctx.form)), file);
  w.set("input.path", ctx.path, file);
  w.set("engine.name", std::string(engine), file);
  for (const auto& [name, setting] : ctx.env) {
    // env.<NAME>: NAME may not contain dots in a shell, so the dotted path is safe.
    w.set("env." + name, setting.value, setting.where);
  }
}

}  // namespace specprobe::serving
