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

// YYYY-MM-DD (digits in place; the calendar is not checked).
bool is_iso_date(std::string_view s);

}  // namespace specprobe
