// Checks the plan's options against the engine's own option set for its version (options/tables.hpp):
// a derive step (facts/derive.cpp, writer facts.options) because the engine version is known only
// after the readers ran (lib.<engine>.version -> engine.version).
//
// Reads options.given (every option as written, from the serving readers), engine.name,
// engine.version and the plan facts the range checks read (serve.tp, serve.gpu_memory_utilization,
// spec.num_steps, ...). Writes:
//   options.table      which table a check used ("vLLM 0.20.0", or every release when the version is unknown)
//   options.unknown    [{flag, at, message}] flags and JSON config keys the engine does not know (typos,
//                      an ambiguous abbreviation, extra dashes, an option of other releases only)
//   options.invalid    [{flag, at, message}] values the engine refuses: not of the option's type, not one
//                      of its choices / enum members, out of range (sizes >= 1, fractions in (0, 1])
//   options.notes      [{flag, at, message}] accepted only by some of the releases checked (the version is
//                      unknown or between releases), abbreviations, deprecated options
//   options.<list>_count, options.<list>_text (the messages joined), options.<list>_at (the fact whose
//   place in the user's file anchors the first: options.given.<i>[.value.<key>] or serve.tp ...)
//
// Why findings and not input errors: a typo or an unknown value is a configuration the engine
// refuses at startup (or, for a JSON key in vLLM 0.9.1-0.15.1, silently ignores), which is exactly
// what a rule reports; exit 2 stays for files specprobe cannot read.
#pragma once
#include <span>

#include "common/json.hpp"

namespace specprobe {

void derive_option_checks(Json& facts);

// Every fact the option checks read, besides the engine's option table: their answer is
// remembered per thread by these facts' values (the what-if sweep derives every cell again).
std::span<const char* const> option_check_reads();

}  // namespace specprobe
