// Version ranges a failure lives in (introduced by one change, fixed by another), the same for
// rules and advisories, and where the installed versions place a plan against them. The version
// policy (docs/versions.md): a package whose version is unknown is taken to be the newest release:
// a range that reaches the newest (no `fixed`) applies; one that ends before is about older
// releases only, and the finding becomes a note saying so ("if you run vllm < 0.28.0: ...").
#pragma once
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {

struct VersionRange {
  std::string introduced = "0";  // "0": every earlier release
  std::string fixed;             // empty: not fixed in any release
  std::string introduced_commit, fixed_commit;
};

struct AffectedPackage {
  std::string package;  // vllm, sglang, flashinfer, deep_gemm, flash_attn, triton, torch, ... (lib.<package>)
  std::vector<VersionRange> ranges;  // any of them
};

// An `affected:` list of a rule or advisory file (advisories/README.md has the format); errors
// (input) name FILE.
Expected<std::vector<AffectedPackage>> parse_affected(const Json& list, const std::string& file);

// A version field: YAML may type 0.9 as a number; a version is text, "0" or a PEP 440 version.
Expected<std::string> version_text(const Json& v, const char* key, const std::string& file);

// AFFECTED in a catalog image (common/byte_image.hpp; rules/advisory.hpp advisory_image).
class ByteWriter;
class ByteReader;
void write_affected(ByteWriter& w, const std::vector<AffectedPackage>& affected);
std::vector<AffectedPackage> read_affected(ByteReader& r);

// "< 0.12.0", ">= 0.11.0, < 0.12.0", "every release".
std::string range_text(const VersionRange& r);

// How the installed versions (lib.<package>.version) place the plan against AFFECTED.
struct VersionVerdict {
  enum class Kind { affected, fixed, unknown_newest, unknown_older } kind = Kind::affected;
  std::string text;        // "vllm 0.11.1 (affected: >= 0.11.0, < 0.12.0)"
  std::string unknown;     // the packages whose version is unknown ("vllm")
  std::string older_than;  // for unknown_older: "vllm < 0.12.0"
};
VersionVerdict place_versions(const std::vector<AffectedPackage>& affected, const Json& facts);

}  // namespace specprobe
