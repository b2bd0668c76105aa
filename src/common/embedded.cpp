// Lookup in the embedded-file table.
#include "common/embedded.hpp"

#include <algorithm>

#include "common/yaml_json.hpp"

namespace specprobe {

std::optional<std::string_view> embedded_file(std::string_view path) {
  for (const auto& f : embedded_files())
    if (f.path == path) return f.content;
  return std::nullopt;
}

std::optional<Json> embedded_document(std::string_view path) {
  const auto docs = embedded_documents();
  const auto it = std::lower_bound(docs.begin(), docs.end(), path,
                                   [](const EmbeddedDocument& d, std::string_view p) { return d.path < p; });
  if (it == docs.end() || it->path != path) return std::nullopt;
  Json j = Json::from_cbor(it->cbor.begin(), it->cbor.end(), true, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

Expected<Json> embedded_yaml_document(std::string_view path) {
  if (auto doc = embedded_document(path)) return std::move(*doc);
  auto text = embedded_file(path);
  if (!text) return internal_error(fmt::format("{} is not embedded", path));
  return parse_yaml_text(*text, std::string(path));
}

}  // namespace specprobe
