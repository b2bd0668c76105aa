// YAML -> JSON conversion with YAML 1.2 core-schema typing of plain scalars (yaml-cpp leaves
// every scalar a string): plain `2` is an integer, `1.5` a float, `true`/`false` booleans,
// `null`/`~`/empty null; quoted scalars stay strings. Used for rule files and YAML configs.
#pragma once
#include <string>

#include <yaml-cpp/yaml.h>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {

// A scalar's text as valid UTF-8. yaml-cpp decodes the double-quoted escapes \N and \_ to the
// single bytes 0x85 and 0xA0 (Latin-1, not UTF-8), and a file that is not UTF-8 passes through
// as is; any byte that does not start a valid UTF-8 sequence is taken as Latin-1 and re-encoded,
// so every string reaching a Json is printable (nlohmann's dump throws on invalid UTF-8).
std::string yaml_utf8(std::string s);

// Converts NODE; errors (input) for nesting deeper than max_depth and for aliases that expand
// beyond max_nodes (billion-laughs), naming FILE and the node's line:column.
Expected<Json> yaml_to_json(const YAML::Node& node, const std::string& file, int max_depth = 128,
                            size_t max_nodes = 1000000);

// Parses TEXT as YAML and converts it; syntax errors name FILE:line:col.
Expected<Json> parse_yaml_text(std::string_view text, const std::string& file);

}  // namespace specprobe
