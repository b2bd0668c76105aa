// The forms of catalog identifiers and dates, checked by hand (std::regex costs a compile per
// pattern, which the loaders paid at every start; issue 49).
#pragma once
#include <string_view>

namespace specprobe {

// SPnnnn: SP, a digit 1-9, three digits.
bool is_rule_id(std::string_view id);

// SPA-<PROJECT>-<number>[letter], PROJECT one of VLLM SGLANG FLASHINFER DEEPGEMM FLASHATTN TRTLLM
// TRITON TORCH.
bool is_advisory_id(std::string_view id);

// YYYY-MM-DD: digits in place, month 1-12, day 1-31.
bool is_iso_date(std::string_view s);

// An id pattern of --ignore / .specprobe.yaml: an id, or a prefix ending in `*` (SP30*, SPA-VLLM-*).
bool is_id_pattern(std::string_view pattern);
// Whether ID is PATTERN, or starts with a `*` pattern's prefix (both upper case).
bool id_matches(std::string_view pattern, std::string_view id);

}  // namespace specprobe
