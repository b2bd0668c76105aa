// "Did you mean ...?": the closest known word to a mistyped one (flags, subcommands, rule and
// advisory ids, library names). One distance and one ranking for every suggestion specprobe makes.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace specprobe {

// Optimal-string-alignment distance: insertions, deletions, substitutions and transpositions of
// two adjacent characters each cost 1 ("SP3100" is one edit from "SP3010").
size_t edit_distance(std::string_view a, std::string_view b);

// edit_distance(a, b) when it is at most LIMIT, else LIMIT + 1. Every suggestion only asks "within
// a few edits?", and the answer costs O(LIMIT x length) instead of O(|a| x |b|): a 4,000-character
// option name from a pasted log, compared with 600 spellings, was most of a check's time.
size_t edit_distance_within(std::string_view a, std::string_view b, size_t limit);

// The candidate closest to WORD (compared case-insensitively), or "" when none is close enough:
// at most MAX_EDITS edits, and fewer than half of WORD's characters. Ties go to the candidate
// sharing the longest prefix with WORD (the same band of rule ids: SP3100 -> SP3010, never
// SP1001), then to the earlier one.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates, size_t max_edits = 2);

// " (did you mean X?)" when X is not empty, else "".
std::string did_you_mean(const std::string& suggestion);

}  // namespace specprobe
