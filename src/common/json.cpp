// Dotted-path access into JSON documents (the facts document above all).
#include "common/json.hpp"

#include <cassert>
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

// Whether S is ASCII only (then the escapes below are all it needs; other text goes to nlohmann's
// escaper, which validates UTF-8).
bool plain_ascii(std::string_view s) {
  for (const char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

void dump_string(std::string_view s, std::string& out) {
  if (!plain_ascii(s)) {
    // UTF-8 validation and the replacement of invalid bytes exactly as nlohmann does them.
    out += Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t run = 0;  // start of the bytes not written yet
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    out += '\\';
    switch (c) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '\b':
        out += 'b';
        break;
      case '\t':
        out += 't';
        break;
      case '\n':
        out += 'n';
        break;
      case '\f':
        out += 'f';
        break;
      case '\r':
        out += 'r';
        break;
      default:
        out += "u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

void newline_indent(std::string& out, int indent, int depth) {
  out += '\n';
  out.append(static_cast<size_t>(indent) * static_cast<size_t>(depth), ' ');
}

void dump_value(const Json& v, std::string& out, int indent, int depth) {
  char buf[24];
  switch (v.type()) {
    case Json::value_t::object: {
      if (v.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ',';
        first = false;
        if (indent >= 0) newline_indent(out, indent, depth + 1);
        dump_string(it.key(), out);
        out += indent >= 0 ? ": " : ":";
        dump_value(it.value(), out, indent, depth + 1);
      }
      if (indent >= 0) newline_indent(out, indent, depth);
      out += '}';
      return;
    }
    case Json::value_t::array: {
      if (v.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ',';
        first = false;
        if (indent >= 0) newline_indent(out, indent, depth + 1);
        dump_value(e, out, indent, depth + 1);
      }
      if (indent >= 0) newline_indent(out, indent, depth);
      out += ']';
      return;
    }
    case Json::value_t::string:
      dump_string(v.get_ref<const std::string&>(), out);
      return;
    case Json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::number_integer: {
      auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v.get<int64_t>());
      out.append(buf, p);
      return;
    }
    case Json::value_t::number_unsigned: {
      auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v.get<uint64_t>());
      out.append(buf, p);
      return;
    }
    case Json::value_t::null:
      out += "null";
      return;
    default:  // floating point (nlohmann's shortest round-trip form), binary, discarded
      out += v.dump(-1, ' ', false, Json::error_handler_t::replace);
      return;
  }
}

}  // namespace

void dump_json(const Json& value, std::string& out, int indent, int depth) { dump_value(value, out, indent, depth); }
void dump_json_string(std::string_view s, std::string& out) { dump_string(s, out); }
void json_newline(std::string& out, int indent, int depth) {
  if (indent >= 0) newline_indent(out, indent, depth);
}

void JsonContainerWriter::separate() {
  if (!first_) out_ += ',';
  first_ = false;
  json_newline(out_, indent_, depth_ + 1);
}

void JsonContainerWriter::end(char close) {
  if (!first_) json_newline(out_, indent_, depth_);
  out_ += close;
}

JsonObjectWriter& JsonObjectWriter::key(std::string_view name) {
#ifndef NDEBUG
  assert((first_ || last_ < name) && "JsonObjectWriter: members out of key order");
  last_.assign(name);
#endif
  separate();
  dump_string(name, out_);
  out_ += indent_ >= 0 ? ": " : ":";
  return *this;
}

void JsonObjectWriter::strings(const std::vector<std::string>& v) {
  JsonArrayWriter a(out_, indent_, depth_ + 1);
  for (const std::string& s : v) {
    a.next();
    dump_string(s, out_);
  }
  a.close();
}

void JsonObjectWriter::integer(int64_t v) {
  char buf[24];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, p);
}

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
