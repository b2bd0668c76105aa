// Property test of the whole pipeline (issue 39 item 1): mutations of every serving config in
// the fixture corpus (docs/examples/seeds, tests/data/serving, the real-deploy corpus
// tests/corpus/deploy/files) run through run_check in-process, with the real services, probes
// and stack probes off, a declared GPU and a checkpoint from docs/examples/checkpoints or
// tests/data/checkpoint (or none). Mutations: mutations.hpp (keys deleted, values replaced by
// every JSON type and edge value, options renamed, speculative-config fields likewise).
//
// Properties: run_check never throws and never returns an internal or environment error; every
// error is a usage or input error with a message that names a file (its location); no error is
// an exception swallowed by a reader's catch-all (nlohmann's or the standard library's text in
// the message); a successful report renders as text, JSON, SARIF, JUnit and GitHub output
// without throwing. The unmutated files (all but the malformed ones) check without error.
//
// How many: the mutations of the whole corpus are listed (about 90-100k), shuffled with a fixed
// seed and the first SPECPROBE_PROPERTY_CONFIGS run (default 20,000; 1,500 in a sanitizer
// build, where a run costs about 15x). Each run's GPU, checkpoint and sweep come from the same
// seeded generator, so a run is reproducible from its number. Environment:
//   SPECPROBE_PROPERTY_CONFIGS=N|all   how many mutated configs (all: the full set)
//   SPECPROBE_PROPERTY_SEED=S          another sample (default 20261125)
//   SPECPROBE_PROPERTY_KEEP=DIR        write each failing config there
// The full set: SPECPROBE_PROPERTY_CONFIGS=all build/tests/specprobe_tests "[property]".
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "check_properties.hpp"
#include "e2e/run_binary.hpp"
#include "mutations.hpp"
#include "pipeline/check.hpp"

namespace fs = std::filesystem;
using namespace specprobe;
namespace mut = specprobe::testing::mutate;
using specprobe::test::file_text;
using specprobe::test::write_bytes;

namespace {

bool sanitized() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

const fs::path kSourceRoot = SPECPROBE_SOURCE_DIR;

// The fixture corpus, in a stable order.
std::vector<mut::Source> corpus() {
  std::vector<fs::path> files;
  auto add_dir = [&](const fs::path& d, bool recursive) {
    std::error_code ec;
    if (recursive) {
      for (auto it = fs::recursive_directory_iterator(d, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec))
        if (it->is_regular_file()) files.push_back(it->path());
    } else {
      for (const auto& e : fs::directory_iterator(d, ec))
        if (e.is_regular_file()) files.push_back(e.path());
    }
  };
  add_dir(kSourceRoot / "docs/examples/seeds", false);
  add_dir(kSourceRoot / "tests/data/serving", true);  // bad/: malformed on purpose
  add_dir(kSourceRoot / "tests/corpus/deploy/files", true);
  std::sort(files.begin(), files.end());
  std::vector<mut::Source> out;
  for (const fs::path& f : files) {
    mut::Source s;
    s.path = f.string();
    s.rel = fs::relative(f, kSourceRoot).string();
    s.text = file_text(f);
    // Unmutated, the fixtures check without error. The deploy corpus holds forms whose readers
    // are tested by their own tests (a docker run line, a Helm chart): for those only the
    // properties that hold for every input apply.
    s.well_formed = s.rel.find("/malformed/") == std::string::npos && s.rel.find("serving/bad/") == std::string::npos &&
                    s.rel.find("tests/corpus/deploy/") == std::string::npos;
    mut::plan_mutations(s);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> checkpoints() {
  std::vector<std::string> out = {""};  // none: the config's model, when it is a local directory
  for (const char* d : {"docs/examples/checkpoints", "tests/data/checkpoint"})
    for (const auto& e : fs::directory_iterator(kSourceRoot / d))
      if (e.is_directory()) out.push_back(e.path().string());
  std::sort(out.begin() + 1, out.end());
  return out;
}

const std::vector<std::string> kGpus = {"H100", "B200", "GB10", "A100", "MI300X"};

std::string scratch_root() {
  std::string base = ::access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : fs::temp_directory_path().string();
  std::string tmpl = base + "/specprobe-property-XXXXXX";
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
}

struct Tally {
  size_t runs = 0, ok = 0, input_errors = 0, usage_errors = 0, errors_with_line = 0, swept = 0;
  std::vector<std::string> failures;
  std::vector<std::string> without_line;  // a few input errors that name a file but no line (printed)
  std::string last_error;                 // the last run's error, for the unmutated files' check
  void fail(std::string what) {
    if (failures.size() < 40)
      failures.push_back(std::move(what));
    else if (failures.size() == 40)
      failures.push_back("(more failures left out)");
  }
};

// One run: the properties above. Returns false (and records why) when one does not hold.
bool check_one(const Services& services, const CheckRequest& req, const std::string& what, Tally& t) {
  ++t.runs;
  Expected<Report> r = internal_error("not run");
  try {
    r = run_check(req, services);
  } catch (const std::exception& e) {
    t.fail(what + ": exception escaped run_check: " + e.what());
    return false;
  } catch (...) {
    t.fail(what + ": unknown exception escaped run_check");
    return false;
  }
  t.last_error.clear();
  if (!r) {
    const Error& e = r.error();
    t.last_error = e.str();
    if (const std::string why = specprobe::testing::error_violation(e); !why.empty()) {
      t.fail(what + ": " + why);
      return false;
    }
    (e.kind == ErrorKind::input ? t.input_errors : t.usage_errors)++;
    if (e.where.line > 0)
      ++t.errors_with_line;
    else if (e.kind == ErrorKind::input && t.without_line.size() < 5)
      t.without_line.push_back(what + ": " + e.str());
    return true;
  }
  ++t.ok;
  try {
    specprobe::testing::render_all(*r);
    if (const std::string why = specprobe::testing::agreement_violation(*r); !why.empty()) {
      t.fail(what + ": " + why);
      return false;
    }
  } catch (const std::exception& e) {
    t.fail(what + ": rendering the report threw: " + e.what());
    return false;
  }
  return true;
}

size_t wanted_configs(size_t total) {
  const char* v = std::getenv("SPECPROBE_PROPERTY_CONFIGS");
  if (v && std::string(v) == "all") return total;
  if (v && *v) return std::min<size_t>(total, std::stoul(v));
  return std::min<size_t>(total, sanitized() ? 1500 : 20000);
}

// SPECPROBE_PROPERTY_SHARD="i/n": this process runs mutation j of the shuffled list when j % n == i
// (and the unmutated runs when i == 0), so ctest runs the 20,000 as n processes side by side.
std::pair<size_t, size_t> shard() {
  const char* v = std::getenv("SPECPROBE_PROPERTY_SHARD");
  if (!v || !*v) return {0, 1};
  size_t i = 0, n = 0;
  if (std::sscanf(v, "%zu/%zu", &i, &n) != 2 || n == 0 || i >= n) {
    FAIL("SPECPROBE_PROPERTY_SHARD must be i/n with i < n, got " << v);
  }
  return {i, n};
}

uint64_t seed() {
  const char* v = std::getenv("SPECPROBE_PROPERTY_SEED");
  return v && *v ? std::stoull(v) : 20261125;
}

}  // namespace

TEST_CASE("pipeline property: mutated configs end in a report or an input error naming the file",
          "[pipeline][property]") {
  const auto t0 = std::chrono::steady_clock::now();
  auto services = system_services();
  REQUIRE(services.has_value());
  services->today = [] { return std::string("2026-11-25"); };
  const std::vector<mut::Source> sources = corpus();
  const std::vector<std::string> models = checkpoints();
  REQUIRE(sources.size() > 200);
  REQUIRE(models.size() > 5);

  // Every (source, mutation), shuffled (Fisher-Yates on mt19937_64: the same on every platform).
  std::vector<std::pair<uint32_t, uint32_t>> all;
  for (uint32_t s = 0; s < sources.size(); ++s)
    for (uint32_t m = 0; m < sources[s].mutations.size(); ++m) all.emplace_back(s, m);
  std::mt19937_64 rng(seed());
  for (size_t i = all.size(); i > 1; --i) std::swap(all[i - 1], all[rng() % i]);
  const size_t n = wanted_configs(all.size());
  REQUIRE(n <= all.size());

  const std::string scratch = scratch_root();
  const char* keep = std::getenv("SPECPROBE_PROPERTY_KEEP");
  Tally t;
  auto request_for = [&](const std::string& file, std::mt19937_64& pick) {
    CheckRequest req;
    req.file = file;
    req.gpu = kGpus[pick() % kGpus.size()];
    req.model = models[pick() % models.size()];
    req.probes = "off";
    req.stack_probes = "off";
    req.matrix = pick() % 8 == 0;  // the sweep re-derives ~100 variants: one run in eight
    return req;
  };

  const auto [shard_index, shard_count] = shard();
  // The unmutated files: no error at all (malformed ones: no crash).
  std::mt19937_64 pick(seed() + 1);
  size_t originals = 0;
  for (const mut::Source& s : sources) {
    if (shard_index != 0) break;
    const fs::path dir = fs::path(scratch) / "orig";
    fs::create_directories(dir);
    const fs::path file = dir / fs::path(s.path).filename();
    write_bytes(file, s.text);
    for (int variant = 0; variant < 2; ++variant) {
      CheckRequest req = request_for(file.string(), pick);
      if (variant == 0) req.model.clear();
      const std::string what =
          s.rel + " (unmutated, --gpu " + req.gpu + (req.model.empty() ? "" : " --model " + req.model) + ")";
      const size_t errors_before = t.input_errors + t.usage_errors;
      const bool ok = check_one(*services, req, what, t);
      ++originals;
      if (ok && s.well_formed && t.input_errors + t.usage_errors != errors_before)
        t.fail(what + ": an error for a well-formed file: " + t.last_error);
    }
  }

  // The mutations.
  size_t mutated = 0;
  for (size_t i = shard_index; i < n; i += shard_count) {
    ++mutated;
    const auto [si, mi] = all[i];
    const mut::Source& s = sources[si];
    const mut::Mutation& m = s.mutations[mi];
    const fs::path dir = fs::path(scratch) / "m";
    fs::create_directories(dir);
    const fs::path file = dir / fs::path(s.path).filename();
    const std::string text = mut::apply(s, m);
    write_bytes(file, text);
    std::mt19937_64 run_pick(seed() ^ (i * 0x9E3779B97F4A7C15ull));
    const CheckRequest req = request_for(file.string(), run_pick);
    t.swept += req.matrix;
    const std::string what = "#" + std::to_string(i) + " " + s.rel + ": " + mut::describe(s, m) + " (--gpu " + req.gpu +
                             (req.model.empty() ? "" : " --model " + fs::path(req.model).filename().string()) +
                             (req.matrix ? ", sweep" : "") + ")";
    if (!check_one(*services, req, what, t) && keep && *keep) {
      fs::create_directories(keep);
      write_bytes(fs::path(keep) / (std::to_string(i) + "-" + fs::path(s.path).filename().string()), text);
    }
    fs::remove(file);
  }
  std::error_code ec;
  fs::remove_all(scratch, ec);

  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr,
               "pipeline property: %zu mutated configs (shard %zu/%zu of %zu) of %zu (seed %llu) + %zu unmutated "
               "runs over %zu files, %zu reports, %zu input and %zu usage errors (%zu with a line), %zu with the "
               "sweep; %.1f s\n",
               mutated, shard_index, shard_count, n, all.size(), static_cast<unsigned long long>(seed()), originals,
               sources.size(), t.ok, t.input_errors, t.usage_errors, t.errors_with_line, t.swept, secs);
  for (const auto& w : t.without_line) std::fprintf(stderr, "  input error without a line: %s\n", w.c_str());
  for (const auto& f : t.failures) UNSCOPED_INFO(f);
  CHECK(t.failures.empty());
  CHECK(t.runs == mutated + originals);
}
