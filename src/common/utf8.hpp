// UTF-8 validation for bytes read from untrusted files (checkpoint headers, index files).
#pragma once
#include <cstddef>
#include <string_view>

namespace specprobe {

// Well-formed UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. ASCII runs are
// checked eight bytes at a time (headers of ~100k tensor names are scanned on every check).
bool valid_utf8(std::string_view s);

// The offset of the first byte of the first ill-formed sequence, or std::string_view::npos.
size_t first_invalid_utf8(std::string_view s);

}  // namespace specprobe
