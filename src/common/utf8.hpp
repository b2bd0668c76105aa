// UTF-8 validation for bytes read from untrusted files (checkpoint headers, index files).
#pragma once
#include <string_view>

namespace specprobe {

// Well-formed UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. ASCII runs are
// checked eight bytes at a time (headers of ~100k tensor names are scanned on every check).
bool valid_utf8(std::string_view s);

}  // namespace specprobe
