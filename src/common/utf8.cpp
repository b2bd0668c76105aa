// UTF-8 validation (see utf8.hpp).
#include "common/utf8.hpp"

#include <cstdint>
#include <cstring>

namespace specprobe {

bool valid_utf8(std::string_view s) { return first_invalid_utf8(s) == std::string_view::npos; }

size_t first_invalid_utf8(std::string_view s) {
  const auto* const b = reinterpret_cast<const unsigned char*>(s.data());
  const auto* p = b;
  const auto* e = p + s.size();
  while (p < e) {
    // ASCII runs, eight bytes at a time.
    while (e - p >= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      if (w & 0x8080808080808080ull) break;
      p += 8;
    }
    if (p == e) break;
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n = 0;
    uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return static_cast<size_t>(p - b);
    }
    if (e - p <= n) return static_cast<size_t>(p - b);
    for (int i = 1; i <= n; ++i) {
      if ((p[i] & 0xC0) != 0x80) return static_cast<size_t>(p - b);
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return static_cast<size_t>(p - b);
    p += n + 1;
  }
  return std::string_view::npos;
}
}  // namespace specprobe
