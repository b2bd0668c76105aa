// Installed library versions, read without running Python: *.dist-info/METADATA (and
// *.egg-info/PKG-INFO) under a site-packages directory (the ones the --python interpreter reports,
// inputs/versions/python_env.hpp, or given with --site-packages DIR); --lib NAME=VERSION sets one
// directly. Results become facts lib.<key>.version / .source / .public_version / .local /
// .git_hash.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {

struct LibVersion {
  std::string key;      // vllm, sglang, torch, triton, flashinfer, deep_gemm, flash_attn
  std::string version;  // as installed ("0.25.1", "2.5.0+a6b593d")
  std::string source;   // "site-packages:<dir>" | "--lib"
};

// The fact key for a distribution name ("flashinfer-python" -> "flashinfer", "deep-gemm" ->
// "deep_gemm"); empty when specprobe does not track it.
std::string lib_key(std::string_view distribution);

// Tracked distributions found in DIR. Input error when DIR is not a directory.
Expected<std::vector<LibVersion>> read_site_packages(const std::string& dir);

// Parses "NAME=VERSION" (--lib). Usage error when malformed or NAME is not tracked.
Expected<LibVersion> parse_lib_arg(const std::string& arg);

// Writes lib.* facts (later entries override earlier ones).
void add_lib_facts(Json& facts, const std::vector<LibVersion>& libs);

}  // namespace specprobe
