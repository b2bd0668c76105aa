// YAML -> JSON with core-schema scalar typing.
#include "common/yaml_json.hpp"

#include <charconv>
#include <cmath>

namespace specprobe {
namespace {

Json plain_scalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  {
    int64_t v = 0;
    const char* b = s.data();
    const char* e = s.data() + s.size();
    if (*b == '+') ++b;
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec == std::errc() && p == e) return v;
  }
  {
    // Floats: digits with '.', or exponent. std::from_chars for double is in g++ 11+.
    bool has_digit = false, ok = true;
    for (char c : s) {
      if (std::isdigit(static_cast<unsigned char>(c)))
        has_digit = true;
      else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-')
        ok = false;
    }
    if (ok && has_digit) {
      double d = 0;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
      if (ec == std::errc() && p == s.data() + s.size() && std::isfinite(d)) return d;
    }
  }
  return s;
}

// Length of the valid UTF-8 sequence starting at S[I] (0 when there is none).
size_t utf8_len(const std::string& s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  const auto c1 = static_cast<unsigned char>(n > 1 ? s[i + 1] : 0);
  if ((n == 2 && c < 0xC2) || (n == 3 && c == 0xE0 && c1 < 0xA0) || (n == 3 && c == 0xED && c1 >= 0xA0) ||
      (n == 4 && c == 0xF0 && c1 < 0x90) || (n == 4 && (c > 0xF4 || (c == 0xF4 && c1 >= 0x90))))
    return 0;  // overlong, surrogate or beyond U+10FFFF
  return n;
}

struct Walker {
  const std::string& file;
  int max_depth;
  size_t max_nodes;
  size_t nodes = 0;

  Expected<Json> walk(const YAML::Node& n, int depth) {
    if (++nodes > max_nodes)
      return input_error("document expands to too many nodes (alias bomb?)",
                         {file, n.Mark().line + 1, n.Mark().column + 1});
    if (depth > max_depth)
      return input_error(fmt::format("nesting deeper than {} levels", max_depth),
                         {file, n.Mark().line + 1, n.Mark().column + 1});
    switch (n.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return Json(nullptr);
      case YAML::NodeType::Scalar:
        if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") return Json(yaml_utf8(n.Scalar()));
        return plain_scalar(yaml_utf8(n.Scalar()));
      case YAML::NodeType::Sequence: {
        Json a = Json::array();
        for (const auto& item : n) {
          auto v = walk(item, depth + 1);
          if (!v) return v.error();
          a.push_back(std::move(*v));
        }
        return a;
      }
      case YAML::NodeType::Map: {
        Json o = Json::object();
        for (const auto& kv : n) {
          if (!kv.first.IsScalar())
            return input_error("mapping keys must be scalars",
                               {file, kv.first.Mark().line + 1, kv.first.Mark().column + 1});
          auto v = walk(kv.second, depth + 1);
          if (!v) return v.error();
          o[yaml_utf8(kv.first.Scalar())] = std::move(*v);
        }
        return o;
      }
    }
    return Json(nullptr);
  }
};

}  // namespace

std::string yaml_utf8(std::string s) {
  size_t i = 0;
  while (i < s.size() && utf8_len(s, i)) i += utf8_len(s, i);
  if (i == s.size()) return s;  // the common case: already valid
  std::string out = s.substr(0, i);
  while (i < s.size()) {
    if (const size_t n = utf8_len(s, i)) {
      out.append(s, i, n);
      i += n;
    } else {
      const auto c = static_cast<unsigned char>(s[i++]);
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

Expected<Json> yaml_to_json(const YAML::Node& node, const std::string& file, int max_depth, size_t max_nodes) {
  try {
    Walker w{file, max_depth, max_nodes};
    return w.walk(node, 0);
  } catch (const YAML::Exception& e) {
    return input_error(e.msg, {file, e.mark.line + 1, e.mark.column + 1});
  }
}

Expected<Json> parse_yaml_text(std::string_view text, const std::string& file) {
  try {
    YAML::Node n = YAML::Load(std::string(text));
    return yaml_to_json(n, file);
  } catch (const YAML::Exception& e) {
    return input_error(e.msg, {file, e.mark.line + 1, e.mark.column + 1});
  } catch (const std::exception& e) {
    return input_error(e.what(), {file});
  }
}

}  // namespace specprobe
