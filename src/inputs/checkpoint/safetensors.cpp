// Safetensors header reader. The header (an object of {dtype, shape, data_offsets} objects) is
// read with the shared strict scanner (common/json_scan) rather than nlohmann::json because it must
// reject duplicate names, which a DOM parser silently collapses, and because a DeepSeek-size
// checkpoint carries ~90k entries that must be scanned in well under a second. It works in the
// header's own buffer: strings are unescaped in place, tensor names stay there as string_views,
// shapes go to one array per shard, duplicates are found with a flat hash set. A tensor entry
// therefore costs no heap allocation.
#include "inputs/checkpoint/safetensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/excerpt.hpp"
#include "common/json_scan.hpp"
#include "inputs/checkpoint/name_index.hpp"

namespace specprobe::checkpoint {
namespace {

struct DtypeRow {
  std::string_view name;
  int bits;
};
// [ST] tensor.rs enum Dtype + bitsize().
constexpr DtypeRow kDtypes[kDtypeCount] = {
    {"BOOL", 8},    {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6},     {"U8", 8},          {"I8", 8},
    {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"I16", 16},
    {"U16", 16},    {"F16", 16},    {"BF16", 16},   {"I32", 32},        {"U32", 32},        {"F32", 32},
    {"C64", 64},    {"F64", 64},    {"I64", 64},    {"U64", 64},
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

// Sets WHY and returns false: a member reader's own reason for rejecting the header.
bool reject(ShardError& why, std::string code, std::string message) {
  why = {std::move(code), std::move(message)};
  return false;
}

// __metadata__: a map of strings to strings.
bool read_metadata(JsonScanner& p, ShardHeader& h, ShardError& why) {
  static constexpr const char* kShape = "__metadata__ must be a map of strings to strings";
  if (!p.expect('{')) return reject(why, "invalid_metadata", kShape);
  if (p.consume('}')) return true;
  while (true) {
    std::string_view mk, mv;
    if (!p.string(mk) || !p.expect(':') || !p.string(mv)) return reject(why, "invalid_metadata", kShape);
    h.metadata[std::string(mk)] = std::string(mv);
    if (p.consume(',')) continue;
    if (!p.expect('}')) return reject(why, "invalid_metadata", p.error());
    return true;
  }
}

// One tensor entry, KEY: {"dtype", "shape", "data_offsets"}, other keys skipped (as serde does).
bool read_tensor(JsonScanner& p, std::string_view key, ShardHeader& h, ShardError& why) {
  TensorInfo t;
  t.name = key;
  const size_t dims_start = h.dims.size();
  bool have_dtype = false, have_shape = false, have_offsets = false;
  if (!p.peek('{'))
    return reject(why, "invalid_tensor_info", fmt::format("entry '{}' is not an object", excerpt_name(key)));
  const bool ok = p.members([&](std::string_view field) {
    if (field == "dtype") {
      if (!p.string(t.dtype))
        return reject(why, "invalid_tensor_info",
                      fmt::format("tensor '{}': dtype must be a string", excerpt_name(key)));
      return have_dtype = true;
    }
    if (field == "shape") {
      h.dims.resize(dims_start);  // a repeated key: the last one counts
      const bool read = p.elements([&] {
        uint64_t v = 0;
        if (!p.uint(v)) return false;
        h.dims.push_back(v);
        return true;
      });
      if (!read)
        return reject(why, "invalid_tensor_info", fmt::format("tensor '{}': shape: {}", excerpt_name(key), p.error()));
      return have_shape = true;
    }
    if (field == "data_offsets") {
      size_t count = 0;
      const bool read = p.elements([&] {
        uint64_t v = 0;
        if (!p.uint(v)) return false;
        if (count == 0) t.begin = v;
        if (count == 1) t.end = v;
        ++count;
        return true;
      });
      if (!read || count != 2)
        return reject(why, "invalid_tensor_info",
                      fmt::format("tensor '{}': data_offsets must be two non-negative integers", excerpt_name(key)));
      return have_offsets = true;
    }
    return p.skip_value();
  });
  if (!ok) return false;
  if (!have_dtype || !have_shape || !have_offsets)
    return reject(why, "invalid_tensor_info",
                  fmt::format("tensor '{}' lacks dtype, shape or data_offsets", excerpt_name(key)));
  size_t id = 0;
  while (id < kDtypeCount && kDtypes[id].name != t.dtype) ++id;
  if (id == kDtypeCount)
    return reject(why, "unknown_dtype",
                  fmt::format("tensor '{}' has unknown dtype '{}'", excerpt_name(key), excerpt(t.dtype)));
  t.dtype = kDtypes[id].name;
  t.dtype_id = static_cast<uint8_t>(id);
  t.shape_offset = static_cast<uint32_t>(dims_start);  // < n: each dimension takes a byte or more
  t.rank = static_cast<uint32_t>(h.dims.size() - dims_start);
  h.tensors.push_back(t);
  return true;
}

// Metadata::validate: sorted by offsets, contiguous from 0, sizes agree with dtype x shape, the
// data region fills the file.
std::optional<ShardError> validate_layout(const ShardHeader& h) {
  auto bad = [](std::string code, std::string message) {
    return std::optional<ShardError>({std::move(code), std::move(message)});
  };
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
      return bad("invalid_offset",
                 fmt::format("tensor '{}': data_offsets [{}, {}] leave a gap or overlap (expected begin {})",
                             excerpt_name(t->name), t->begin, t->end, start));
    start = t->end;
    uint64_t count = 1;
    for (uint64_t d : h.shape(*t)) {
      if (d != 0 && count > UINT64_MAX / d)
        return bad("validation_overflow", fmt::format("tensor '{}': element count overflows", excerpt_name(t->name)));
      count *= d;
    }
    const uint64_t bits = static_cast<uint64_t>(kDtypes[t->dtype_id].bits);
    if (count > UINT64_MAX / bits)
      return bad("validation_overflow", fmt::format("tensor '{}': byte size overflows", excerpt_name(t->name)));
    const uint64_t total_bits = count * bits;
    if (total_bits % 8 != 0)
      return bad("misaligned_slice", fmt::format("tensor '{}': {} elements of {} bits do not fill whole bytes",
                                                 excerpt_name(t->name), count, bits));
    if (t->end - t->begin != total_bits / 8)
      return bad("tensor_invalid_info",
                 fmt::format("tensor '{}': {} bytes stored but {} x {} needs {}", excerpt_name(t->name),
                             t->end - t->begin, t->dtype, fmt::join(h.shape(*t), "x"), total_bits / 8));
  }
  // header_size <= kMaxHeaderSize and start fits in the file size (checked by the caller), so no overflow.
  if (start > UINT64_MAX - 8 - h.header_size || 8 + h.header_size + start != h.file_size)
    return bad("incomplete_buffer",
               fmt::format("8 + header {} + data {} bytes != file size {}", h.header_size, start, h.file_size));
  return std::nullopt;
}

// Parses TEXT (N bytes, owned; strings are unescaped in place) into a validated header.
HeaderResult parse_owned_sized(std::unique_ptr<char[]> text, size_t n, uint64_t header_size, uint64_t file_size) {
  // Unknown keys' values are skipped the way this reader always has (JsonScanOptions).
  JsonScanner p(text.get(), n, {.max_depth = 64, .lax_skipped_numbers = true});
  if (!p.validate_utf8()) return failure("invalid_utf8", "header is not valid UTF-8");
  ShardHeader h;
  h.header_size = header_size;
  h.file_size = file_size;
  if (!p.peek('{')) return failure("not_object", "header is not a JSON object");
  // Nothing is reserved from N: a hostile header near the cap must cost memory only for what it
  // really holds (the tables grow geometrically, a few times per shard).
  NameIndex seen;
  ShardError why;
  const bool ok = p.members([&](std::string_view key) {
    if (!seen.insert(key, 0).second)
      return reject(why, "duplicate_tensor", fmt::format("tensor '{}' appears twice in the header", excerpt_name(key)));
    return key == "__metadata__" ? read_metadata(p, h, why) : read_tensor(p, key, h, why);
  });
  if (!ok) return why.code.empty() ? failure("invalid_json", p.error()) : failure(why.code, why.message);
  if (!p.at_end()) return failure("invalid_json", "trailing characters after the header object");
  if (auto bad = validate_layout(h)) return failure(bad->code, bad->message);
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

namespace {

// The header of a shard of SIZE bytes whose first bytes FD holds: the length, then the header,
// checked against SIZE (the shard's size, which a fetched header's stub file does not have).
HeaderResult read_header_fd(int fd, uint64_t size, uint64_t available) {
  unsigned char len_buf[8];
  if (size < 8) return failure("header_too_small", fmt::format("file has {} bytes, fewer than 8", size));
  if (available < 8 || ::pread(fd, len_buf, 8, 0) != 8) return failure("read_failed", "cannot read the header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_buf[i];
  if (n > kMaxHeaderSize)
    return failure("header_too_large", fmt::format("header length {} exceeds the {} cap", n, kMaxHeaderSize));
  if (8 + n > size)
    return failure("invalid_header_length",
                   fmt::format("header length {} runs past the end of the {}-byte file", n, size));
  if (8 + n > available) return failure("read_failed", "the header was not fetched in full");
  auto buf = std::make_unique_for_overwrite<char[]>(n);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, buf.get() + got, n - got, static_cast<off_t>(8 + got));
    if (r <= 0) return failure("read_failed", "short read in the header");
    got += static_cast<size_t>(r);
  }
  return parse_owned_sized(std::move(buf), n, n, size);
}

// PATH opened read-only as a regular file (a FIFO planted in the tree must not block the open:
// O_NONBLOCK, then S_ISREG), its size in SIZE_OUT; -1 with FAIL set otherwise.
int open_regular(const std::string& path, uint64_t& size_out, HeaderResult& fail) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    fail = failure("read_failed", fmt::format("cannot open: {}", std::strerror(errno)));
    return -1;
  }
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  if (!stat_ok || !S_ISREG(st.st_mode)) {
    fail = failure("read_failed",
                   !stat_ok ? fmt::format("cannot stat: {}", std::strerror(errno)) : std::string("not a regular file"));
    ::close(fd);
    return -1;
  }
  size_out = static_cast<uint64_t>(st.st_size);
  return fd;
}

}  // namespace

HeaderResult read_safetensors_header(const std::string& path) {
  uint64_t size = 0;
  HeaderResult fail;
  const int fd = open_regular(path, size, fail);
  if (fd < 0) return fail;
  HeaderResult res = read_header_fd(fd, size, size);
  ::close(fd);
  if (res.header) res.header->path = path;
  return res;
}

HeaderResult read_safetensors_header_stub(const std::string& stub, uint64_t file_size, const std::string& path) {
  uint64_t available = 0;
  HeaderResult fail;
  const int fd = open_regular(stub, available, fail);
  if (fd < 0) return fail;
  HeaderResult res = read_header_fd(fd, file_size, available);
  ::close(fd);
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
