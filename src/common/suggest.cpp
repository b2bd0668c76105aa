// Suggestions for mistyped words (see suggest.hpp).
#include "common/suggest.hpp"

#include "common/ascii.hpp"

#include <algorithm>

namespace specprobe {
namespace {

size_t common_prefix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && ascii_lower(a[n]) == ascii_lower(b[n])) ++n;
  return n;
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows: the one before the previous is needed for transpositions.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

size_t edit_distance_within(std::string_view a, std::string_view b, size_t limit) {
  if (a.size() > b.size()) std::swap(a, b);
  const size_t far = limit + 1;                 // "more than LIMIT edits"
  if (b.size() - a.size() > limit) return far;  // at least that many insertions
  // The rows of edit_distance, computed only on the band |i - j| <= LIMIT: a cell outside it is
  // more than LIMIT edits away. The cells just outside the band that the next rows read are set
  // to FAR; nothing else outside it is read.
  std::vector<size_t> before(b.size() + 2, far), prev(b.size() + 2, far), cur(b.size() + 2, far);
  for (size_t j = 0; j <= std::min(b.size(), limit); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    const size_t lo = i > limit ? i - limit : 1, hi = std::min(b.size(), i + limit);
    cur[lo - 1] = lo == 1 ? std::min(i, far) : far;
    size_t row_min = cur[lo - 1];
    for (size_t j = lo; j <= hi; ++j) {
      size_t d = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d = std::min(d, before[j - 2] + 1);
      cur[j] = std::min(d, far);
      row_min = std::min(row_min, cur[j]);
    }
    cur[hi + 1] = far;
    // Every later cell descends from this row (a transposition skips a row, but the cell it skips
    // is no larger than it), so a row with nothing within LIMIT ends the search.
    if (row_min > limit) return far;
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return std::min(prev[b.size()], far);
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates, size_t max_edits) {
  const std::string w = ascii_lower(word);
  const std::string* best = nullptr;
  size_t best_d = 0, best_prefix = 0;
  for (const auto& c : candidates) {
    const std::string lc = ascii_lower(c);
    const size_t d = edit_distance_within(w, lc, max_edits);
    if (c == word || d > max_edits || (d > 0 && 2 * d >= std::max<size_t>(w.size(), 2))) continue;
    const size_t prefix = common_prefix(w, lc);
    if (!best || d < best_d || (d == best_d && prefix > best_prefix)) {
      best = &c;
      best_d = d;
      best_prefix = prefix;
    }
  }
  return best ? *best : std::string();
}

std::string did_you_mean(const std::string& suggestion) {
  return suggestion.empty() ? std::string() : " (did you mean " + suggestion + "?)";
}

}  // namespace specprobe
