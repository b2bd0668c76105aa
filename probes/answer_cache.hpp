// Answers of the child-process checks (the engine check, the stack probes) kept across runs.
//
// Both ask the user's own Python, which costs seconds a run (importing torch alone is ~3 s), and
// both answer the same way again while nothing that decides the answer changed. The key is built
// from what decides it, never from a clock: the installed build of the library (its dist-info
// RECORD: every file's hash; an editable install has none worth trusting and is never cached), the
// interpreter (path, size, mtime), the adapter scripts specprobe ships, the request (shapes), the
// environment variables the child inherits and, for anything that runs on the GPU, the GPU and
// driver. An entry is JSON {"schema", "key", "raw", "written"}: the adapter's raw answer, read back
// through the same validator as a fresh one (an unreadable or invalid entry is a miss and is
// replaced). Entries are written atomically (common/output_file.hpp); `--no-cache` bypasses them.
//
// Why a key and not a time-to-live: an answer is stale exactly when one of those inputs changed,
// and each of them can be read without starting Python (sccache and ccache key the same way).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"

namespace specprobe::probes {

// Two FNV-1a 64-bit lanes over separated fields: 128 bits of key, no dependency.
class CacheKey {
 public:
  void add(std::string_view field);
  // PATH by name, size and mtime and its content (up to 32 MiB); "missing:PATH" when absent.
  void add_file(const std::string& path);
  // PATH by name, size and mtime only (an interpreter: megabytes that the mtime already names).
  void add_stat(const std::string& path);
  std::string hex() const;  // 32 hex digits

 private:
  uint64_t a_ = 14695981039346656037ull, b_ = 0x9ae16a3b2f90404full;
};

// FNV-1a 64 of S (a short stable name for a directory).
uint64_t fnv1a64(std::string_view s, uint64_t basis = 14695981039346656037ull);

// The RECORD of the first distribution in SITE_PACKAGES (import order) whose dist-info name is one
// of NAMES (PEP 503 normalised: lower case, '-' and '.' read as '_'), or "" when none is installed
// or its RECORD is missing.
std::string find_dist_record(const std::vector<std::string>& names, const std::vector<std::string>& site_packages);

// True when the distribution of RECORD was installed editable (PEP 660 direct_url.json
// "dir_info": {"editable": true}): its code lives in a source tree the RECORD does not hash.
bool editable_install(const std::string& record);

// BASE/specprobe/SUB under $XDG_CACHE_HOME, else ~/.cache; OVERRIDE when not empty; "" when
// neither variable is an absolute path.
std::string user_cache_dir(const std::string& sub, const std::string& override_dir = "");

// Up to LIMIT bytes of PATH; "" when it cannot be read.
std::string read_small_file(const std::string& path, size_t limit);

// The raw answer stored under KEY in FILE for SCHEMA, or nothing (absent, unreadable, other key).
std::optional<Json> read_cached_answer(const std::string& file, const std::string& schema, const std::string& key);

// Stores RAW under KEY in FILE (directories made); false when it cannot be written (which only
// costs the next run its time).
// "written" records the UTC time, for people reading the file.
bool write_cached_answer(const std::string& file, const std::string& schema, const std::string& key, const Json& raw);

}  // namespace specprobe::probes
