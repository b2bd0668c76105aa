// Command-line front end: CLI11 parsing, dispatch, exit codes (see cli.hpp).
#include "cli/cli.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "build_info.hpp"
#include "cli/check.hpp"
#include "cli/exec.hpp"
#include "cli/info_commands.hpp"
#include "cli/matrix.hpp"
#include "cli/probe.hpp"
#include "common/output_file.hpp"

namespace specprobe {

namespace {

constexpr const char* kExitCodes =
    "Exit codes: 0 no finding at or above --fail-on; 1 findings; 2 usage or input error; "
    "3 environment or internal error; 4 verdict unknown (the plan could not be decided; --unknown-ok); "
    "5 the report or other output could not be written in full (full disk, unwritable directory; the "
    "message names where).";

int run_command(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  // `check -- vllm serve ...`: everything after the first `--` is the serving command line.
  std::vector<std::string> after_dashes;
  for (size_t i = 1; i < args.size(); ++i)
    if (args[i] == "--") {
      after_dashes.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      args.resize(i);
      break;
    }

  CLI::App app{"specprobe: will this speculative-decoding serving configuration work on this GPU, with this "
               "checkpoint and these libraries?"};
  app.footer(kExitCodes);
  app.set_version_flag("--version", fmt::format("specprobe {} ({})", kToolVersion, kGitSha));
  app.require_subcommand(1);

  CheckOptions check;
  CLI::App* check_cmd = app.add_subcommand("check", "check a serving configuration (file, or `-- vllm serve ...`)");
  add_check_options(*check_cmd, check);

  std::string gpu_format = "text";
  CLI::App* gpu_cmd = app.add_subcommand("gpu", "show what the CUDA Driver API reports for each visible GPU");
  gpu_cmd->add_option("--format", gpu_format, "text or json")->check(CLI::IsMember({"text", "json"}));

  std::string rules_format = "text", rules_dir;
  CLI::App* rules_cmd = app.add_subcommand("rules", "the rule catalog");
  rules_cmd->require_subcommand(1);
  CLI::App* rules_list = rules_cmd->add_subcommand("list", "list every rule, grouped by band");
  rules_list->add_option("--format", rules_format, "text or json")->check(CLI::IsMember({"text", "json"}));
  rules_list->add_option("--rules-dir", rules_dir, "load rules from DIR instead of the built-in catalog");

  std::string facts_format = "text";
  CLI::App* facts_cmd = app.add_subcommand("facts", "the facts rules and advisories read: name, type, the module that writes it, meaning");
  facts_cmd->add_option("--format", facts_format, "text, json or markdown (docs/facts.md)")
      ->check(CLI::IsMember({"text", "json", "markdown"}));

  AdvisoriesOptions adv;
  CLI::App* adv_cmd = app.add_subcommand("advisories", "the known-issues database: public failure reports with their versions, filtered");
  adv_cmd->add_option("--engine", adv.engine, "only advisories for vllm or sglang deployments")->check(CLI::IsMember({"vllm", "sglang"}));
  adv_cmd->add_option("--lib", adv.libs, "NAME=VERSION (repeatable): only advisories that affect these versions, e.g. --lib vllm=0.25.1");
  adv_cmd->add_option("--gpu", adv.gpu, "only advisories for this GPU's architecture (or any GPU): H100, B200, GB10, MI300X, sm_90 ...");
  adv_cmd->add_option("--format", adv.format, "text or json")->check(CLI::IsMember({"text", "json"}));
  adv_cmd->add_option("--advisories-dir", adv.advisories_dir, "load advisories from DIR instead of the built-in database (development)");

  std::string explain_id;
  CLI::App* explain_cmd = app.add_subcommand("explain", "print a rule's documentation (offline)");
  explain_cmd->add_option("id", explain_id, "rule or advisory id, e.g. SP3001 or SPA-VLLM-37754")->required();
  explain_cmd->add_option("--rules-dir", rules_dir, "load rules from DIR instead of the built-in catalog");

  ProbeOptions probe_opts;
  CLI::App* probe_cmd = add_probe_command(app, probe_opts);
  ProbeChildOptions probe_child_opts;
  CLI::App* probe_child_cmd = add_probe_child_command(app, probe_child_opts);

  ExecOptions exec_opts;
  CLI::App* exec_cmd = add_exec_command(app, exec_opts);
  MatrixOptions matrix_opts;
  CLI::App* matrix_cmd = add_matrix_command(app, matrix_opts);

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
    app.exit(e);
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
      if (!check.request.file.empty() && !check.request.argv.empty()) {
        std::fprintf(stderr, "specprobe: error: give either FILE or a command line after `--`, not both\n");
        return 2;
      }
      if (check.request.file.empty() && check.request.argv.empty()) {
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
  } catch (const std::exception& e) {
    std::fprintf(stderr, "specprobe: internal error: %s\n", e.what());
    return 3;
  }
  return 2;
}

}  // namespace

int run_cli(int argc, char** argv) { return finish_stdout(run_command(argc, argv)); }

}  // namespace specprobe
