// The progress line: what specprobe is doing (the pipeline's phases, each stack probe's phase,
// such as a JIT build) and for how long. On a terminal it is one line on stderr, redrawn in
// place, shown only once a phase has taken a second (quick runs print nothing) and cleared at
// the end. Elsewhere (CI logs, pipes) it is silent unless asked for with --progress; then each
// phase is one plain line with the time since the start.
#pragma once
#include <cstdio>
#include <functional>
#include <string>

namespace specprobe {

using ProgressSink = std::function<void(const std::string& line)>;  // "" clears the line

struct ProgressOptions {
  bool quiet = false;   // --quiet: never
  bool forced = false;  // --progress: also when stderr is not a terminal
  std::FILE* out = stderr;
  bool terminal = false;  // whether OUT is a terminal (progress_sink fills it in from isatty)
  double delay_s = 1.0;   // a phase is shown on a terminal once it has lasted this long
};

// The sink for OPTIONS, or an empty function when nothing is to be shown.
ProgressSink progress_sink(ProgressOptions options);
// ProgressOptions from the flags, with `terminal` read from stderr.
ProgressOptions progress_options(bool quiet, bool forced);

}  // namespace specprobe
