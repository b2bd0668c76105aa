// Safetensors header reader. A small purpose-built JSON parser (the header is an object of
// {dtype, shape, data_offsets} objects) is used instead of nlohmann::json because it must reject
// duplicate names, which a DOM parser silently collapses, and because a DeepSeek-size checkpoint
// carries ~90k entries that must be scanned in well under a second. It works in the header's own
// buffer: strings are unescaped in place (an escape never grows), tensor names stay there as
// string_views, shapes go to one array per shard, duplicates are found with a flat hash set. A
// tensor entry therefore costs no heap allocation.
#include "common/utf8.hpp"
#include "inputs/checkpoint/safetensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "inputs/checkpoint/name_index.hpp"

namespace specprobe::checkpoint {
namespace {

struct DtypeRow {
  std::string_view name;
  int bits;
};
// [ST] tensor.rs enum Dtype + bitsize().
constexpr DtypeRow kDtypes[kDtypeCount] = {
    {"BOOL", 8},         {"F4", 4},           {"F6_E2M3", 6},     {"F6_E3M2", 6},    {"U8", 8},
    {"I8", 8},           {"F8_E5M2", 8},      {"F8_E4M3", 8},     {"F8_E8M0", 8},    {"F8_E4M3FNUZ", 8},
    {"F8_E5M2FNUZ", 8},  {"I16", 16},         {"U16", 16},        {"F16", 16},       {"BF16", 16},
    {"I32", 32},         {"U32", 32},         {"F32", 32},        {"C64", 64},       {"F64", 64},
    {"I64", 64},         {"U64", 64},
};


// A cursor over a mutable header buffer. Strings are unescaped in place and returned as views of
// the buffer; error messages name the byte offset of the first violation.
class Parser {
 public:
  Parser(char* s, size_t n) : s_(s), n_(n) {}

  bool fail(std::string msg) {
    if (err_.empty()) err_ = fmt::format("{} at byte {}", msg, pos_);
    return false;
  }
  const std::string& error() const { return err_; }

  void ws() {
    while (pos_ < n_ && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool peek(char c) {
    ws();
    return pos_ < n_ && s_[pos_] == c;
  }
  bool expect(char c) {
    ws();
    if (pos_ < n_ && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return fail(fmt::format("expected '{}'", c));
  }
  bool at_end() {
    ws();
    return pos_ == n_;
  }

  // OUT views the unescaped string, written over the escaped text it came from.
  bool string(std::string_view& out) {
    ws();
    if (pos_ >= n_ || s_[pos_] != '"') return fail("expected a string");
    ++pos_;
    const size_t start = pos_;
    // Fast path: no escapes.
    while (pos_ < n_ && s_[pos_] != '"' && s_[pos_] != '\\') {
      if (static_cast<unsigned char>(s_[pos_]) < 0x20) return fail("control character in string");
      ++pos_;
    }
    size_t w = pos_;  // write position, never past pos_
    while (pos_ < n_ && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
      if (c != '\\') {
        s_[w++] = c;
        continue;
      }
      if (pos_ >= n_) break;
      c = s_[pos_++];
      switch (c) {
        case '"': s_[w++] = '"'; break;
        case '\\': s_[w++] = '\\'; break;
        case '/': s_[w++] = '/'; break;
        case 'b': s_[w++] = '\b'; break;
        case 'f': s_[w++] = '\f'; break;
        case 'n': s_[w++] = '\n'; break;
        case 'r': s_[w++] = '\r'; break;
        case 't': s_[w++] = '\t'; break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo = 0;
            if (pos_ + 1 < n_ && s_[pos_] == '\\' && s_[pos_ + 1] == 'u') {
              pos_ += 2;
              if (!hex4(lo)) return false;
              if (lo < 0xDC00 || lo > 0xDFFF) return fail("invalid surrogate pair");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else {
              return fail("lone surrogate");
            }
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return fail("lone surrogate");
          }
          w = put_utf8(w, cp);  // 6 (or 12) escape bytes become at most 3 (or 4)
          break;
        }
        default: return fail("invalid escape");
      }
    }
    if (pos_ >= n_) return fail("unterminated string");
    out = std::string_view(s_ + start, w - start);
    ++pos_;
    return true;
  }

  // A non-negative integer that fits in uint64.
  bool uint(uint64_t& out) {
    ws();
    if (pos_ >= n_) return fail("expected a number");
    if (s_[pos_] == '-') return fail("negative number");
    if (s_[pos_] < '0' || s_[pos_] > '9') return fail("expected a number");
    out = 0;
    const size_t start = pos_;
    while (pos_ < n_ && s_[pos_] >= '0' && s_[pos_] <= '9') {
      const uint64_t d = static_cast<uint64_t>(s_[pos_] - '0');
      if (out > (UINT64_MAX - d) / 10) return fail("number out of range");
      out = out * 10 + d;
      ++pos_;
    }
    if (s_[start] == '0' && pos_ - start > 1) return fail("leading zero");
    if (pos_ < n_ && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E')) return fail("expected an integer");
    return true;
  }

  // An array of such integers: EMIT(value) for each; COUNT is how many there were.
  template <typename Emit>
  bool uint_array(size_t& count, Emit emit) {
    count = 0;
    if (!expect('[')) return false;
    if (peek(']')) {
      ++pos_;
      return true;
    }
    while (true) {
      uint64_t v = 0;
      if (!uint(v)) return false;
      emit(count++, v);
      ws();
      if (pos_ < n_ && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      return expect(']');
    }
  }

  // Skips any JSON value (unknown keys inside a tensor entry are ignored, as serde does).
  bool skip_value(int depth = 0) {
    if (depth > 64) return fail("nesting too deep");
    ws();
    if (pos_ >= n_) return fail("expected a value");
    const char c = s_[pos_];
    std::string_view tmp;
    if (c == '"') return string(tmp);
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++pos_;
      if (peek(close)) {
        ++pos_;
        return true;
      }
      while (true) {
        if (c == '{') {
          if (!string(tmp) || !expect(':')) return false;
        }
        if (!skip_value(depth + 1)) return false;
        ws();
        if (pos_ < n_ && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        return expect(close);
      }
    }
    for (std::string_view lit : {"true", "false", "null"})
      if (std::string_view(s_ + pos_, n_ - pos_).substr(0, lit.size()) == lit) {
        pos_ += lit.size();
        return true;
      }
    if (c == '-' || (c >= '0' && c <= '9')) {
      ++pos_;
      while (pos_ < n_ && s_[pos_] != '\0' && std::strchr("0123456789.eE+-", s_[pos_])) ++pos_;
      return true;
    }
    return fail("invalid value");
  }

 private:
  bool hex4(uint32_t& out) {
    if (pos_ + 4 > n_) return fail("short \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[pos_++];
      out <<= 4;
      if (h >= '0' && h <= '9') out |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') out |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') out |= static_cast<uint32_t>(h - 'A' + 10);
      else return fail("invalid \\u escape");
    }
    return true;
  }
  size_t put_utf8(size_t w, uint32_t cp) {
    if (cp < 0x80) {
      s_[w++] = static_cast<char>(cp);
    } else if (cp < 0x800) {
      s_[w++] = static_cast<char>(0xC0 | (cp >> 6));
      s_[w++] = static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s_[w++] = static_cast<char>(0xE0 | (cp >> 12));
      s_[w++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s_[w++] = static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s_[w++] = static_cast<char>(0xF0 | (cp >> 18));
      s_[w++] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s_[w++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s_[w++] = static_cast<char>(0x80 | (cp & 0x3F));
    }
    return w;
  }

  char* s_;
  size_t n_;
  size_t pos_ = 0;
  std::string err_;
};

HeaderResult failure(std::string code, std::string message) {
  HeaderResult r;
  r.error = {std::move(code), std::move(message)};
  return r;
}

std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::optional<int> dtype_bits(std::string_view dtype) {
  for (const DtypeRow& r : kDtypes)
    if (r.name == dtype) return r.bits;
  return std::nullopt;
}

std::string_view dtype_name(size_t id) { return id < kDtypeCount ? kDtypes[id].name : std::string_view(); }

namespace {

// Parses TEXT (N bytes, owned; strings are unescaped in place) into a validated header.
HeaderResult parse_owned_sized(std::unique_ptr<char[]> text, size_t n, uint64_t header_size, uint64_t file_size) {
  if (!valid_utf8(std::string_view(text.get(), n))) return failure("invalid_utf8", "header is not valid UTF-8");
  Parser p(text.get(), n);
  ShardHeader h;
  h.header_size = header_size;
  h.file_size = file_size;
  if (!p.peek('{')) return failure("not_object", "header is not a JSON object");
  p.expect('{');
  // Nothing is reserved from N: a hostile header near the cap must cost memory only for what it
  // really holds (the tables grow geometrically, a few times per shard).
  NameIndex seen;
  std::string_view key, field;
  bool first = true;
  while (true) {
    if (first && p.peek('}')) {
      p.expect('}');
      break;
    }
    first = false;
    if (!p.string(key) || !p.expect(':')) return failure("invalid_json", p.error());
    if (!seen.insert(key, 0).second)
      return failure("duplicate_tensor", fmt::format("tensor '{}' appears twice in the header", key));
    if (key == "__metadata__") {
      if (!p.expect('{')) return failure("invalid_metadata", "__metadata__ must be a map of strings to strings");
      if (p.peek('}')) {
        p.expect('}');
      } else {
        while (true) {
          std::string_view mk, mv;
          if (!p.string(mk) || !p.expect(':'))
            return failure("invalid_metadata", "__metadata__ must be a map of strings to strings");
          if (!p.string(mv)) return failure("invalid_metadata", "__metadata__ must be a map of strings to strings");
          h.metadata[std::string(mk)] = std::string(mv);
          if (p.peek(',')) {
            p.expect(',');
            continue;
          }
          if (!p.expect('}')) return failure("invalid_metadata", p.error());
          break;
        }
      }
    } else {
      TensorInfo t;
      t.name = key;
      const size_t dims_start = h.dims.size();
      bool have_dtype = false, have_shape = false, have_offsets = false;
      if (!p.expect('{')) return failure("invalid_tensor_info", fmt::format("entry '{}' is not an object", key));
      bool ffirst = true;
      while (true) {
        if (ffirst && p.peek('}')) {
          p.expect('}');
          break;
        }
        ffirst = false;
        if (!p.string(field) || !p.expect(':')) return failure("invalid_json", p.error());
        if (field == "dtype") {
          if (!p.string(t.dtype))
            return failure("invalid_tensor_info", fmt::format("tensor '{}': dtype must be a string", key));
          have_dtype = true;
        } else if (field == "shape") {
          h.dims.resize(dims_start);  // a repeated key: the last one counts
          size_t rank = 0;
          if (!p.uint_array(rank, [&](size_t, uint64_t v) { h.dims.push_back(v); }))
            return failure("invalid_tensor_info", fmt::format("tensor '{}': shape: {}", key, p.error()));
          have_shape = true;
        } else if (field == "data_offsets") {
          size_t count = 0;
          if (!p.uint_array(count, [&](size_t i, uint64_t v) {
                if (i == 0) t.begin = v;
                if (i == 1) t.end = v;
              }) ||
              count != 2)
            return failure("invalid_tensor_info",
                           fmt::format("tensor '{}': data_offsets must be two non-negative integers", key));
          have_offsets = true;
        } else if (!p.skip_value()) {
          return failure("invalid_json", p.error());
        }
        if (p.peek(',')) {
          p.expect(',');
          continue;
        }
        if (!p.expect('}')) return failure("invalid_json", p.error());
        break;
      }
      if (!have_dtype || !have_shape || !have_offsets)
        return failure("invalid_tensor_info", fmt::format("tensor '{}' lacks dtype, shape or data_offsets", key));
      size_t id = 0;
      while (id < kDtypeCount && kDtypes[id].name != t.dtype) ++id;
      if (id == kDtypeCount)
        return failure("unknown_dtype", fmt::format("tensor '{}' has unknown dtype '{}'", key, t.dtype));
      t.dtype = kDtypes[id].name;
      t.dtype_id = static_cast<uint8_t>(id);
      t.shape_offset = static_cast<uint32_t>(dims_start);  // < n: each dimension takes a byte or more
      t.rank = static_cast<uint32_t>(h.dims.size() - dims_start);
      h.tensors.push_back(t);
    }
    if (p.peek(',')) {
      p.expect(',');
      continue;
    }
    if (!p.expect('}')) return failure("invalid_json", p.error());
    break;
  }
  if (!p.at_end()) return failure("invalid_json", "trailing characters after the header object");

  // Metadata::validate: sorted by offsets, contiguous from 0, sizes agree with dtype x shape.
  std::vector<uint32_t> order(h.tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  const std::vector<TensorInfo>& ts = h.tensors;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return ts[a].begin != ts[b].begin ? ts[a].begin < ts[b].begin : ts[a].end < ts[b].end;
  });
  uint64_t start = 0;
  for (uint32_t i : order) {
    const TensorInfo* t = &ts[i];
    if (t->begin != start || t->end < t->begin)
      return failure("invalid_offset",
                     fmt::format("tensor '{}': data_offsets [{}, {}] leave a gap or overlap (expected begin {})",
                                 t->name, t->begin, t->end, start));
    start = t->end;
    uint64_t count = 1;
    for (uint64_t d : h.shape(*t)) {
      if (d != 0 && count > UINT64_MAX / d)
        return failure("validation_overflow", fmt::format("tensor '{}': element count overflows", t->name));
      count *= d;
    }
    const uint64_t bits = static_cast<uint64_t>(kDtypes[t->dtype_id].bits);
    if (count > UINT64_MAX / bits)
      return failure("validation_overflow", fmt::format("tensor '{}': byte size overflows", t->name));
    const uint64_t total_bits = count * bits;
    if (total_bits % 8 != 0)
      return failure("misaligned_slice",
                     fmt::format("tensor '{}': {} elements of {} bits do not fill whole bytes", t->name, count, bits));
    if (t->end - t->begin != total_bits / 8)
      return failure("tensor_invalid_info",
                     fmt::format("tensor '{}': {} bytes stored but {} x {} needs {}", t->name, t->end - t->begin,
                                 t->dtype, fmt::join(h.shape(*t), "x"), total_bits / 8));
  }
  // header_size <= kMaxHeaderSize and start fits in the file size (checked by the caller), so no overflow.
  if (start > UINT64_MAX - 8 - header_size || 8 + header_size + start != file_size)
    return failure("incomplete_buffer",
                   fmt::format("8 + header {} + data {} bytes != file size {}", header_size, start, file_size));
  h.text = std::move(text);
  HeaderResult r;
  r.header = std::move(h);
  return r;
}

}  // namespace

HeaderResult parse_safetensors_header(std::string_view json, uint64_t header_size, uint64_t file_size) {
  auto text = std::make_unique_for_overwrite<char[]>(json.size());
  if (!json.empty()) std::memcpy(text.get(), json.data(), json.size());
  return parse_owned_sized(std::move(text), json.size(), header_size, file_size);
}

HeaderResult read_safetensors_header(const std::string& path) {
  // O_NONBLOCK: a FIFO planted in the checkpoint must not block the open (it fails S_ISREG below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return failure("read_failed", fmt::format("cannot open: {}", std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return failure("read_failed", fmt::format("cannot stat: {}", std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return failure("read_failed", "not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  unsigned char len_buf[8];
  if (size < 8) return failure("header_too_small", fmt::format("file has {} bytes, fewer than 8", size));
  if (::pread(fd, len_buf, 8, 0) != 8) return failure("read_failed", "cannot read the header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_buf[i];
  if (n > kMaxHeaderSize)
    return failure("header_too_large", fmt::format("header length {} exceeds the {} cap", n, kMaxHeaderSize));
  if (8 + n > size)
    return failure("invalid_header_length", fmt::format("header length {} runs past the end of the {}-byte file", n, size));
  auto buf = std::make_unique_for_overwrite<char[]>(n);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, buf.get() + got, n - got, static_cast<off_t>(8 + got));
    if (r <= 0) return failure("read_failed", "short read in the header");
    got += static_cast<size_t>(r);
  }
  HeaderResult res = parse_owned_sized(std::move(buf), n, n, size);
  if (res.header) res.header->path = path;
  return res;
}

std::string write_safetensors_header(const std::vector<TensorSpec>& tensors,
                                     const std::map<std::string, std::string>& metadata) {
  std::vector<const TensorSpec*> sorted;
  for (const TensorSpec& t : tensors) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name < b->name; });
  std::string j = "{";
  bool first = true;
  if (!metadata.empty()) {
    j += "\"__metadata__\":{";
    bool mf = true;
    for (const auto& [k, v] : metadata) {
      j += fmt::format("{}\"{}\":\"{}\"", mf ? "" : ",", json_escape(k), json_escape(v));
      mf = false;
    }
    j += "}";
    first = false;
  }
  for (const TensorSpec* t : sorted) {
    j += fmt::format("{}\"{}\":{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}", first ? "" : ",",
                     json_escape(t->name), t->dtype, fmt::join(t->shape, ","), t->begin, t->end);
    first = false;
  }
  j += "}";
  while (j.size() % 8 != 0) j.push_back(' ');
  std::string out(8, '\0');
  uint64_t n = j.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + j;
}

}  // namespace specprobe::checkpoint
