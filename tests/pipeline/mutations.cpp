// Mutations of a serving config (see mutations.hpp).
#include "mutations.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <regex>

#include <yaml-cpp/yaml.h>

namespace specprobe::testing::mutate {
namespace {

// Written as a bare NaN token (JSON) or a plain NaN scalar (YAML).
constexpr std::string_view kNanMarker = "__SPECPROBE_NAN__";
constexpr size_t kMaxTreeDepth = 10;
constexpr size_t kMaxSites = 400;  // option tokens per file (deploy logs repeat whole command lines)

const std::string& long_string() {
  static const std::string s = [] {
    std::string out;
    while (out.size() < 10000) out += "long-value_";
    out.resize(10000);
    return out;
  }();
  return s;
}
constexpr const char* kUnicode =
    "\xC3\xA9\xE6\xBC\xA2\xE5\xAD\x97\xF0\x9F\x9A\x80\xE2\x80\x8F\xEF\xBB\xBF";  // é漢字🚀 RLM BOM

ojson edge(size_t i) {
  switch (i) {
    case 0:
      return nullptr;
    case 1:
      return 0;
    case 2:
      return -1;
    case 3:
      return "";
    case 4:
      return ojson::array();
    case 5:
      return ojson::object();
    case 6:
      return long_string();
    case 7:
      return true;
    case 8:
      return 1.5;
    case 9:
      return ojson{{"method", ojson{{"a", 1}}}, {"num_speculative_tokens", ojson::array({1, nullptr})}};
    case 10:
      return uint64_t{1} << 63;
    case 11:
      return std::string(kNanMarker);
    default:
      return kUnicode;
  }
}

// The edge value as one shell word.
std::string edge_word(size_t i) {
  switch (i) {
    case 0:
      return "null";
    case 1:
      return "0";
    case 2:
      return "-1";
    case 3:
      return "''";
    case 4:
      return "'[]'";
    case 5:
      return "'{}'";
    case 6:
      return "'" + long_string() + "'";
    case 7:
      return "true";
    case 8:
      return "1.5";
    case 9:
      return "'" + edge(9).dump() + "'";
    case 10:
      return "9223372036854775808";
    case 11:
      return "NaN";
    default:
      return std::string("'") + kUnicode + "'";
  }
}

std::optional<std::string> renamed(const std::string& name, size_t variant) {
  std::string s = name;
  const size_t n = s.size(), mid = n / 2;
  switch (variant) {
    case 0:
      if (s.find_first_of("-_") == std::string::npos) {
        if (s.empty()) return std::nullopt;
        s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
      } else {
        for (char& c : s) c = c == '-' ? '_' : c == '_' ? '-' : c;
      }
      break;
    case 1:
      if (n < 2) return std::nullopt;
      s.erase(mid, 1);
      break;
    case 2:
      if (n < 2) return std::nullopt;
      std::swap(s[mid - 1], s[mid]);
      break;
    default:
      if (n < 1) return std::nullopt;
      s.insert(mid, 1, s[mid]);
      break;
  }
  if (s == name) return std::nullopt;
  return s;
}

// A JSON object held in TEXT (spec config as a string), or null.
ojson json_in(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return nullptr;
  ojson j = ojson::parse(text, nullptr, false);
  return j.is_object() ? j : ojson(nullptr);
}

std::string dump_json(const ojson& j) {
  std::string s = j.dump(-1, ' ', false, ojson::error_handler_t::replace);
  const std::string marker = "\"" + std::string(kNanMarker) + "\"";
  for (size_t p = s.find(marker); p != std::string::npos; p = s.find(marker, p)) s.replace(p, marker.size(), "NaN");
  return s;
}

// ---- YAML <-> ordered JSON (the YAML 1.2 core schema for plain scalars, like common/yaml_json).

ojson plain_scalar(const std::string& s) {
  static const std::regex int_re(R"([-+]?[0-9]+)"), float_re(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (std::regex_match(s, int_re) || std::regex_match(s, float_re)) {
    ojson j = ojson::parse(s[0] == '+' ? s.substr(1) : s, nullptr, false);
    if (!j.is_discarded()) return j;
  }
  return s;
}

ojson from_yaml(const YAML::Node& n, int depth) {
  if (depth > 64) return nullptr;
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      ojson o = ojson::object();
      for (const auto& kv : n) o[kv.first.Scalar()] = from_yaml(kv.second, depth + 1);
      return o;
    }
    case YAML::NodeType::Sequence: {
      ojson a = ojson::array();
      for (const auto& e : n) a.push_back(from_yaml(e, depth + 1));
      return a;
    }
    case YAML::NodeType::Scalar:
      return n.Tag() == "!" ? ojson(n.Scalar()) : plain_scalar(n.Scalar());
    default:
      return nullptr;
  }
}

void to_yaml(YAML::Emitter& out, const ojson& j) {
  switch (j.type()) {
    case ojson::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [k, v] : j.items()) {
        out << YAML::Key << k << YAML::Value;
        to_yaml(out, v);
      }
      out << YAML::EndMap;
      break;
    case ojson::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& v : j) to_yaml(out, v);
      out << YAML::EndSeq;
      break;
    case ojson::value_t::string:
      if (j.get_ref<const std::string&>() == kNanMarker)
        out << "NaN";
      else
        out << YAML::DoubleQuoted << j.get<std::string>();
      break;
    case ojson::value_t::null:
      out << YAML::Null;
      break;
    default:  // booleans and numbers: their JSON text is a plain YAML scalar of the same type
      out << j.dump();
      break;
  }
}

std::string write_yaml(const std::vector<ojson>& docs) {
  std::string text;
  for (size_t i = 0; i < docs.size(); ++i) {
    YAML::Emitter out;
    to_yaml(out, docs[i]);
    if (i) text += "---\n";
    text += out.good() ? std::string(out.c_str()) : dump_json(docs[i]);
    text += "\n";
  }
  return text;
}

// ---- tree mutations

void enumerate_tree(const ojson& node, std::vector<Step>& path, std::vector<Mutation>& out, bool as_text_inner,
                    std::vector<TextMutation>* text_out, size_t site) {
  if (path.size() > kMaxTreeDepth) return;
  auto add = [&](Op op, uint8_t arg) {
    if (as_text_inner)
      text_out->push_back({site, op, arg, path});
    else
      out.push_back({TreeMutation{path, op, arg}, std::nullopt});
  };
  auto visit_child = [&](Step step, const ojson& child, const std::string* key) {
    path.push_back(std::move(step));
    add(Op::del, 0);
    for (size_t e = 0; e < kEdgeCount; ++e) add(Op::set, static_cast<uint8_t>(e));
    if (key)
      for (size_t r = 0; r < kRenameCount; ++r)
        if (renamed(*key, r)) add(Op::rename, static_cast<uint8_t>(r));
    if (child.is_structured()) {
      enumerate_tree(child, path, out, as_text_inner, text_out, site);
    } else if (child.is_string()) {
      const ojson inner = json_in(child.get_ref<const std::string&>());
      if (inner.is_object()) {
        path.push_back({Step::json_text, {}, 0});
        enumerate_tree(inner, path, out, as_text_inner, text_out, site);
        path.pop_back();
      }
    }
    path.pop_back();
  };
  if (node.is_object()) {
    for (const auto& [k, v] : node.items()) visit_child({Step::key, k, 0}, v, &k);
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) visit_child({Step::index, {}, i}, node[i], nullptr);
  }
}

// Applies OP/ARG at PATH[at..] under NODE.
void mutate_at(ojson& node, const std::vector<Step>& path, size_t at, Op op, uint8_t arg) {
  const Step& s = path[at];
  if (s.kind == Step::json_text) {
    ojson inner = json_in(node.get<std::string>());
    mutate_at(inner, path, at + 1, op, arg);
    node = dump_json(inner);
    return;
  }
  const bool last = at + 1 == path.size();
  if (s.kind == Step::key) {
    if (!last) return mutate_at(node[s.name], path, at + 1, op, arg);
    if (op == Op::del) {
      node.erase(s.name);
    } else if (op == Op::set) {
      node[s.name] = edge(arg);
    } else {
      ojson rebuilt = ojson::object();
      const std::string to = *renamed(s.name, arg);
      for (auto& [k, v] : node.items()) rebuilt[k == s.name ? to : k] = v;
      node = std::move(rebuilt);
    }
    return;
  }
  if (!last) return mutate_at(node[s.at], path, at + 1, op, arg);
  if (op == Op::del)
    node.erase(s.at);
  else
    node[s.at] = edge(arg);
}

// ---- option sites in text

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; }

// The end of the shell word starting at I (quotes and backslashes honoured).
size_t word_end(const std::string& t, size_t i) {
  while (i < t.size()) {
    const char c = t[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '|' || c == '&' || c == ')') break;
    if (c == '\\') {
      i += 2;
    } else if (c == '\'') {
      const size_t q = t.find('\'', i + 1);
      i = q == std::string::npos ? t.size() : q + 1;
    } else if (c == '"') {
      ++i;
      while (i < t.size() && t[i] != '"') i += t[i] == '\\' ? 2 : 1;
      i = std::min(i + 1, t.size());
    } else {
      ++i;
    }
  }
  return std::min(i, t.size());
}

void find_sites(Source& src) {
  const std::string& t = src.text;
  for (size_t i = 0; i + 2 < t.size() && src.sites.size() < kMaxSites; ++i) {
    if (t[i] != '-' || t[i + 1] != '-' || !std::isalpha(static_cast<unsigned char>(t[i + 2]))) continue;
    if (i > 0 && std::string_view(" \t\n'\"[,(").find(t[i - 1]) == std::string_view::npos) continue;
    OptionSite s;
    s.begin = i;
    size_t e = i + 2;
    while (e < t.size() && name_char(t[e])) ++e;
    s.name_end = s.value_begin = s.value_end = e;
    if (e < t.size() && t[e] == '=') {
      s.value_begin = e + 1;
      s.value_end = word_end(t, s.value_begin);
    } else if (e < t.size() && (t[e] == ' ' || t[e] == '\t')) {
      size_t v = e;
      while (v < t.size()) {
        if (t[v] == ' ' || t[v] == '\t')
          ++v;
        else if (t[v] == '\\' && v + 1 < t.size() && t[v + 1] == '\n')
          v += 2;
        else
          break;
      }
      const bool negative_number =
          v + 1 < t.size() && t[v] == '-' && std::isdigit(static_cast<unsigned char>(t[v + 1]));
      if (v < t.size() && std::string_view("\n\r#\\;|&)").find(t[v]) == std::string_view::npos &&
          (t[v] != '-' || negative_number)) {
        s.value_begin = v;
        s.value_end = word_end(t, v);
      }
    }
    const std::string_view value(t.data() + s.value_begin, s.value_end - s.value_begin);
    s.value_single_quoted = value.size() >= 2 && value.front() == '\'' && value.back() == '\'';
    src.site_json.push_back(s.value_single_quoted ? json_in(value.substr(1, value.size() - 2)) : ojson(nullptr));
    src.sites.push_back(s);
    i = e - 1;
  }
}

}  // namespace

void plan_mutations(Source& src) {
  const std::string& t = src.text;
  // The tree: JSON (by extension or a leading brace), else YAML documents.
  const size_t first = t.find_first_not_of(" \t\r\n");
  std::vector<ojson> docs;
  if (first != std::string::npos && (t[first] == '{' || t[first] == '[')) {
    ojson j = ojson::parse(t, nullptr, false);
    if (!j.is_discarded() && j.is_structured()) {
      docs.push_back(std::move(j));
      src.tree_is_json = true;
    }
  }
  if (docs.empty() && src.path.find(".sh") == std::string::npos && src.path.find(".log") == std::string::npos) {
    try {
      for (const YAML::Node& n : YAML::LoadAll(t))
        if (n.IsMap() || n.IsSequence()) docs.push_back(from_yaml(n, 0));
    } catch (const std::exception&) {
      docs.clear();
    }
  }
  std::vector<Step> path;
  for (size_t d = 0; d < docs.size(); ++d) {
    std::vector<Mutation> ms;
    enumerate_tree(docs[d], path, ms, false, nullptr, 0);
    for (auto& m : ms) {
      m.tree->path.insert(m.tree->path.begin(), Step{Step::index, {}, d});  // the document
      src.mutations.push_back(std::move(m));
    }
  }
  src.docs = ojson(docs);
  // Option tokens in the text.
  find_sites(src);
  for (size_t i = 0; i < src.sites.size(); ++i) {
    const OptionSite& s = src.sites[i];
    const std::string name = t.substr(s.begin + 2, s.name_end - s.begin - 2);
    src.mutations.push_back({std::nullopt, TextMutation{i, Op::del, 0, {}}});
    for (size_t e = 0; e < kEdgeCount; ++e)
      src.mutations.push_back({std::nullopt, TextMutation{i, Op::set, static_cast<uint8_t>(e), {}}});
    for (size_t r = 0; r < kRenameCount; ++r)
      if (renamed(name, r))
        src.mutations.push_back({std::nullopt, TextMutation{i, Op::rename, static_cast<uint8_t>(r), {}}});
    if (src.site_json[i].is_object()) {
      std::vector<TextMutation> inner;
      std::vector<Mutation> unused;
      enumerate_tree(src.site_json[i], path, unused, true, &inner, i);
      for (auto& m : inner) src.mutations.push_back({std::nullopt, std::move(m)});
    }
  }
}

std::string apply(const Source& src, const Mutation& m) {
  if (m.tree) {
    ojson docs = src.docs;
    mutate_at(docs, m.tree->path, 0, m.tree->op, m.tree->arg);
    if (src.tree_is_json) return dump_json(docs[0]);
    std::vector<ojson> list(docs.begin(), docs.end());
    return write_yaml(list);
  }
  const TextMutation& tm = *m.text;
  const OptionSite& s = src.sites[tm.site];
  std::string t = src.text;
  if (!tm.inner.empty()) {
    ojson inner = src.site_json[tm.site];
    mutate_at(inner, tm.inner, 0, tm.op, tm.arg);
    std::string word = dump_json(inner);
    // A single quote inside would end the shell word: close, escape, reopen.
    for (size_t p = word.find('\''); p != std::string::npos; p = word.find('\'', p + 4)) word.replace(p, 1, "'\\''");
    t.replace(s.value_begin, s.value_end - s.value_begin, "'" + word + "'");
    return t;
  }
  switch (tm.op) {
    case Op::del:
      t.erase(s.begin, s.value_end - s.begin);
      break;
    case Op::set:
      if (s.value_end > s.value_begin)
        t.replace(s.value_begin, s.value_end - s.value_begin, edge_word(tm.arg));
      else
        t.insert(s.name_end, " " + edge_word(tm.arg));
      break;
    case Op::rename:
      t.replace(s.begin + 2, s.name_end - s.begin - 2,
                *renamed(t.substr(s.begin + 2, s.name_end - s.begin - 2), tm.arg));
      break;
  }
  return t;
}

std::string describe(const Source& src, const Mutation& m) {
  auto path_text = [](const std::vector<Step>& path, size_t from) {
    std::string out;
    for (size_t i = from; i < path.size(); ++i) {
      const Step& s = path[i];
      if (s.kind == Step::key)
        out += (out.empty() ? "" : ".") + s.name;
      else if (s.kind == Step::index)
        out += "[" + std::to_string(s.at) + "]";
      else
        out += "<json>";
    }
    return out;
  };
  auto what = [](Op op, uint8_t arg) {
    if (op == Op::del) return std::string("delete");
    if (op == Op::set) return "set to " + std::string(kEdgeNames[arg]);
    return "rename (" + std::string(kRenameNames[arg]) + ")";
  };
  if (m.tree) return what(m.tree->op, m.tree->arg) + " " + path_text(m.tree->path, 0);
  const OptionSite& s = src.sites[m.text->site];
  std::string opt = src.text.substr(s.begin, s.name_end - s.begin);
  if (!m.text->inner.empty()) opt += " " + path_text(m.text->inner, 0);
  return what(m.text->op, m.text->arg) + " " + opt + " (byte " + std::to_string(s.begin) + ")";
}

}  // namespace specprobe::testing::mutate
