// The middle of the serving readers: every input form (YAML/JSON config, script, argv) is first
// turned into an ordered list of RawOption, then one builder per engine (options/vllm.cpp,
// options/sglang.cpp) normalizes names and values into the facts subtree of ParsedServing.
// Internal to the serving readers (src/inputs/*/).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "inputs/serving.hpp"
#include "inputs/text/text.hpp"

namespace specprobe::serving {

struct RawOption {
  std::string name;         // as written, without leading dashes (`tp`, `speculative_config.method`)
  bool short_form = false;  // written with one dash on a command line (`-tp`, `-cc.x`, `-O3`)
  Json value;               // flags without a value: true
  bool textual = false;     // value is command-line text, to be typed like argparse / vLLM would
  SourceLocation where;     // of the key or flag
  PosMap value_pos;         // offset in a string value -> place in the file (may be empty)
  std::map<std::string, SourceLocation> inner;  // structured value: "a.b" -> key location
};

struct ReadContext {
  std::string path;  // file read, or "<command line>"
  InputForm form = InputForm::vllm_yaml;
  std::string positional_model;  // `vllm serve MODEL` (empty when none)
  SourceLocation positional_loc;
  bool api_server = false;  // python -m vllm.entrypoints.openai.api_server (--model is normal)
  std::vector<std::pair<std::string, EnvSetting>> env;  // in order of appearance
  std::vector<ReaderNote> notes;                        // collected by the form reader
  std::vector<UnknownOption> unknown;                   // positional leftovers etc.
  // Set when `--config FILE` could not be read (an unresolved name, unreadable, outside the tree):
  // every option fact the command line does not set may come from it, so the builder writes
  // those as null (unknown) at this location instead of leaving vLLM's defaults to be assumed.
  std::optional<SourceLocation> options_file_unknown;
};

// Canonical option name: leading dashes stripped, `_` -> `-` before the first `.`.
std::string canonical_name(std::string_view written);

Expected<ParsedServing> build_vllm(const std::vector<RawOption>& options, ReadContext ctx);
Expected<ParsedServing> build_sglang(const std::vector<RawOption>& options, ReadContext ctx);

// Config-file readers (config/config_file.cpp): a whole vLLM --config file -> options.
Expected<std::vector<RawOption>> read_yaml_options(const std::string& text, const LineIndex& index,
                                                   std::vector<ReaderNote>& notes);
Expected<std::vector<RawOption>> read_json_options(const std::string& text, const LineIndex& index);

// The command line after `specprobe check --` (command/command.cpp); scripts and the other deploy
// forms: forms.hpp.
Expected<ParsedServing> read_command_argv(const std::vector<std::string>& argv, const ReadOptions& options);

}  // namespace specprobe::serving

namespace specprobe::serving {

// Writes facts and their locations into a ParsedServing.
class PlanWriter {
 public:
  explicit PlanWriter(ParsedServing& out) : out_(out) {}
  void set(const std::string& name, Json value, const SourceLocation& where) {
    set_fact(out_.facts, name, std::move(value));
    out_.locations[name] = where;
  }
  // Records where a fact derived from the plan (spec.k from num_speculative_tokens) comes from,
  // without setting it: findings about the derived fact anchor there.
  void locate(const std::string& name, const SourceLocation& where) { out_.locations[name] = where; }
  bool has(const std::string& name) const { return find_fact(out_.facts, name) != nullptr; }
  // Sets NAME to VALUE with a file-level location unless it is already set.
  void set_default(const std::string& name, Json value) {
    if (!has(name)) set(name, std::move(value), SourceLocation{out_.path});
  }
  // What every plan carries when the file does not say (both engines' defaults, file-level
  // location): one parallel rank each, no expert parallelism, the model's dtypes, CUDA graphs on,
  // no attention backend or CUDA-graph mode requested.
  void set_plan_defaults() {
    set_default("serve.tp", 1);
    set_default("serve.pp", 1);
    set_default("serve.dp", 1);
    set_default("serve.expert_parallel", false);
    set_default("serve.kv_cache_dtype", "auto");
    set_default("serve.dtype", "auto");
    set_default("serve.enforce_eager", false);
    set_default("serve.cudagraph_mode", nullptr);
    set_default("attention.requested", nullptr);
  }
  void note(std::string severity, std::string message, SourceLocation where) {
    out_.notes.push_back({std::move(severity), std::move(message), std::move(where)});
  }
  ParsedServing& plan() { return out_; }

 private:
  ParsedServing& out_;
};

// Options given more than once. The engines keep the later value; the plan says so once per
// option (at the value that wins, with the count), not once per repeat: a generated script that
// repeats a flag 200,000 times gets one note, not a 45 MB report.
class RepeatedOptions {
 public:
  void again(const std::string& display, const SourceLocation& where) {
    auto [it, fresh] = index_.emplace(display, repeats_.size());
    if (fresh) repeats_.push_back({display, 1, where});
    Repeat& r = repeats_[it->second];
    ++r.count;
    r.last = where;
  }
  void note_all(PlanWriter& w) const {
    for (const Repeat& r : repeats_)
      w.note("info", r.display + " is given " + std::to_string(r.count) + " times; the last value wins", r.last);
  }

 private:
  struct Repeat {
    std::string display;
    long count;  // occurrences, the first included
    SourceLocation last;
  };
  std::vector<Repeat> repeats_;
  std::map<std::string, size_t> index_;
};

// Integer option values: ints, integral floats and numeric strings. `human` also accepts vLLM's
// human-readable ints ("256K"). WHAT names the option in the error message.
Expected<int64_t> to_int(const Json& v, std::string_view what, const SourceLocation& where, bool human = false);
Expected<bool> to_bool(const Json& v, std::string_view what, const SourceLocation& where);
Expected<double> to_float(const Json& v, std::string_view what, const SourceLocation& where);
std::string to_text(const Json& v);  // strings as is, anything else as JSON text

// The engine's option tables (options/tables.hpp, every release) on a flag as written with its
// dashes: the option it names through an alias, a `--no-X` negation or an unambiguous
// abbreviation. known=false: no release accepts it (SP1014 reports it, see options/check.hpp);
// table=false: no table for this engine.
struct TableName {
  bool table = true;
  bool known = false;
  std::string option;
  bool negative = false;
  bool abbreviation = false;
};
TableName table_name(std::string_view engine, const std::string& flag);

// Whether a long option (canonical name, no dashes) takes no value, a list or one value, by the tables.
enum class Arity { unknown, flag, list, value };
Arity table_arity(std::string_view engine, std::string_view canonical);

// Writes options.given: every option as written, in order, a repetition with the same value once
// (flag with its dashes, or the config
// key; source command|config; value, JSON text parsed), located at options.given.<i> and each key
// of a mapping value at options.given.<i>.value.<key>. The per-release check reads it.
void record_given_options(const std::vector<RawOption>& options, PlanWriter& w);

// Flags that take no value on a command line (true = this engine's spelling is a flag).
bool vllm_flag_option(std::string_view canonical);
bool vllm_list_option(std::string_view canonical);  // nargs='+'
bool sglang_flag_option(std::string_view canonical);
bool sglang_list_option(std::string_view canonical);

// The plan an engine builder starts from: CTX's form, path, notes and unknown options (moved).
ParsedServing start_plan(ReadContext& ctx);

// Sets input.*, env.* and the defaults every plan carries.
void write_common_facts(PlanWriter& w, const ReadContext& ctx, std::string_view engine);

}  // namespace specprobe::serving
