// `specprobe exec` (see exec.hpp).
#include "cli/exec.hpp"

#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <CLI/CLI.hpp>

namespace specprobe {
namespace {

std::string shell_words(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    const bool plain =
        !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") ==
                          std::string::npos;
    std::string w = plain ? a : "'";
    if (!plain) {
      for (char c : a) w += c == '\'' ? std::string("'\\''") : std::string(1, c);
      w += "'";
    }
    out += (out.empty() ? "" : " ") + w;
  }
  return out;
}

}  // namespace

CLI::App* add_exec_command(CLI::App& app, ExecOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "exec", "check a serving command line, then run it unchanged when it passes (`exec -- vllm serve ...`)");
  add_check_options(*cmd, o.check);
  cmd->remove_option(cmd->get_option("file"));
  cmd->add_flag("--dry-run", o.dry_run, "check, then print the command that would run instead of running it");
  return cmd;
}

int run_exec_command(const ExecOptions& o) {
  const std::vector<std::string>& argv = o.check.request.argv;
  if (argv.empty()) {
    std::fprintf(
        stderr,
        "specprobe: error: exec needs the serving command after `--` (specprobe exec -- vllm serve MODEL ...)\n");
    return 2;
  }
  auto services = cli_services(o.check);
  if (!services) return exit_code(services.error().kind);
  auto file_request = request_for_file(o.check, "");
  if (!file_request) {
    std::fprintf(stderr, "specprobe: %s\n", file_request.error().str().c_str());
    return exit_code(file_request.error().kind);
  }
  auto report = run_check(file_request->request, *services);
  services->progress = nullptr;  // the progress line is cleared before the report
  if (!report) {
    std::fprintf(stderr, "specprobe: %s\n", report.error().str().c_str());
    std::fprintf(stderr, "specprobe: refusing to start %s: the command line could not be checked\n", argv[0].c_str());
    return exit_code(report.error().kind);
  }
  for (const auto& n : file_request->notes) report->notes.push_back({"info", n, {}});
  report->exit_code = o.check.exit_zero ? 0 : exit_code_for(*report, file_request->fail_on, file_request->unknown_ok);
  if (const int rc = emit_check_report(o.check, *report, stderr); rc != 0) return rc;
  if (report->exit_code == kExitUnknown) {
    std::fprintf(stderr,
                 "specprobe: refusing to start %s: the plan could not be decided (see \"could not decide without\" "
                 "above; supply those facts, or pass --unknown-ok to start it anyway)\n",
                 argv[0].c_str());
    return report->exit_code;
  }
  if (report->exit_code != 0) {
    std::fprintf(
        stderr,
        "specprobe: refusing to start %s: findings at or above --fail-on %s (fix them, or suppress them with a "
        "reason in .specprobe.yaml)\n",
        argv[0].c_str(), file_request->fail_on.c_str());
    return report->exit_code;
  }
  if (o.dry_run) {
    std::printf("%s\n", shell_words(argv).c_str());
    return 0;
  }
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  execvp(cargv[0], cargv.data());
  const int err = errno;
  std::fprintf(stderr, "specprobe: error: cannot run %s: %s\n", argv[0].c_str(), std::strerror(err));
  return err == ENOENT ? 127 : 126;
}

}  // namespace specprobe
