// Dotted-path access into JSON documents (the facts document above all).
#include "common/json.hpp"

#include <charconv>
#include <cmath>

namespace specprobe {
namespace {

bool parse_index(std::string_view s, size_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

void flatten_into(const Json& v, const std::string& prefix, Json& out) {
  if (v.is_object() && !v.empty()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      flatten_into(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else {
    out[prefix] = v;
  }
}

}  // namespace

const Json* find_fact(const Json& facts, std::string_view dotted) {
  const Json* cur = &facts;
  while (true) {
    const size_t dot = dotted.find('.');
    const std::string_view step = dotted.substr(0, dot);
    if (cur->is_object()) {
      auto it = cur->find(step);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    } else if (cur->is_array()) {
      size_t i = 0;
      if (!parse_index(step, i) || i >= cur->size()) return nullptr;
      cur = &(*cur)[i];
    } else {
      return nullptr;
    }
    if (dot == std::string_view::npos) return cur;
    dotted.remove_prefix(dot + 1);
  }
}

void set_fact(Json& facts, std::string_view dotted, Json value) {
  Json* cur = &facts;
  while (true) {
    const size_t dot = dotted.find('.');
    const std::string step(dotted.substr(0, dot));
    if (!cur->is_object()) *cur = Json::object();
    if (dot == std::string_view::npos) {
      (*cur)[step] = std::move(value);
      return;
    }
    cur = &(*cur)[step];
    dotted.remove_prefix(dot + 1);
  }
}

void erase_fact(Json& facts, std::string_view dotted) {
  const size_t dot = dotted.rfind('.');
  Json* parent = &facts;
  if (dot != std::string_view::npos) {
    const Json* p = find_fact(facts, dotted.substr(0, dot));
    if (!p || !p->is_object()) return;
    parent = const_cast<Json*>(p);
    dotted.remove_prefix(dot + 1);
  }
  if (parent->is_object()) parent->erase(std::string(dotted));
}

std::optional<std::string> fact_string(const Json& facts, std::string_view dotted) {
  const Json* v = find_fact(facts, dotted);
  if (!v || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

std::optional<int64_t> fact_int(const Json& facts, std::string_view dotted) {
  const Json* v = find_fact(facts, dotted);
  if (!v) return std::nullopt;
  if (v->is_number_integer()) return v->get<int64_t>();
  if (v->is_number_float()) {
    // Range first: converting a double outside int64_t's range (1e300, inf, nan) is undefined.
    const double d = v->get<double>();
    if (d >= -0x1p63 && d < 0x1p63 && d == std::trunc(d)) return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

std::optional<bool> fact_bool(const Json& facts, std::string_view dotted) {
  const Json* v = find_fact(facts, dotted);
  if (!v || !v->is_boolean()) return std::nullopt;
  return v->get<bool>();
}

Json flatten_facts(const Json& facts) {
  Json out = Json::object();
  flatten_into(facts, "", out);
  return out;
}

}  // namespace specprobe
