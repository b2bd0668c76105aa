// vLLM --config files: a YAML (yaml-cpp) or JSON (nlohmann) mapping of long option names to
// values -> RawOptions with the location of every key, including keys inside nested mappings
// and inside JSON strings. Values are typed the way PyYAML's safe_load would type them.
#include <algorithm>
#include <memory>
#include <set>

#include <yaml-cpp/yaml.h>

#include "common/excerpt.hpp"
#include "common/yaml_json.hpp"
#include "inputs/options/options.hpp"

namespace specprobe::serving {
namespace {

constexpr size_t kMaxNodes = 200000;  // bounds alias expansion ("billion laughs")

SourceLocation yaml_loc(const LineIndex& index, const YAML::Mark& m) {
  SourceLocation loc;
  loc.file = index.file();
  if (m.line >= 0) {
    loc.line = m.line + 1;
    loc.column = m.column + 1;
  }
  return loc;
}

// Source offsets of each byte of a single-line flow scalar's decoded value; empty when the
// mapping is not 1:1 enough to trust (block scalars, multi-line scalars).
std::vector<uint32_t> scalar_offsets(const std::string& text, size_t start, const std::string& decoded) {
  std::vector<uint32_t> offs;
  if (start >= text.size()) return {};
  const char q = text[start];
  size_t i = start;
  if (q == '\'' || q == '"')
    ++i;
  else if (q == '|' || q == '>')
    return {};
  for (size_t k = 0; k < decoded.size(); ++k) {
    if (i >= text.size() || text[i] == '\n') return {};
    if (q == '\'' && text[i] == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
      offs.push_back(static_cast<uint32_t>(i));
      i += 2;
      continue;
    }
    if (q == '"' && text[i] == '\\' && i + 1 < text.size()) {
      offs.push_back(static_cast<uint32_t>(i));
      const char e = text[i + 1];
      i += e == 'x' ? 4 : e == 'u' ? 6 : e == 'U' ? 10 : 2;
      continue;
    }
    offs.push_back(static_cast<uint32_t>(i));
    ++i;
  }
  return offs;
}

struct YamlWalker {
  const std::string& text;
  const LineIndex& index;
  std::shared_ptr<const LineIndex> shared;
  size_t nodes = 0;

  Expected<Json> convert(const YAML::Node& n, int depth, const std::string& path,
                         std::map<std::string, SourceLocation>& inner) {
    if (++nodes > kMaxNodes)
      return input_error("YAML document expands to too many nodes (alias expansion?)", yaml_loc(index, n.Mark()));
    if (depth > kMaxNesting)
      return input_error(fmt::format("YAML nests deeper than {} levels", kMaxNesting), yaml_loc(index, n.Mark()));
    switch (n.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return Json(nullptr);
      case YAML::NodeType::Scalar:
        if (n.Tag() == "?") return yaml_plain_scalar(yaml_utf8(n.Scalar()));
        return Json(yaml_utf8(n.Scalar()));  // quoted or explicitly tagged: a string
      case YAML::NodeType::Sequence: {
        Json arr = Json::array();
        size_t i = 0;
        for (const auto& item : n) {
          auto v = convert(item, depth + 1, path + (path.empty() ? "" : ".") + std::to_string(i++), inner);
          if (!v) return v.error();
          arr.push_back(std::move(*v));
        }
        return arr;
      }
      case YAML::NodeType::Map: {
        Json obj = Json::object();
        for (const auto& kv : n) {
          if (!kv.first.IsScalar())
            return input_error("a mapping key must be a plain name", yaml_loc(index, kv.first.Mark()));
          const std::string key = yaml_utf8(kv.first.Scalar());
          const std::string sub = path.empty() ? key : path + "." + key;
          inner[sub] = yaml_loc(index, kv.first.Mark());
          auto v = convert(kv.second, depth + 1, sub, inner);
          if (!v) return v.error();
          obj[key] = std::move(*v);
        }
        return obj;
      }
    }
    return Json(nullptr);
  }
};

}  // namespace

Expected<std::vector<RawOption>> read_yaml_options(const std::string& text, const LineIndex& index,
                                                   std::vector<ReaderNote>& notes) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return input_error(fmt::format("invalid YAML: {}", e.msg), yaml_loc(index, e.mark));
  } catch (const std::exception& e) {
    return input_error(fmt::format("invalid YAML: {}", e.what()), SourceLocation{index.file()});
  }
  std::vector<RawOption> out;
  try {
    if (root.IsSequence())
      return input_error("top level is a list; a vLLM config file is a mapping of option names to values",
                         yaml_loc(index, root.Mark()));
    if (!root.IsMap())
      return input_error("not a vLLM config (expected a mapping of option names to values) and no serve command found",
                         yaml_loc(index, root.Mark()));
    YamlWalker walker{text, index, std::make_shared<LineIndex>(index)};
    std::set<std::string> seen;
    for (const auto& kv : root) {
      if (!kv.first.IsScalar())
        return input_error("a top-level key must be an option name", yaml_loc(index, kv.first.Mark()));
      RawOption o;
      o.name = yaml_utf8(kv.first.Scalar());
      o.where = yaml_loc(index, kv.first.Mark());
      if (!seen.insert(canonical_name(o.name)).second)
        notes.push_back({"warning",
                         fmt::format("key '{}' appears more than once; the later value wins", excerpt(o.name)),
                         o.where});
      std::map<std::string, SourceLocation> inner;
      auto v = walker.convert(kv.second, 1, "", inner);
      if (!v) return v.error();
      o.value = std::move(*v);
      o.inner = std::move(inner);
      if (o.value.is_string() && kv.second.Mark().pos >= 0) {
        auto offs = scalar_offsets(text, static_cast<size_t>(kv.second.Mark().pos), o.value.get<std::string>());
        if (!offs.empty()) {
          auto idx = walker.shared;
          const SourceLocation fallback = yaml_loc(index, kv.second.Mark());
          o.value_pos = [idx, offs = std::move(offs), fallback](size_t off) {
            return off < offs.size() ? idx->at(offs[off]) : fallback;
          };
        } else {
          const SourceLocation at = yaml_loc(index, kv.second.Mark());
          o.value_pos = [at](size_t) { return at; };
        }
      }
      out.push_back(std::move(o));
    }
  } catch (const YAML::Exception& e) {
    return input_error(fmt::format("invalid YAML: {}", e.msg), yaml_loc(index, e.mark));
  }
  return out;
}

Expected<std::vector<RawOption>> read_json_options(const std::string& text, const LineIndex& index) {
  auto shared = std::make_shared<LineIndex>(index);
  auto doc = parse_json(
      text, [shared](size_t off) { return shared->at(off); }, "config file");
  if (!doc) return doc.error();
  const auto keys = json_key_offsets(text);
  size_t first = 0;
  while (first < text.size() && std::isspace(static_cast<unsigned char>(text[first]))) ++first;
  if (doc->is_array())
    return input_error("top level is a list; a vLLM config file is a mapping of option names to values",
                       index.at(first));
  if (!doc->is_object())
    return input_error("not a vLLM config (expected a JSON object of option names to values)", index.at(first));
  std::vector<RawOption> out;
  for (auto it = doc->begin(); it != doc->end(); ++it) {
    RawOption o;
    o.name = it.key();
    o.value = it.value();
    auto k = keys.find(it.key());
    o.where = k != keys.end() ? index.at(k->second) : index.at(first);
    const std::string prefix = it.key() + ".";
    for (auto j = keys.lower_bound(prefix); j != keys.end() && j->first.compare(0, prefix.size(), prefix) == 0; ++j)
      o.inner[j->first.substr(prefix.size())] = index.at(j->second);
    out.push_back(std::move(o));
  }
  // nlohmann keeps keys sorted; the order of the file decides which duplicate/dotted key wins.
  std::stable_sort(out.begin(), out.end(), [](const RawOption& a, const RawOption& b) {
    return std::pair(a.where.line, a.where.column) < std::pair(b.where.line, b.where.column);
  });
  return out;
}

}  // namespace specprobe::serving
