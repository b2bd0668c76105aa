// Wall-clock stamps for files and notes: the UTC time as ISO 8601 ("2026-11-29T03:02:39Z") and the
// local date ("2026-11-29"). Never part of a cache key or a verdict (those are keyed by content).
#pragma once
#include <ctime>
#include <string>

namespace specprobe {

inline std::string utc_now_iso() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

inline std::string local_date_iso() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace specprobe
