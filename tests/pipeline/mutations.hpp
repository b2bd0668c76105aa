// Mutations of a serving config for the pipeline property test (pipeline_property_test.cpp).
//
// A source file yields a list of mutation specs, each cheap to keep (a few words) and turned into
// the mutated text only when it runs, so the whole set can be counted, shuffled with a fixed seed
// and sampled without building 100k strings:
//   - tree mutations (a file that parses as JSON, or as YAML with a mapping or sequence at the
//     top): every key deleted, every value replaced by each edge value, every key renamed
//     (dashes <-> underscores, three typos); a string value that holds a JSON object (vLLM's
//     speculative-config given as a string) is parsed and mutated the same way, field by field;
//     the result is written back as JSON (.json) or block YAML (everything else);
//   - option mutations (every file, as text): every `--option` token deleted with its value,
//     its value replaced by each edge value, its name renamed the same four ways; a value that
//     is a JSON object (`--speculative-config '{...}'`) is mutated field by field.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace specprobe::testing::mutate {

using ojson = nlohmann::ordered_json;

// The edge values every value is replaced by, in the order of kEdgeNames.
inline constexpr std::string_view kEdgeNames[] = {
    "null", "0", "-1", "empty string", "[]", "{}", "10k string", "true", "1.5", "object", "2^63", "NaN", "unicode"};
inline constexpr size_t kEdgeCount = std::size(kEdgeNames);
// Key renames: separators swapped, a character dropped, two transposed, one doubled.
inline constexpr std::string_view kRenameNames[] = {"dash/underscore", "drop char", "transpose", "double char"};
inline constexpr size_t kRenameCount = std::size(kRenameNames);

enum class Op : uint8_t { del, set, rename };

// A step into a tree: an object key, an array index, or "parse this string as JSON".
struct Step {
  enum Kind : uint8_t { key, index, json_text } kind = key;
  std::string name;  // key
  size_t at = 0;     // index
};

struct TreeMutation {
  std::vector<Step> path;  // from the document index to the value mutated (last step: a key or index)
  Op op = Op::del;
  uint8_t arg = 0;  // edge value or rename variant
};

// An option token in the text: `--name`, then optionally `=VALUE` or spaces and one shell word.
struct OptionSite {
  size_t begin = 0;        // the first dash
  size_t name_end = 0;     // past the name
  size_t value_begin = 0;  // == value_end when the option has no value word
  size_t value_end = 0;
  bool value_single_quoted = false;  // the value is '...' (a JSON object inside is mutated)
};

struct TextMutation {
  size_t site = 0;
  Op op = Op::del;
  uint8_t arg = 0;
  std::vector<Step> inner;  // non-empty: a mutation inside the value's JSON object (op/arg apply there)
};

struct Mutation {
  std::optional<TreeMutation> tree;
  std::optional<TextMutation> text;
};

// One source file and what can be done to it.
struct Source {
  std::string path;  // on disk
  std::string rel;   // for messages
  std::string text;
  bool well_formed = true;      // false: malformed on purpose (the "no crash" part only)
  ojson docs = ojson::array();  // the parsed documents (a JSON file is one); empty when none parsed
  bool tree_is_json = false;    // written back as JSON (else YAML)
  std::vector<OptionSite> sites;
  std::vector<ojson> site_json;  // per site: the JSON object in its value (null when none)
  std::vector<Mutation> mutations;
};

// Fills SOURCE's tree, sites and mutation list from its text.
void plan_mutations(Source& source);

// The mutated text.
std::string apply(const Source& source, const Mutation& m);

// "delete spec.k", "set --tp = 10k string", ... (for failure messages).
std::string describe(const Source& source, const Mutation& m);

}  // namespace specprobe::testing::mutate
