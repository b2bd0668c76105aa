// Installed library versions, read without running Python: *.dist-info/METADATA (and
// *.egg-info/PKG-INFO) under a site-packages directory (the ones --python's interpreter reports,
// probes::inspect_python, or given with --site-packages DIR); --lib NAME=VERSION sets one
// directly. Results become facts lib.<key>.version / .source / .git_hash / .line (DeepGEMM) and
// engine.version.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "facts/facts.hpp"

namespace specprobe {

struct LibVersion {
  std::string key;      // vllm, sglang, torch, triton, flashinfer, deep_gemm, flash_attn
  std::string version;  // as installed ("0.25.1", "2.5.0+a6b593d")
  std::string source;   // "site-packages:<dir>" | "--lib"
};

// The fact key for a distribution name ("flashinfer-python" -> "flashinfer", "deep-gemm" ->
// "deep_gemm"); empty when specprobe does not track it.
std::string lib_key(std::string_view distribution);

// site-packages directories derived from the path of the Python at PATH (an interpreter, a venv's
// bin/python, or a prefix/venv directory): the fallback when the interpreter cannot be asked (a
// shim or a symlink outside its prefix defeats it). Input error naming PATH when none is found.
Expected<std::vector<std::string>> site_packages_of_python(const std::string& python);

// Tracked distributions found in DIR. Input error when DIR is not a directory.
Expected<std::vector<LibVersion>> read_site_packages(const std::string& dir);

// Parses "NAME=VERSION" (--lib). Usage error when malformed or NAME is not tracked.
Expected<LibVersion> parse_lib_arg(const std::string& arg);

// Writes lib.* facts (later entries override earlier ones).
void add_lib_facts(Json& facts, const std::vector<LibVersion>& libs);

}  // namespace specprobe
