// Hardening regressions (issue 8): numbers that overflow the conversions (std::stod in
// human-readable sizes, int ranges of `probe --next-n`), hostile probe-child protocol lines, and
// --rules-dir trees with unreadable entries or huge files. Each must end in a clear exit 2
// naming the option or the path (README's exit-code table: unreadable or invalid input), never
// an internal error (exit 3), a signal, a timeout or unbounded memory. Also runs the soak
// harness's self-test (bench/soak_probe.py with a fake specprobe, no GPU).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../e2e/run_binary.hpp"
#include "bounded_run.hpp"
#include "probes/runner.hpp"

namespace fs = std::filesystem;
using specprobe::hostile::BoundedResult;
using specprobe::hostile::run_bounded;

using specprobe::test::write_bytes;

namespace {

struct RestoringTempTree {
  fs::path path = specprobe::test::temp_dir();
  ~RestoringTempTree() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec))
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
};

// An input error: exit 2, naming NAMED, within bounds.
void expect_input_error(const BoundedResult& r, const std::string& what, const std::string& named) {
  INFO(what << ": exit " << r.exit_code << " signal " << r.signal << (r.timed_out ? " TIMED OUT in " + r.stalled : "")
            << " rss " << r.max_rss_kib << " KiB (inherited " << r.inherited_rss_kib
            << ")\nstderr: " << r.err.substr(0, 1500) << "\nstdout: " << r.out.substr(0, 500));
  CHECK_FALSE(r.timed_out);
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 2);
  CHECK(r.rss_below(768L * 1024 * (specprobe::hostile::sanitized_build() ? 2 : 1)));
  CHECK(r.err.find("internal error") == std::string::npos);
  CHECK(r.err.find("runtime error:") == std::string::npos);  // UBSan
  CHECK((r.out + r.err).find(named) != std::string::npos);
}

const std::string kHuge = "1" + std::string(400, '0');  // overflows a double: 1e400

const std::string kRule =
    "id: SP1901\nslug: s\ntitle: t\nseverity: error\nstage: config\ncertainty: deterministic\nwhen: false\nmessage: "
    "m\nremediation: r\n";

}  // namespace

TEST_CASE("hostile: numbers past a double in sizes and --speculative-config are input errors", "[hostile][numbers]") {
  // human_readable_int (1k, 2M, ...) read its digits with std::stod, which throws out_of_range
  // past 1.8e308: the exception reached main as an internal error (exit 3).
  struct Case {
    std::vector<std::string> args;
    std::string named;
  };
  const std::vector<Case> cases = {
      {{"--max-model-len", kHuge + "k"}, "max-model-len"},
      {{"--max-model-len", kHuge + "K"}, "max-model-len"},
      {{"--speculative-config",
        R"({"method":"ngram","num_speculative_tokens":2,"prompt_lookup_max":")" + kHuge + R"(k"})"},
       "prompt_lookup_max"},
      {{"--speculative-config", R"({"model":"d","num_speculative_tokens":2,"max_model_len":")" + kHuge + R"(M"})"},
       "max_model_len"},
      {{"--speculative-config.max_model_len", kHuge + "G", "--speculative-config.model", "d"}, "max_model_len"},
      {{"--speculative-config", R"({"method":"mtp","num_speculative_tokens":)" + kHuge + "}"}, "speculative-config"},
      {{"--speculative-config", R"({"method":"mtp","num_speculative_tokens":")" + kHuge + R"("})"},
       "num_speculative_tokens"},
      {{"--speculative-config", R"({"method":"mtp","num_speculative_tokens":1e400})"}, "speculative-config"},
      {{"--speculative-config", R"({"method":"mtp","num_speculative_tokens":99999999999999999999})"},
       "num_speculative_tokens"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"check", "--gpu", "H100", "--", "vllm", "serve", "m"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    expect_input_error(run_bounded(args, {}, 30), c.args.front() + " " + c.args[1].substr(0, 60) + "...", c.named);
  }
  // The same values in a config file (YAML plain scalars, a float with a dot, and as strings).
  RestoringTempTree t;
  const fs::path f = t.path / "serve.yaml";
  for (const std::string& line :
       std::vector<std::string>{"max-model-len: " + kHuge + "k", "max-model-len: \"" + kHuge + "M\"",
                                "speculative-config: {method: mtp, num_speculative_tokens: " + kHuge + ".0}",
                                "speculative-config: {method: mtp, num_speculative_tokens: 1.0e+400}"}) {
    write_bytes(f, "model: m\n" + line + "\n");
    expect_input_error(run_bounded({"check", f.string(), "--gpu", "H100"}, {}, 30), line.substr(0, 60), "serve.yaml");
  }
}

TEST_CASE("hostile: probe --next-n ranges at the ends of int are usage errors, not overflow", "[hostile][numbers]") {
  // INT_MIN-INT_MAX overflowed hi - lo; INT_MAX-INT_MAX looped forever (++v past INT_MAX). The
  // probe kind is unknown, so nothing runs once the list is read.
  for (const std::string n : {"-2147483648-2147483647", "2147483646-2147483647x", "99999999999", "1-99999999999",
                              "-99999999999-1", ",", "1-", "8-1"}) {
    const auto r = run_bounded({"probe", "--probe", "mqa_logits", "--next-n", n, "--in-process"}, {}, 20);
    expect_input_error(r, "--next-n " + n, "cannot read");
  }
  const auto r = run_bounded({"probe", "--probe", "nope", "--next-n", "2147483647-2147483647"}, {}, 20);
  expect_input_error(r, "--next-n INT_MAX-INT_MAX", "unknown probe 'nope'");
}

TEST_CASE("hostile: probe children that print bad begin indexes or results", "[hostile][runner]") {
  using namespace specprobe::probes;
  auto fake = [](const std::string& script) {
    RunnerOptions o;
    o.child_command = {"/bin/sh", "-c", script, "sh"};
    o.timeout_s = 5;
    return o;
  };
  const std::vector<specprobe::Json> one = {{{"probe", "a"}}};
  // An index past the specs was used to index them (out of bounds) once the child died; one past
  // a long threw std::out_of_range out of run_probes_isolated.
  for (const std::string line :
       {"@@specprobe begin 5", "@@specprobe begin 99999999999999999999999", "@@specprobe begin -3",
        "@@specprobe begin x", "@@specprobe begin ", "@@specprobe begin 0x1"}) {
    INFO(line);
    std::vector<specprobe::Json> rs;
    REQUIRE_NOTHROW(rs = run_probes_isolated(one, fake("echo '" + line + "'; exit 9")));
    REQUIRE(rs.size() == 1);
    CHECK(rs[0]["status"] == "error");
    CHECK(rs[0]["reason"].get<std::string>().find("status 9") != std::string::npos);
  }
  // A result that is JSON but not an object would make every reader of "status" throw.
  for (const std::string result : {"5", "[1,2]", "\"pass\"", "null"}) {
    INFO(result);
    std::vector<specprobe::Json> rs;
    REQUIRE_NOTHROW(
        rs = run_probes_isolated(one, fake("echo '@@specprobe begin 0'; echo '@@specprobe result " + result + "'")));
    REQUIRE(rs.size() == 1);
    REQUIRE(rs[0].is_object());
    CHECK(rs[0]["status"] == "error");
  }
}

TEST_CASE("hostile: --rules-dir with unreadable entries or huge files is exit 2 naming the path", "[hostile][rules]") {
  RestoringTempTree t;
  fs::permissions(t.path, fs::perms::all, fs::perm_options::replace);  // reachable after dropping to nobody
  auto rules_list = [](const fs::path& dir, bool as_nobody = false) {
    return run_bounded({"rules", "list", "--rules-dir", dir.string()}, {}, 30, 4096, as_nobody);
  };
  // When tests run as root, the binary runs as nobody for the permission cases; a build tree
  // nobody cannot reach makes those cases a warning, not a failure.
  auto runnable_as_nobody = [&](const BoundedResult& r) {
    if ((r.exit_code == 127 || r.exit_code == 125) && r.err.empty()) {
      WARN("cannot run " << SPECPROBE_BINARY << " as nobody (exit " << r.exit_code << "): permission cases skipped");
      return false;
    }
    return true;
  };
  {
    const fs::path root = t.path / "good" / "rules";
    write_bytes(root / "1xxx" / "SP1901-s.yaml", kRule);
    const auto r = rules_list(root, true);
    if (runnable_as_nobody(r)) {
      INFO(r.err);
      CHECK(r.exit_code == 0);
      CHECK(r.out.find("SP1901") != std::string::npos);
    }
    // an unreadable band directory
    const fs::path locked = root / "2xxx";
    fs::create_directories(locked);
    write_bytes(locked / "SP2901-s.yaml", kRule);
    fs::permissions(locked, fs::perms::none, fs::perm_options::replace);
    const auto r2 = rules_list(root, true);
    if (runnable_as_nobody(r2)) expect_input_error(r2, "unreadable subdirectory", locked.string());
    fs::permissions(locked, fs::perms::owner_all, fs::perm_options::replace);
    fs::remove_all(locked);
    // an unreadable rule file (read as empty before: a misleading "missing field" error)
    const fs::path file = root / "1xxx" / "SP1902-s.yaml";
    write_bytes(file, kRule);
    fs::permissions(file, fs::perms::none, fs::perm_options::replace);
    const auto r3 = rules_list(root, true);
    if (runnable_as_nobody(r3)) {
      expect_input_error(r3, "unreadable rule file", file.string());
      CHECK(r3.err.find("cannot open") != std::string::npos);
    }
    fs::remove(file);
  }
  {
    // a 4 GiB rule file (sparse): refused after 1 MiB, not read into memory
    const fs::path root = t.path / "big" / "rules";
    const fs::path file = root / "1xxx" / "SP1901-s.yaml";
    write_bytes(file, kRule);
    fs::resize_file(file, 4ull << 30);
    const auto r = rules_list(root);
    expect_input_error(r, "4 GiB rule file", file.string());
    CHECK(r.err.find("larger than 1048576 bytes") != std::string::npos);
    CHECK(r.rss_below(256L * 1024));  // a 4 GiB file read into memory would be far above
    // check and matrix load the same directory the same way
    const auto c =
        run_bounded({"check", "--gpu", "H100", "--rules-dir", root.string(), "--", "vllm", "serve", "m"}, {}, 30);
    expect_input_error(c, "check --rules-dir with a 4 GiB rule file", file.string());
  }
  {
    // FIFOs, sockets-to-be and dangling links named *.yaml are not rule files: skipped
    const fs::path root = t.path / "special" / "rules";
    write_bytes(root / "1xxx" / "SP1901-s.yaml", kRule);
    REQUIRE(::mkfifo((root / "1xxx" / "SP1902-fifo.yaml").c_str(), 0600) == 0);
    fs::create_symlink("/nonexistent", root / "1xxx" / "SP1903-dangling.yaml");
    fs::create_symlink("/dev/zero", root / "1xxx" / "SP1904-zero.yaml");
    fs::create_directory_symlink("..", root / "1xxx" / "loop");
    const auto r = rules_list(root);
    INFO(r.err << (r.timed_out ? "\nTIMED OUT in " + r.stalled : ""));
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("SP1901") != std::string::npos);
  }
}

TEST_CASE("soak harness: self-test with a fake specprobe", "[hostile][soak]") {
  if (std::system("command -v python3 > /dev/null 2>&1") != 0) {
    WARN("python3 not found: bench/soak_probe.py self-test skipped");
    return;
  }
  const std::string log = specprobe::test::temp_dir() + "/soak_selftest.log";
  const std::string cmd = "N=20 bash " +
                          specprobe::test::shell_quote(std::string(SPECPROBE_SOURCE_DIR) + "/bench/soak_probe.sh") +
                          " --self-test > " + specprobe::test::shell_quote(log) + " 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO(text);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(text.find("self-test: PASS") != std::string::npos);
}
