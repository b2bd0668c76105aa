// JSON values and dotted-path access. The facts document (facts/registry.hpp) is one JSON object
// every stage reads and writes, addressed by stable dotted names ("spec.next_n", "gpu.sm",
// "lib.deep_gemm.version"); nested objects, so JSON Logic's {"var": "spec.next_n"} walks it
// directly. Unknown = absent or null, never a guess. The helpers live here, below every stage,
// because readers, the GPU layer and the rules all address JSON the same way.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace specprobe {

using Json = nlohmann::json;
using Facts = nlohmann::json;

// The value at a dotted path, or nullptr when any step is missing. Array steps are indices.
const Json* find_fact(const Json& facts, std::string_view dotted);

// Sets the value at a dotted path, creating intermediate objects.
void set_fact(Json& facts, std::string_view dotted, Json value);

// Removes the value at a dotted path if present.
void erase_fact(Json& facts, std::string_view dotted);

// Typed reads; nullopt when absent, null or of another type.
std::optional<std::string> fact_string(const Json& facts, std::string_view dotted);
std::optional<int64_t> fact_int(const Json& facts, std::string_view dotted);
std::optional<bool> fact_bool(const Json& facts, std::string_view dotted);

// VALUE as Json::dump(INDENT, ' ', false, error_handler_t::replace) writes it (INDENT < 0: on one
// line), byte for byte, appended to OUT; several times faster on the reports' mostly-ASCII text
// (runs of plain bytes are copied whole; a string with other bytes is escaped by nlohmann itself).
void dump_json(const Json& value, std::string& out, int indent = 2);

// Flattens nested objects into "a.b.c" -> leaf (arrays are leaves). Used by --verbose and tests.
Json flatten_facts(const Json& facts);

}  // namespace specprobe
