// Command-line front end. run_cli parses argv with CLI11, dispatches to one subcommand
// (check, gpu, rules, explain, probe, matrix, exec) and returns the process exit code:
// 0 no finding at or above --fail-on, 1 findings, 2 usage or input error, 3 environment or
// internal error, 4 the report (or other output) could not be written: every write is checked,
// stdout flushed and closed before exit. Only this layer decides exit codes.
#pragma once

namespace specprobe {

int run_cli(int argc, char** argv);

}  // namespace specprobe
