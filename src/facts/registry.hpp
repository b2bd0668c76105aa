// The facts registry: every fact's name, type, unit, the one module that writes it, and its doc
// line (src/facts/registry.yaml, embedded). It is the vocabulary rules and advisories are written
// in: their loaders reject a `var` that no module writes, docs/facts.md is generated from it, and
// the pipeline can audit each stage's writes against it (one writer per fact).
//
// Names are dotted paths. A segment written `<name>` matches any one segment
// (`lib.<package>.version`, `env.<NAME>`). A fact of type list, object or any also covers every
// path below it (`quant.stored_mismatch.0.config`, `spec.config.method`).
#pragma once
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {

struct FactSpec {
  std::string name;    // "spec.k", "lib.<package>.version"
  std::string type;    // bool | int | number | string | list | object | any (a value or null)
  std::string unit;    // "tokens", "bytes", ... or empty
  std::string writer;  // the module that writes it: "inputs.serving", "facts.spec", ...
  std::string doc;     // one line
};

class FactRegistry {
 public:
  // The writers, in pipeline order, with what each is (for docs and validation).
  struct Writer {
    std::string name;
    std::string what;
    bool input;          // a reader of the user's files or machine (fixtures may set its facts)
    std::string supply;  // how a user supplies this writer's facts when they are unknown
  };

  const std::vector<FactSpec>& facts() const { return facts_; }
  const std::vector<Writer>& writers() const { return writers_; }
  const Writer* writer(std::string_view name) const;

  // The spec that registers DOTTED (exactly, through a <placeholder>, or as a path below a list /
  // object / any fact), or nullptr.
  const FactSpec* find(std::string_view dotted) const;

  // Paths of AFTER that differ from BEFORE (added, changed or removed leaves; objects are walked,
  // arrays are leaves) and are not registered to WRITER: "name (registered to X)" or "name (not
  // registered)".
  std::vector<std::string> write_violations(std::string_view writer, const Json& before, const Json& after) const;

  // docs/facts.md.
  std::string markdown() const;

  // Parses registry TEXT (the YAML document); FILE names it in errors.
  static Expected<FactRegistry> parse(std::string_view text, const std::string& file);
  // The same from the document parsed already (the build-time compiled catalog).
  static Expected<FactRegistry> from_json(const Json& doc, const std::string& file);
  // The registry as a flat image (common/byte_image.hpp) the catalog compiler embeds, and back: a
  // check reads it without decoding the document (start-up, issue 49). A corrupt image is an
  // internal error.
  std::string image() const;
  static Expected<FactRegistry> from_image(std::string_view image);

 private:
  void build_index();

  std::vector<FactSpec> facts_;
  std::vector<Writer> writers_;
  // find()'s index: each fact's segments, and the facts by first segment (a fact whose first
  // segment is a <placeholder> is under ""), each list in registry order.
  std::vector<std::vector<std::string>> segments_;
  std::unordered_map<std::string, std::vector<size_t>> by_first_;
};

// The embedded registry, parsed once. An error here is an internal error.
Expected<const FactRegistry*> fact_registry();

// Flattened paths whose values differ between BEFORE and AFTER (objects walked, arrays leaves).
std::vector<std::string> changed_fact_paths(const Json& before, const Json& after);

}  // namespace specprobe
