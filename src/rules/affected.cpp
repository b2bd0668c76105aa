// Affected version ranges and where the installed versions place a plan (see affected.hpp).
#include "rules/affected.hpp"

#include <unordered_map>

#include "common/byte_image.hpp"
#include "common/version.hpp"

namespace specprobe {

void write_affected(ByteWriter& w, const std::vector<AffectedPackage>& affected) {
  w.u32(static_cast<uint32_t>(affected.size()));
  for (const auto& ap : affected) {
    w.str(ap.package);
    w.u32(static_cast<uint32_t>(ap.ranges.size()));
    for (const auto& r : ap.ranges)
      for (const std::string* s : {&r.introduced, &r.fixed, &r.introduced_commit, &r.fixed_commit}) w.str(*s);
  }
}

std::vector<AffectedPackage> read_affected(ByteReader& r) {
  std::vector<AffectedPackage> out(r.count());
  for (auto& ap : out) {
    ap.package = r.str();
    ap.ranges.resize(r.count());
    for (auto& range : ap.ranges)
      for (std::string* s : {&range.introduced, &range.fixed, &range.introduced_commit, &range.fixed_commit})
        *s = r.str();
  }
  return out;
}

Expected<std::string> version_text(const Json& v, const char* key, const std::string& file) {
  std::string s;
  if (v.is_string())
    s = v.get<std::string>();
  else if (v.is_number())
    s = v.dump();
  else
    return input_error(fmt::format("affected range '{}' must be a version string", key), {file});
  if (s != "0" && !parse_version(s))
    return input_error(fmt::format("affected range '{}': '{}' is not a PEP 440 version", key, s), {file});
  return s;
}

namespace {

// parse_version, remembered per thread: the same few range bounds and installed versions are
// placed again for every advisory and every matrix cell (start-up, issue 49). The map's nodes
// stay put, so a reference stays valid while others are added.
const std::optional<Version>& parsed(const std::string& text) {
  thread_local std::unordered_map<std::string, std::optional<Version>> memo;
  if (auto it = memo.find(text); it != memo.end()) return it->second;
  return memo.emplace(text, parse_version(text)).first->second;
}

bool hash_prefix(const std::string& have, const std::string& known) {
  if (have.size() < 7 || known.size() < 7) return false;
  const size_t n = std::min(have.size(), known.size());
  return have.compare(0, n, known, 0, n) == 0;
}

// Whether VERSION (known) lies in RANGE; commits decide where the advisory names them.
bool in_range(const Version& v, const VersionRange& r) {
  if (auto h = v.git_hash()) {
    if (!r.fixed_commit.empty() && hash_prefix(*h, r.fixed_commit)) return false;
    if (!r.introduced_commit.empty() && hash_prefix(*h, r.introduced_commit)) return true;
  }
  const Version base = v.public_version();
  if (r.introduced != "0")
    if (const auto& lo = parsed(r.introduced); lo && base < *lo) return false;
  if (!r.fixed.empty())
    if (const auto& hi = parsed(r.fixed); hi && !(base < *hi)) return false;
  return true;
}

}  // namespace

std::string range_text(const VersionRange& r) {
  if (r.introduced == "0" && r.fixed.empty()) return "every release";
  if (r.introduced == "0") return "< " + r.fixed;
  if (r.fixed.empty()) return ">= " + r.introduced;
  return fmt::format(">= {}, < {}", r.introduced, r.fixed);
}

Expected<std::vector<AffectedPackage>> parse_affected(const Json& list, const std::string& file) {
  std::vector<AffectedPackage> out;
  if (!list.is_array() || list.empty())
    return input_error("affected must list at least one package with its ranges", {file});
  for (const auto& p : list) {
    AffectedPackage ap;
    if (!p.is_object() || !p.value("package", Json()).is_string())
      return input_error("each affected entry needs a package", {file});
    ap.package = p["package"].get<std::string>();
    if (!p.value("ranges", Json()).is_array() || p["ranges"].empty())
      return input_error(fmt::format("affected {}: ranges must be a non-empty list", ap.package), {file});
    for (const auto& r : p["ranges"]) {
      if (!r.is_object()) return input_error(fmt::format("affected {}: a range must be a mapping", ap.package), {file});
      VersionRange vr;
      if (r.contains("introduced")) {
        auto v = version_text(r["introduced"], "introduced", file);
        if (!v) return v.error();
        vr.introduced = *v;
      }
      if (r.contains("fixed") && !r["fixed"].is_null()) {
        auto v = version_text(r["fixed"], "fixed", file);
        if (!v) return v.error();
        vr.fixed = *v;
      }
      vr.introduced_commit = r.value("introduced_commit", Json("")).is_string() ? r.value("introduced_commit", "") : "";
      vr.fixed_commit = r.value("fixed_commit", Json("")).is_string() ? r.value("fixed_commit", "") : "";
      if (!vr.fixed.empty() && vr.introduced != "0" && !(*parse_version(vr.introduced) < *parse_version(vr.fixed)))
        return input_error(
            fmt::format("affected {}: introduced {} is not before fixed {}", ap.package, vr.introduced, vr.fixed),
            {file});
      ap.ranges.push_back(vr);
    }
    out.push_back(std::move(ap));
  }
  return out;
}

VersionVerdict place_versions(const std::vector<AffectedPackage>& affected, const Json& facts) {
  VersionVerdict v;
  std::vector<std::string> known, unknown, older;
  bool all_unknown_reach_newest = true;
  for (const auto& ap : affected) {
    const auto text = fact_string(facts, "lib." + ap.package + ".version");
    static const std::optional<Version> kUnknown;
    const std::optional<Version>& ver = text ? parsed(*text) : kUnknown;
    if (!ver) {
      unknown.push_back(ap.package);
      bool newest = false;
      std::string fixed;
      for (const auto& r : ap.ranges) {
        newest |= r.fixed.empty();
        if (!r.fixed.empty() && (fixed.empty() || *parsed(fixed) < *parsed(r.fixed))) fixed = r.fixed;
      }
      if (!newest) {
        all_unknown_reach_newest = false;
        older.push_back(fmt::format("{} < {}", ap.package, fixed));
      }
      continue;
    }
    const VersionRange* hit = nullptr;
    for (const auto& r : ap.ranges)
      if (in_range(*ver, r)) {
        hit = &r;
        break;
      }
    if (!hit) {
      std::string ranges;
      for (const auto& r : ap.ranges) ranges += (ranges.empty() ? "" : "; ") + range_text(r);
      v.kind = VersionVerdict::Kind::fixed;
      v.text = fmt::format("{} {} is outside the affected range ({})", ap.package, *text, ranges);
      return v;
    }
    known.push_back(fmt::format("{} {} (affected: {})", ap.package, *text, range_text(*hit)));
  }
  auto join = [](const std::vector<std::string>& xs) {
    std::string s;
    for (const auto& x : xs) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  v.text = join(known);
  v.unknown = join(unknown);
  if (unknown.empty())
    v.kind = VersionVerdict::Kind::affected;
  else if (all_unknown_reach_newest)
    v.kind = VersionVerdict::Kind::unknown_newest;
  else {
    v.kind = VersionVerdict::Kind::unknown_older;
    v.older_than = join(older);
  }
  return v;
}

}  // namespace specprobe
