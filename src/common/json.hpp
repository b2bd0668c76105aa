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
#include <vector>

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
// DEPTH: VALUE is written where a value nested DEPTH levels down is (its members indented one
// level more), for a document written in pieces (JsonObjectWriter).
void dump_json(const Json& value, std::string& out, int indent = 2, int depth = 0);
// S as dump_json writes a string value (quoted and escaped).
void dump_json_string(std::string_view s, std::string& out);

// What JsonObjectWriter and JsonArrayWriter share: where they write, at what depth, and whether
// a member or element came yet.
class JsonContainerWriter {
 public:
  JsonContainerWriter(const JsonContainerWriter&) = delete;
  JsonContainerWriter& operator=(const JsonContainerWriter&) = delete;
  // The depth a member's or element's value is written at.
  int child_depth() const { return depth_ + 1; }

 protected:
  JsonContainerWriter(std::string& out, int indent, int depth, char open) : out_(out), indent_(indent), depth_(depth) {
    out_ += open;
  }
  // The comma and the newline before the next member or element.
  void separate();
  // Ends the container with CLOSE ("{}" / "[]" when nothing came).
  void end(char close);

  std::string& out_;
  int indent_;
  int depth_;
  bool first_ = true;
};

// Writes a JSON object member by member into OUT, byte for byte as dump_json writes the object
// with the same members at DEPTH, without building it: the reports' many results (start-up, issue
// 49). Members must come in key order, as a Json object keeps them (checked in debug builds).
class JsonObjectWriter : public JsonContainerWriter {
 public:
  JsonObjectWriter(std::string& out, int indent, int depth) : JsonContainerWriter(out, indent, depth, '{') {}

  // The member NAME, then exactly one value below (or written by the caller at child_depth()).
  JsonObjectWriter& key(std::string_view name);
  void value(const Json& v) { dump_json(v, out_, indent_, depth_ + 1); }
  void string(std::string_view s) { dump_json_string(s, out_); }
  void string_or_null(std::string_view s) { s.empty() ? null() : string(s); }
  void strings(const std::vector<std::string>& v);
  void integer(int64_t v);
  void boolean(bool v) { out_ += v ? "true" : "false"; }
  void null() { out_ += "null"; }
  void close() { end('}'); }

 private:
#ifndef NDEBUG
  std::string last_;
#endif
};

// Writes a JSON array element by element, as JsonObjectWriter writes objects.
class JsonArrayWriter : public JsonContainerWriter {
 public:
  JsonArrayWriter(std::string& out, int indent, int depth) : JsonContainerWriter(out, indent, depth, '[') {}
  // Starts the next element; returns the depth to write it at.
  int next() {
    separate();
    return depth_ + 1;
  }
  void close() { end(']'); }
};

// OBJECT's members, and the member NAME written by WRITE(depth) at its place in key order, as
// dump_json writes the object holding them all at DEPTH (OBJECT must not hold NAME).
template <class Write>
void write_object_with(const Json& object, std::string_view name, std::string& out, int indent, int depth,
                       Write&& write) {
  JsonObjectWriter w(out, indent, depth);
  bool written = false;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (!written && name < it.key()) {
      w.key(name);
      write(w.child_depth());
      written = true;
    }
    w.key(it.key()).value(it.value());
  }
  if (!written) {
    w.key(name);
    write(w.child_depth());
  }
  w.close();
}

// A newline and DEPTH levels of INDENT (nothing for INDENT < 0), as dump_json separates members.
void json_newline(std::string& out, int indent, int depth);

// Flattens nested objects into "a.b.c" -> leaf (arrays are leaves). Used by --verbose and tests.
Json flatten_facts(const Json& facts);

}  // namespace specprobe
