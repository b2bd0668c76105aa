// Command-line front end: CLI11 parsing, dispatch, exit codes (see cli.hpp).
#include "cli/cli.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "build_info.hpp"
#include "cli/check.hpp"
#include "cli/engines.hpp"
#include "cli/exec.hpp"
#include "cli/info_commands.hpp"
#include "cli/matrix.hpp"
#include "cli/probe.hpp"
#include "common/output_file.hpp"
#include "common/suggest.hpp"

namespace specprobe {

namespace {

// Each command's exit codes, in its --help.
constexpr const char* kTopExitCodes =
    "Exit codes: 0 success; 1 findings (check, exec, matrix and probe: see their --help); 2 usage or input error; "
    "3 environment or internal error.";
constexpr const char* kCheckExitCodes =
    "Exit codes: 0 no finding at or above --fail-on; 1 findings; 2 usage or input error; "
    "3 environment or internal error; 4 verdict unknown (the plan could not be decided; --unknown-ok); "
    "5 the report or other output could not be written in full (full disk, unwritable directory; the "
    "message names where).";
constexpr const char* kExecExitCodes =
    "Exit codes: when the check passes, COMMAND's own (specprobe execs it); else 1 findings at or above --fail-on; "
    "2 usage or input error; 3 environment or internal error; 4 verdict unknown (not started; --unknown-ok); "
    "126 COMMAND cannot be run; 127 COMMAND not found.";
constexpr const char* kMatrixExitCodes =
    "Exit codes: 0 the plan is supported on every GPU; 1 not-supported on at least one (the matrix is still written); "
    "2 usage or input error; 3 environment or internal error; 5 an output could not be written.";
constexpr const char* kGpuExitCodes = "Exit codes: 0 at least one GPU answered; 3 no CUDA driver or no GPU.";
constexpr const char* kProbeExitCodes =
    "Exit codes: 0 every probe passed or skipped; 1 a probe failed or crashed; 2 bad arguments; "
    "3 a probe could not determine (no GPU or driver, a timeout in host work).";
constexpr const char* kInfoExitCodes =
    "Exit codes: 0 printed; 2 usage error, unknown id or an unusable --rules-dir/--advisories-dir; 3 the built-in "
    "catalog did not load.";

// `exec`'s usage line names the command after `--` (taken off the argument list before CLI11
// sees it).
class ExecFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string u = CLI::Formatter::make_usage(app, std::move(name));
    if (!u.empty() && u.back() == '\n') u.pop_back();
    return u + " -- COMMAND [ARG...]\n";
  }
};

// The subcommand ARGS name (the deepest one whose name appears in order), for suggestions.
const CLI::App* context_of(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* cur = &app;
  for (size_t i = 1; i < args.size(); ++i)
    for (const CLI::App* sub : cur->get_subcommands({}))
      if (!sub->get_name().empty() && sub->get_name() == args[i]) {
        cur = sub;
        break;
      }
  return cur;
}

// "did you mean" lines for the words CLI11 did not expect: an option of the command in use, or a
// subcommand's name. Each line is the whole error message for its mistake (CLI11's own is then not
// printed: one message per mistake).
std::vector<std::string> suggest_for_parse_error(const CLI::App& app, const std::vector<std::string>& args,
                                                 const CLI::ParseError& e) {
  const CLI::App* cmd = context_of(app, args);
  std::vector<std::string> options, subcommands;
  for (const CLI::Option* opt : cmd->get_options()) {
    for (const auto& n : opt->get_lnames()) options.push_back("--" + n);
    for (const auto& n : opt->get_snames()) options.push_back("-" + n);
  }
  for (const CLI::App* sub : cmd->get_subcommands({}))
    if (!sub->get_name().empty() && sub->get_group() != "") subcommands.push_back(sub->get_name());
  std::vector<std::string> words;
  const std::string what = e.what();
  if (const size_t colon = what.find("not expected: "); colon != std::string::npos) {
    std::string rest = what.substr(colon + 14), w;
    for (char c : rest + " ")
      if (c == ' ') {
        if (!w.empty()) words.push_back(w);
        w.clear();
      } else {
        w += c;
      }
  } else if (!subcommands.empty()) {
    // "A subcommand is required": the first word after the command's own name that is not an option.
    size_t i = 1;  // after the program's name; for a subcommand, after its own name
    if (cmd != &app) {
      while (i < args.size() && args[i] != cmd->get_name()) ++i;
      ++i;
    }
    for (; i < args.size(); ++i)
      if (!args[i].empty() && args[i][0] != '-') {
        words.push_back(args[i]);
        break;
      }
  }
  const std::string where = cmd == &app ? std::string("specprobe") : "specprobe " + cmd->get_name();
  std::vector<std::string> lines;
  for (std::string w : words) {
    const bool option = w.rfind("-", 0) == 0;
    if (option)
      if (const size_t eq = w.find('='); eq != std::string::npos) w.resize(eq);
    const std::string near = closest_match(w, option ? options : subcommands);
    if (!near.empty())
      lines.push_back(fmt::format("{}: error: {} '{}'; did you mean {}? (see {} --help)", where,
                                  option ? "unknown option" : "unknown command", w, near, where));
  }
  return lines;
}

int run_command(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  // `specprobe help [COMMAND...]` is `specprobe [COMMAND...] --help`.
  if (args.size() >= 2 && args[1] == "help") {
    args.erase(args.begin() + 1);
    args.insert(std::find(args.begin(), args.end(), std::string("--")), "--help");
  }
  // `check -- vllm serve ...`: everything after the first `--` is the serving command line.
  std::vector<std::string> after_dashes;
  for (size_t i = 1; i < args.size(); ++i)
    if (args[i] == "--") {
      after_dashes.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      args.resize(i);
      break;
    }

  CLI::App app{
      "specprobe: will this speculative-decoding serving configuration work on this GPU, with this "
      "checkpoint and these libraries?"};
  app.footer(kTopExitCodes);
  app.set_version_flag("--version,-V", fmt::format("specprobe {} ({})", kToolVersion, kGitSha));
  app.require_subcommand(1);

  CheckOptions check;
  CLI::App* check_cmd = app.add_subcommand("check", "check a serving configuration (file, or `-- vllm serve ...`)");
  add_check_options(*check_cmd, check);
  check_cmd->footer(kCheckExitCodes);

  std::string gpu_format = "text";
  CLI::App* gpu_cmd = app.add_subcommand("gpu", "show what the CUDA Driver API reports for each visible GPU");
  gpu_cmd->add_option("--format", gpu_format, "text or json")->check(CLI::IsMember({"text", "json"}));
  gpu_cmd->footer(kGpuExitCodes);

  std::string rules_format = "text", rules_dir;
  CLI::App* rules_cmd = app.add_subcommand("rules", "the rule catalog");
  rules_cmd->require_subcommand(1);
  CLI::App* rules_list = rules_cmd->add_subcommand("list", "list every rule, grouped by band");
  rules_list->add_option("--format", rules_format, "text or json")->check(CLI::IsMember({"text", "json"}));
  rules_list->add_option("--rules-dir", rules_dir, "load rules from DIR instead of the built-in catalog");

  std::string facts_format = "text";
  CLI::App* facts_cmd = app.add_subcommand(
      "facts", "the facts rules and advisories read: name, type, the module that writes it, meaning");
  facts_cmd->add_option("--format", facts_format, "text, json or markdown (docs/facts.md)")
      ->check(CLI::IsMember({"text", "json", "markdown"}));

  AdvisoriesOptions adv;
  CLI::App* adv_cmd = app.add_subcommand(
      "advisories", "the known-issues database: public failure reports with their versions, filtered");
  adv_cmd->add_option("--engine", adv.engine, "only advisories for vllm or sglang deployments")
      ->check(CLI::IsMember({"vllm", "sglang"}));
  adv_cmd
      ->add_option("--lib", adv.libs,
                   "NAME=VERSION (repeatable): only advisories that affect these versions, e.g. --lib vllm=0.25.1")
      ->check(lib_name_validator());
  adv_cmd->add_option("--gpu", adv.gpu,
                      "only advisories for this GPU's architecture (or any GPU): H100, B200, GB10, MI300X, sm_90 ...");
  adv_cmd->add_option("--format", adv.format, "text or json")->check(CLI::IsMember({"text", "json"}));
  adv_cmd->add_option("--advisories-dir", adv.advisories_dir,
                      "load advisories from DIR instead of the built-in database (development)");

  std::string explain_id;
  CLI::App* explain_cmd = app.add_subcommand("explain", "print a rule's documentation (offline)");
  explain_cmd->add_option("id", explain_id, "rule or advisory id, e.g. SP3001 or SPA-VLLM-37754")->required();
  explain_cmd->add_option("--rules-dir", rules_dir, "load rules from DIR instead of the built-in catalog");

  ProbeOptions probe_opts;
  CLI::App* probe_cmd = add_probe_command(app, probe_opts);
  ProbeChildOptions probe_child_opts;
  CLI::App* probe_child_cmd = add_probe_child_command(app, probe_child_opts);

  EnginesOptions engines_opts;
  CLI::App* engines_cmd = add_engines_command(app, engines_opts);

  ExecOptions exec_opts;
  CLI::App* exec_cmd = add_exec_command(app, exec_opts);
  exec_cmd->formatter(std::make_shared<ExecFormatter>());
  exec_cmd->footer(kExecExitCodes);
  MatrixOptions matrix_opts;
  CLI::App* matrix_cmd = add_matrix_command(app, matrix_opts);
  matrix_cmd->footer(kMatrixExitCodes);
  probe_cmd->footer(kProbeExitCodes);
  for (CLI::App* info : {rules_cmd, rules_list, facts_cmd, adv_cmd, explain_cmd}) info->footer(kInfoExitCodes);
  engines_cmd->footer(
      "Exit codes: 0 done; 2 usage or input error (no such environment); 3 the venv or the install failed (its log is "
      "named)");

  std::vector<const char*> cargs;
  for (const auto& a : args) cargs.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const CLI::CallForVersion& e) {
    app.exit(e);
    return 0;
  } catch (const CLI::ParseError& e) {
    const std::vector<std::string> suggestions = suggest_for_parse_error(app, args, e);
    if (suggestions.empty()) app.exit(e);
    for (const auto& line : suggestions) std::fprintf(stderr, "%s\n", line.c_str());
    return 2;  // CLI11's own codes (100+) map to usage error
  }
  if (!after_dashes.empty() && !check_cmd->parsed() && !exec_cmd->parsed()) {
    std::fprintf(stderr, "specprobe: error: `--` is only accepted by check and exec\n");
    return 2;
  }

  try {
    if (check_cmd->parsed()) {
      check.request.argv = after_dashes;
      check.request.invocation.assign(argv, argv + argc);
      if (!check.files.empty() && !check.request.argv.empty()) {
        std::fprintf(stderr, "specprobe: error: give either FILE or a command line after `--`, not both\n");
        return 2;
      }
      if (check.files.empty() && check.request.argv.empty()) {
        std::fprintf(stderr, "specprobe: error: check needs a FILE, or a command line after `--`\n");
        return 2;
      }
      return run_check_command(check);
    }
    if (exec_cmd->parsed()) {
      exec_opts.check.request.argv = after_dashes;
      exec_opts.check.request.invocation.assign(argv, argv + argc);
      return run_exec_command(exec_opts);
    }
    if (matrix_cmd->parsed()) {
      matrix_opts.check.request.invocation.assign(argv, argv + argc);
      return run_matrix_command(matrix_opts);
    }
    if (gpu_cmd->parsed()) return run_gpu_command(gpu_format);
    if (probe_cmd->parsed()) return run_probe_command(probe_opts);
    if (probe_child_cmd->parsed()) return run_probe_child_command(probe_child_opts);
    if (rules_list->parsed()) return run_rules_list_command(rules_format, rules_dir);
    if (explain_cmd->parsed()) return run_explain_command(explain_id, rules_dir);
    if (facts_cmd->parsed()) return run_facts_command(facts_format);
    if (adv_cmd->parsed()) return run_advisories_command(adv);
    if (engines_cmd->parsed()) return run_engines_command(*engines_cmd, engines_opts);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "specprobe: internal error: %s\n", e.what());
    return 3;
  }
  return 2;
}

}  // namespace

int run_cli(int argc, char** argv) { return finish_stdout(run_command(argc, argv)); }

}  // namespace specprobe
