// A flat byte image of loaded data, written once at build time and read at start-up without a
// parser (issue 49): little-endian 32-bit lengths and counts, strings as length + bytes, JSON
// values as a tagged tree (a type byte, then the scalar, string, or the count and items). The reader never reads past
// its span: a short or corrupt image makes ok() false, and every read after that returns empty values.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/json.hpp"
#include "common/parallel.hpp"

namespace specprobe {

class ByteWriter {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  void str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  void strings(const std::vector<std::string>& v) {
    u32(static_cast<uint32_t>(v.size()));
    for (const auto& s : v) str(s);
  }
  // J as a tagged tree (byte_image.cpp): read back without a document parser.
  void json(const Json& j);
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : in_(bytes) {}
  bool ok() const { return ok_; }
  bool done() const { return ok_ && in_.empty(); }

  uint8_t u8() {
    if (!need(1)) return 0;
    const auto v = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return v;
  }
  uint32_t u32() {
    if (!need(4)) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
    in_.remove_prefix(4);
    return v;
  }
  std::string_view view() {
    const uint32_t n = u32();
    if (!need(n)) return {};
    const std::string_view s = in_.substr(0, n);
    in_.remove_prefix(n);
    return s;
  }
  std::string str() { return std::string(view()); }
  std::vector<std::string> strings() {
    std::vector<std::string> out(count());
    for (auto& s : out) s = str();
    return out;
  }
  // A value ByteWriter::json wrote; null, with ok() false, when it is cut short or corrupt.
  Json json();
  // The bytes of the value ByteWriter::json wrote here, checked but not decoded (ByteReader(bytes).json()
  // decodes them later); empty, with ok() false, when it is cut short or corrupt.
  std::string_view json_bytes();
  // A count of items that each take at least one byte: never more than what is left.
  size_t count() {
    const uint32_t n = u32();
    return need(n) ? n : 0;
  }

 private:
  bool need(size_t n) {
    if (ok_ && in_.size() >= n) return true;
    ok_ = false;
    in_ = {};
    return false;
  }
  Json value(int depth);
  void skip_value(int depth);
  std::string_view in_;
  bool ok_ = true;
};

// ITEMS as an image: MAGIC, then each item as one length-prefixed record written by
// WRITE(ByteWriter&, const T&).
template <class T, class Write>
std::string write_image(std::string_view magic, const std::vector<T>& items, Write&& write) {
  ByteWriter w;
  w.str(magic);
  w.u32(static_cast<uint32_t>(items.size()));
  for (const T& item : items) {
    ByteWriter record;
    write(record, item);
    w.str(record.bytes());
  }
  return w.bytes();
}

// The items of an image write_image wrote with MAGIC: the records are found in one pass and read
// on the cores by READ(std::string_view record) -> std::optional<T> (nullopt: corrupt). WHAT names
// the image in errors ("the built-in rule image"), which are internal errors.
template <class T, class Read>
Expected<std::vector<T>> read_image(std::string_view image, std::string_view magic, std::string_view what,
                                    Read&& read) {
  ByteReader r(image);
  if (r.view() != magic) return internal_error(fmt::format("{} is not one this binary reads", what));
  std::vector<std::string_view> records(r.count());
  for (auto& rec : records) rec = r.view();
  if (!r.done()) return internal_error(fmt::format("{} is cut short or corrupt", what));
  std::vector<std::optional<T>> read_items(records.size());
  parallel_for(records.size(), [&](size_t i) { read_items[i] = read(records[i]); });
  std::vector<T> out;
  out.reserve(read_items.size());
  for (size_t i = 0; i < read_items.size(); ++i) {
    if (!read_items[i]) return internal_error(fmt::format("{}: record {} is corrupt", what, i + 1));
    out.push_back(std::move(*read_items[i]));
  }
  return out;
}

}  // namespace specprobe
