// PEP 440 versions and specifier sets, as installed Python packages report them
// ("0.21.1rc1.dev208+g15332b582", "2.9.0+nv_dev.a6b593d"). Used by the facts stage to record
// library versions and by the JSON Logic "ver*" operators. Pure functions; never throws.
#pragma once
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace specprobe {

// One parsed version. Fields hold the normalized PEP 440 parts.
struct Version {
  enum class PreKind : std::uint8_t { alpha, beta, rc };  // a < b < rc
  struct Pre {
    PreKind kind = PreKind::alpha;
    std::uint64_t number = 0;
  };

  std::uint64_t epoch = 0;
  std::vector<std::uint64_t> release;  // at least one segment; trailing zeros are kept as written
  std::optional<Pre> pre;
  std::optional<std::uint64_t> post;
  std::optional<std::uint64_t> dev;
  // The local label after '+', lower-cased, separators kept as written ("nv_dev.a6b593d");
  // empty when there is none.
  std::string local;

  // The local label split on '.', '_' and '-' (PEP 440 treats them alike).
  std::vector<std::string> local_segments() const;
  // A git commit hash carried in the local label, if any: "g3424fba5" -> "3424fba5",
  // "nv_dev.a6b593d" -> "a6b593d". A segment counts when it is 7-40 hex digits (after an
  // optional leading 'g') and holds at least one letter or is 'g'-prefixed.
  std::optional<std::string> git_hash() const;
  // Normalized text: "1!2.0rc1.post3.dev4+abc.def" (local separators normalized to '.').
  std::string str() const;
  // The version without its local label.
  Version public_version() const;
};

// Parses PEP 440 text, case-insensitively, tolerating surrounding whitespace, a leading 'v' and
// the alternative spellings PEP 440 normalizes ("1.0-alpha.1", "1.0-1", "1.0.preview2").
// nullopt when the text is not a version or a number has more than 18 digits.
std::optional<Version> parse_version(std::string_view text);

// Total order of PEP 440: epoch, release (trailing zeros ignored: 1.0 == 1.0.0), then
// dev-only < pre (a < b < rc, each optionally .dev) < final < post; a version with a local label
// sorts after the same version without one, local segments compare numerically when both are
// numbers, numbers sort after strings.
std::strong_ordering operator<=>(const Version& a, const Version& b);
bool operator==(const Version& a, const Version& b);

// One clause of a specifier set: "<0.28", "==0.25.*", "~=2.1".
struct Specifier {
  enum class Op : std::uint8_t { eq, ne, lt, le, gt, ge, compatible, arbitrary };
  Op op = Op::eq;
  Version version;
  bool wildcard = false;  // "==X.Y.*" / "!=X.Y.*"
  std::string text;       // the clause as written, trimmed (used for "===" and messages)
};

// A comma-separated conjunction of specifiers. Empty matches every version.
struct SpecifierSet {
  std::vector<Specifier> specifiers;
};

// Parses ">=0.20.0,<0.28" (whitespace allowed around clauses and operators).
// Errors (kind input) name the clause that does not parse.
Expected<SpecifierSet> parse_specifiers(std::string_view text);

// Whether v satisfies one clause. Deliberately simpler than PEP 440:
//  - "==V"/"!=V": exact comparison (trailing zeros ignored); when V has no local label the
//    candidate's local label is ignored ("==2.9.0" matches "2.9.0+cu128").
//  - "==V.*"/"!=V.*": epoch equal and release starts with V's release (zero-padded); the
//    candidate's pre/post/dev/local parts are ignored ("==0.25.*" matches "0.25.1rc1").
//  - "<", "<=", ">", ">=": plain ordering of the candidate without its local label against V.
//    The PEP 440 exclusions ("<0.28" rejecting 0.28 pre-releases, ">V" rejecting V's post
//    releases) are NOT applied: "<0.28" accepts "0.28.0rc1" because it orders below 0.28.
//  - "~=V": ">=V" and "==P.*" where P is V's release without its last segment.
//  - "===S": case-insensitive text equality of S with the candidate's normalized str().
//  - Pre-releases are never filtered out.
bool satisfies(const Version& v, const Specifier& spec);
bool satisfies(const Version& v, const SpecifierSet& set);

// Convenience: parses both; false when either does not parse.
bool version_satisfies(std::string_view version, std::string_view specifiers);

}  // namespace specprobe
