// The catalog compiler's own (empty) table of compiled documents: it reads the YAML, which is what
// it checks and compiles (common/embedded.hpp).
#include "common/embedded.hpp"

namespace specprobe {

std::span<const EmbeddedDocument> embedded_documents() { return {}; }
std::string_view embedded_registry_image() { return {}; }
std::string_view embedded_rule_image() { return {}; }
std::string_view embedded_advisory_image() { return {}; }
std::string_view embedded_option_image(std::string_view) { return {}; }

}  // namespace specprobe
