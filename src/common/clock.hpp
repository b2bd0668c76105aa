// Wall-clock stamps for files and notes: the UTC time as ISO 8601 ("2026-11-29T03:02:39Z") and the
// local date ("2026-11-29"). Never part of a cache key or a verdict (those are keyed by content).
#pragma once
#include <ctime>
#include <string>

namespace specprobe {

// Now, formatted with strftime's FORMAT, in UTC or local time.
inline std::string format_now(const char* format, bool utc) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  if (utc)
    gmtime_r(&t, &tm);
  else
    localtime_r(&t, &tm);
  char buf[64];
  return std::strftime(buf, sizeof buf, format, &tm) ? std::string(buf) : std::string();
}

inline std::string utc_now_iso() { return format_now("%Y-%m-%dT%H:%M:%SZ", true); }
inline std::string local_date_iso() { return format_now("%Y-%m-%d", false); }

}  // namespace specprobe
