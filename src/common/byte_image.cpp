// JSON values in a catalog image (see byte_image.hpp).
#include "common/byte_image.hpp"

#include <algorithm>
#include <cstring>

namespace specprobe {
namespace {

// The type byte of a value in an image.
enum Tag : uint8_t { kNull, kFalse, kTrue, kInt, kUint, kFloat, kString, kArray, kObject };

// Nesting deeper than this is corrupt (the catalog's JSON Logic nests a few levels): a reader
// never recurses past it.
constexpr int kMaxDepth = 256;

void write_u64(ByteWriter& w, uint64_t v) {
  w.u32(static_cast<uint32_t>(v & 0xFFFFFFFFu));
  w.u32(static_cast<uint32_t>(v >> 32));
}

void write_value(ByteWriter& w, const Json& j) {
  switch (j.type()) {
    case Json::value_t::boolean:
      w.u8(j.get<bool>() ? kTrue : kFalse);
      return;
    case Json::value_t::number_integer:
      w.u8(kInt);
      write_u64(w, static_cast<uint64_t>(j.get<int64_t>()));
      return;
    case Json::value_t::number_unsigned:
      w.u8(kUint);
      write_u64(w, j.get<uint64_t>());
      return;
    case Json::value_t::number_float: {
      const double d = j.get<double>();
      uint64_t bits = 0;
      std::memcpy(&bits, &d, sizeof bits);
      w.u8(kFloat);
      write_u64(w, bits);
      return;
    }
    case Json::value_t::string:
      w.u8(kString);
      w.str(j.get_ref<const std::string&>());
      return;
    case Json::value_t::array:
      w.u8(kArray);
      w.u32(static_cast<uint32_t>(j.size()));
      for (const Json& e : j) write_value(w, e);
      return;
    case Json::value_t::object:
      w.u8(kObject);
      w.u32(static_cast<uint32_t>(j.size()));
      for (auto it = j.begin(); it != j.end(); ++it) {
        w.str(it.key());
        write_value(w, it.value());
      }
      return;
    default:  // null; binary and discarded values are not catalog data
      w.u8(kNull);
      return;
  }
}

}  // namespace

void ByteWriter::json(const Json& j) { write_value(*this, j); }

Json ByteReader::json() { return value(0); }

std::string_view ByteReader::json_bytes() {
  const std::string_view start = in_;
  skip_value(0);
  return ok_ ? start.substr(0, start.size() - in_.size()) : std::string_view();
}

void ByteReader::skip_value(int depth) {
  if (depth > kMaxDepth) {
    need(in_.size() + 1);
    return;
  }
  switch (u8()) {
    case kNull:
    case kFalse:
    case kTrue:
      return;
    case kInt:
    case kUint:
    case kFloat:
      need(8);
      in_.remove_prefix(std::min<size_t>(8, in_.size()));
      return;
    case kString:
      view();
      return;
    case kArray:
      for (size_t n = count(); n > 0 && ok_; --n) skip_value(depth + 1);
      return;
    case kObject:
      for (size_t n = count(); n > 0 && ok_; --n) {
        view();
        skip_value(depth + 1);
      }
      return;
    default:
      need(in_.size() + 1);
      return;
  }
}

Json ByteReader::value(int depth) {
  if (depth > kMaxDepth) {
    need(in_.size() + 1);  // corrupt: fails the reader
    return nullptr;
  }
  auto u64 = [&] {
    const uint64_t lo = u32();
    return lo | (static_cast<uint64_t>(u32()) << 32);
  };
  switch (u8()) {
    case kNull:
      return nullptr;
    case kFalse:
      return false;
    case kTrue:
      return true;
    case kInt:
      return static_cast<int64_t>(u64());
    case kUint:
      return u64();
    case kFloat: {
      const uint64_t bits = u64();
      double d = 0;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    case kString:
      return std::string(view());
    case kArray: {
      Json a = Json::array();
      auto& v = a.get_ref<Json::array_t&>();
      const size_t n = count();
      v.reserve(n);
      for (size_t i = 0; i < n && ok_; ++i) v.push_back(value(depth + 1));
      if (!ok_) return nullptr;
      return a;  // moved (a conditional `ok_ ? a : null` would copy the whole subtree at each level)
    }
    case kObject: {
      Json o = Json::object();
      auto& m = o.get_ref<Json::object_t&>();
      for (size_t n = count(); n > 0 && ok_; --n) {
        std::string key(view());
        m.emplace_hint(m.end(), std::move(key), value(depth + 1));  // written in key order
      }
      if (!ok_) return nullptr;
      return o;
    }
    default:
      need(in_.size() + 1);  // not a tag: corrupt
      return nullptr;
  }
}

}  // namespace specprobe
