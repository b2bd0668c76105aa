// The index phase: model.safetensors.index.json, read by the shared strict scanner
// (common/json_scan) with nlohmann's SAX parser as the fallback that decides, and words, whatever
// the scanner does not accept; then the index facts (present, total_size, weight_map_entries) and
// a problem for each weight_map entry that is not a string.
#include <fstream>
#include <unordered_map>

#include "common/excerpt.hpp"
#include "common/json_scan.hpp"
#include "common/paths.hpp"
#include "inputs/checkpoint/analysis_internal.hpp"

namespace specprobe::checkpoint {
namespace {

class IndexSax : public nlohmann::json_sax<Json> {
 public:
  explicit IndexSax(IndexData& d) : d_(d) {}
  bool null() override { return scalar(false); }
  bool boolean(bool) override { return scalar(false); }
  bool number_integer(number_integer_t v) override {
    if (in_metadata() && key_ == "total_size" && v >= 0) d_.total_size = static_cast<uint64_t>(v);
    return scalar(false);
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (in_metadata() && key_ == "total_size") d_.total_size = v;
    return scalar(false);
  }
  bool number_float(number_float_t, const string_t&) override { return scalar(false); }
  bool string(string_t& v) override {
    if (in_weight_map()) {
      auto [it, fresh] = file_ids_.emplace(v, d_.files.size());
      if (fresh) d_.files.push_back(v);
      d_.entries.emplace_back(d_.names.emplace_back(key_), static_cast<uint32_t>(it->second));
      return true;
    }
    return scalar(false);
  }
  bool binary(binary_t&) override { return scalar(false); }
  bool start_object(std::size_t) override {
    if (in_weight_map()) d_.non_string.push_back(key_);
    path_.push_back(depth() == 0 ? std::string() : key_);
    if (depth() == 2 && key_ == "weight_map") seen_map_ = true;
    return true;
  }
  bool end_object() override {
    path_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    if (in_weight_map()) d_.non_string.push_back(key_);
    path_.push_back("[");
    return true;
  }
  bool end_array() override {
    path_.pop_back();
    return true;
  }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& e) override {
    error = fmt::format("invalid JSON at byte {}: {}", pos, json_error_reason(e));
    return false;
  }
  bool weight_map_seen() const { return seen_map_; }
  bool top_is_object = false;
  std::string error;

 private:
  size_t depth() const { return path_.size(); }
  bool in_weight_map() const { return depth() == 2 && path_[1] == "weight_map"; }
  bool in_metadata() const { return depth() == 2 && path_[1] == "metadata"; }
  bool scalar(bool) {
    if (in_weight_map()) d_.non_string.push_back(key_);
    return true;
  }
  IndexData& d_;
  std::vector<std::string> path_;
  std::string key_;
  std::unordered_map<std::string, size_t> file_ids_;
  bool seen_map_ = false;
};

// The fast path: the shared strict scanner, recording what IndexSax records. Returns false, leaving D partly filled, on
// anything it does not accept; values nested past 256 levels are left to the SAX parser too.
class IndexScanner {
 public:
  IndexScanner(char* s, size_t n, IndexData& d) : sc_(s, n, {.max_depth = 256}), d_(d) {}

  bool run() {
    if (!sc_.validate_utf8() || !sc_.members([&](std::string_view key) { return top_value(key); })) return false;
    return sc_.at_end();
  }
  bool seen_map = false;

 private:
  bool top_value(std::string_view key) {
    if (sc_.peek('{')) {
      if (key == "weight_map") {
        seen_map = true;
        return sc_.members([&](std::string_view name) { return weight_map_value(name); });
      }
      if (key == "metadata") return sc_.members([&](std::string_view k) { return metadata_value(k); });
    }
    return sc_.skip_value(0);
  }
  bool weight_map_value(std::string_view name) {
    if (sc_.peek('"')) {
      std::string_view file;
      if (!sc_.string(file)) return false;
      auto [id, fresh] = file_ids_.insert(file, static_cast<uint32_t>(d_.files.size()));
      if (fresh) d_.files.emplace_back(file);
      d_.entries.emplace_back(name, *id);
      return true;
    }
    d_.non_string.emplace_back(name);
    return sc_.skip_value(0);
  }
  bool metadata_value(std::string_view key) {
    if (key != "total_size" || !sc_.peek_number()) return sc_.skip_value(0);
    // nlohmann: an integer literal that fits uint64 (or int64 when negative) is an integer,
    // anything else a float; IndexSax keeps non-negative integers.
    const size_t start = sc_.pos();
    if (!sc_.number()) return false;
    const std::string_view lit(sc_.data() + start, sc_.pos() - start);
    if (lit.find_first_of(".eE") != std::string_view::npos) return true;
    if (lit[0] == '-') {
      if (lit == "-0") d_.total_size = 0;
      return true;
    }
    uint64_t v = 0;
    for (char c : lit) {
      const uint64_t digit = static_cast<uint64_t>(c - '0');
      if (v > (UINT64_MAX - digit) / 10) return true;  // a float to nlohmann
      v = v * 10 + digit;
    }
    d_.total_size = v;
    return true;
  }
  JsonScanner sc_;
  IndexData& d_;
  NameIndex file_ids_;
};

// The file, whole: false with ERR when it is not a regular file or is past the cap.
bool slurp_index(const std::string& path, std::string& text, std::string& err) {
  // A FIFO or device would block or never end; the largest real indexes are a few MiB.
  constexpr uintmax_t kMaxIndexBytes = 256u << 20;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    err = "the index is not a regular file";
    return false;
  }
  if (const uintmax_t size = fs::file_size(path, ec); ec || size > kMaxIndexBytes) {
    err = ec ? "cannot stat the index"
             : fmt::format("the index has {} bytes, more than the {} MiB cap", size, kMaxIndexBytes >> 20);
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err = "cannot open the index";
    return false;
  }
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxIndexBytes) {  // grew since the stat
      err = fmt::format("the index has more than the {} MiB cap", kMaxIndexBytes >> 20);
      return false;
    }
  }
  return true;
}

}  // namespace

bool read_index(const std::string& path, IndexData& d, std::string& err) {
  std::string text;
  if (!slurp_index(path, text, err)) return false;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') {
    err = "index is not a JSON object";
    return false;
  }
  d.text = text;  // scanned (and unescaped) in its own copy; TEXT stays for the SAX path
  IndexScanner scan(d.text.data(), d.text.size(), d);
  if (scan.run()) {
    if (!scan.seen_map) {
      err = "index has no weight_map object";
      return false;
    }
    d.valid = true;
    return true;
  }
  d = IndexData{};
  IndexSax sax(d);
  if (!Json::sax_parse(text, &sax)) {
    err = sax.error.empty() ? "invalid JSON" : sax.error;
    return false;
  }
  if (!sax.weight_map_seen()) {
    err = "index has no weight_map object";
    return false;
  }
  d.valid = true;
  return true;
}

void read_index_file(Analysis& a) {
  std::error_code ec;
  a.index_path = a.root / "model.safetensors.index.json";
  if (fs::exists(a.index_path, ec)) {
    a.index_facts["present"] = true;
    const fs::path canon = fs::canonical(a.index_path, ec);
    std::string err;
    if (ec || !(path_under(canon, a.root_canon) || path_under(canon, a.blobs_canon))) {
      a.problem("symlink_escape", a.index_path.string(), "the index resolves outside the checkpoint tree; not read");
    } else if (!read_index(a.index_path.string(), a.index, err)) {
      a.problem("index_invalid", a.index_path.string(), err);
    } else {
      if (a.index.total_size) a.index_facts["total_size"] = *a.index.total_size;
      a.index_facts["weight_map_entries"] = a.index.entries.size();
      for (const std::string& bad : a.index.non_string)
        a.problem("index_invalid", a.index_path.string(),
                  fmt::format("weight_map entry '{}' is not a string", excerpt_name(bad)));
    }
  }
  a.has_index = a.index.valid;
}

}  // namespace specprobe::checkpoint
