// The engines' own option sets, per release: rules/data/options/{vllm,sglang}.yaml (generated from
// the wheels' argument definitions by tools/options/extract_options.py; see the README there),
// loaded once from the copies embedded in the binary. On top of the tables, the parts of argparse
// the tables cannot carry: the option strings with their dashes, `--no-X` negations, vLLM 0.33's
// `--enable-X` / `--disable-X` inverses, prefix abbreviations (both engines build their parsers
// with argparse's default allow_abbrev=True), and a did-you-mean for names that match nothing.
// Pure functions over immutable tables; no I/O after the first load.
#pragma once
#include <bitset>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe::options {

// Releases of one engine's table, by index in its `releases:` list (oldest first).
inline constexpr size_t kMaxReleases = 160;
using ReleaseSet = std::bitset<kMaxReleases>;

// A value (alias, type, choice, enum member, ...) and the releases it holds in.
struct Ranged {
  std::string value;
  ReleaseSet in;
};

// One option (or one key of a JSON config): the table row.
struct OptionSpec {
  std::string name;          // long name without dashes (config keys: the field name)
  ReleaseSet releases;       // releases in which the option exists
  ReleaseSet name_releases;  // releases in which `name` itself is a valid spelling
  ReleaseSet negatable;      // BooleanOptionalAction: --no-<name> accepted
  ReleaseSet deprecated;
  ReleaseSet choices_enforced;  // releases in which `choices` are enforced by the parser
  ReleaseSet choices_dynamic;   // choices filled at import time (not listed; never flagged)
  std::vector<Ranged> aliases;  // spellings without dashes
  std::vector<Ranged> types;    // "int", "str", "bool", "json", "list[int]", "int|auto", ...
  std::vector<Ranged> choices;
  std::vector<Ranged> known_values;  // listed by the source, not enforced by argparse
  std::vector<Ranged> enum_names;    // the values are members of enums.<name>
  std::vector<Ranged> json_of;       // the config class a JSON value is validated against
};

struct EngineTable {
  std::string engine;                 // "vllm" | "sglang"
  std::string display;                // "vLLM" | "SGLang"
  std::vector<std::string> releases;  // oldest first
  ReleaseSet all;
  std::map<std::string, OptionSpec, std::less<>> options;
  std::map<std::string, OptionSpec, std::less<>> speculative_config;  // vLLM only
  std::map<std::string, OptionSpec, std::less<>> compilation_config;  // vLLM only
  std::map<std::string, std::vector<Ranged>, std::less<>> enums;

  // "0.7.0-0.8.2, 0.10.0-" for a set of releases ("A-" = through the newest read).
  std::string range_text(const ReleaseSet& s) const;
  // The index of a release named exactly as in the table, if any.
  std::optional<size_t> index_of(std::string_view version) const;
  // The releases from index `from` on.
  ReleaseSet from(size_t index) const;
};

// The table of ENGINE ("vllm", "sglang"); nullptr for an engine without one. A table that does not
// load is an internal error (the tables are embedded and checked by tests).
Expected<const EngineTable*> engine_table(std::string_view engine);

// TABLE as a flat image (common/byte_image.hpp), written by tools/catalog/compile_catalog from the
// table it loaded and checked, and read back by engine_table() without decoding the YAML document
// (start-up, issue 49). A corrupt image is an internal error.
std::string table_image(const EngineTable& table);
// ENGINE's table read from its embedded YAML by the checking loader (what the compiler writes).
Expected<EngineTable> load_table_yaml(std::string_view engine);
Expected<EngineTable> read_table_image(std::string_view image);

// Which releases a check uses for an engine version (engine.version; nullopt = unknown).
struct Selection {
  ReleaseSet releases;
  bool exact = false;  // one release, the installed one
  // The engine may be newer than every release the tables read (its version is unknown or later
  // than the newest): a name or value no release knows, and close to none that one does, may be
  // new rather than wrong, so it is a note (SP1016), not an error.
  bool beyond = false;
  // The version is unknown: every release is read, but the newest decides; an option, key or value
  // the newest accepts is fine, one only older releases accept is a note (SP1016).
  bool newest_decides = false;
  std::string label;        // "vLLM 0.20.0", "vLLM 0.33.0, the newest table (the engine version is unknown; ...)"
  std::string short_label;  // "vLLM 0.20.0", "any vLLM release", "vLLM 0.21.0 or 0.22.0"
};
Selection select_releases(const EngineTable& t, const std::optional<std::string>& version);

// One spelling argparse accepts, with its dashes ("--tensor-parallel-size", "-tp",
// "--no-enable-prefix-caching"), the option it belongs to and the releases it is accepted in.
struct OptionString {
  std::string text;
  std::string option;
  ReleaseSet in;
  bool negative = false;  // sets a boolean option to false
};
// Every spelling of every option of the table, sorted by text.
const std::vector<OptionString>& option_strings(const EngineTable& t);

// How a flag as written resolves in a set of releases, the way argparse resolves it in each
// release: an exact spelling first, else an unambiguous prefix (allow_abbrev).
struct Resolution {
  std::string option;  // the option it names (in the newest release where it resolves); empty: none
  bool negative = false;
  bool abbreviation = false;
  ReleaseSet accepted;                  // releases (within the selection) that accept the flag
  ReleaseSet ambiguous;                 // releases in which it is a prefix of several options
  std::vector<std::string> candidates;  // the options it abbreviates where ambiguous
};
// FLAG with its dashes and without `=value` ("--tensor-parallel", "-tp"). vLLM folds `_` to `-`
// before the first `.`; the caller passes the name after that folding.
Resolution resolve_flag(const EngineTable& t, std::string_view flag, const ReleaseSet& selection);

// The spelling closest to WRITTEN among CANDIDATES (edit distance with transpositions, words in
// another order, a missing leading word), or empty when none is close. Case-insensitive; `_` and
// `-` compare equal.
// Edit-distance suggestions need at least MIN_LENGTH characters (short names match too much).
std::string did_you_mean(std::string_view written, const std::vector<std::string>& candidates, size_t min_length = 4);

// Whether TEXT is an integer the way the engine's int parser reads it (vLLM accepts its
// human-readable ints, "8k", "1M"; SGLang only Python int()).
bool parses_as_int(const std::string& text, bool vllm_human);
bool parses_as_float(const std::string& text);

// The long spellings of vLLM aliases: every other vLLM alias is a one-dash flag (-tp, -O, -sc),
// every SGLang alias a two-dash one.
bool long_alias(const EngineTable& t, std::string_view alias);

}  // namespace specprobe::options
