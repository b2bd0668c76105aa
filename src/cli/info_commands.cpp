// `gpu`, `rules list`, `explain`.
#include "cli/info_commands.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "cli/check.hpp"
#include "common/embedded.hpp"
#include "common/json.hpp"
#include "common/version.hpp"
#include "facts/registry.hpp"
#include "gpu/driver.hpp"
#include "gpu/gpu_info.hpp"
#include "rules/catalog.hpp"

namespace specprobe {
namespace {

void print(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

std::string human_bytes(int64_t b) {
  if (b >= (1LL << 30)) return fmt::format("{:.1f} GiB", b / double(1LL << 30));
  if (b >= (1LL << 20)) return fmt::format("{:.1f} MiB", b / double(1LL << 20));
  if (b >= 1024) return fmt::format("{} KiB", b / 1024);
  return fmt::format("{} B", b);
}

}  // namespace

int run_gpu_command(const std::string& format) {
  const DriverReport dr = query_system_gpus();
  if (format == "json") {
    Json j = Json::object();
    j["driver"] = {{"loaded", dr.loaded},
                   {"library", dr.library_path},
                   {"version", dr.driver_version > 0 ? Json(dr.driver_version) : Json(nullptr)}};
    Json gpus = Json::array();
    for (const auto& g : dr.gpus) {
      Json gj = gpu_facts(g);
      gj["ordinal"] = g.ordinal;
      gpus.push_back(gj);
    }
    j["gpus"] = gpus;
    j["problem"] = dr.problem ? Json(dr.problem->message) : Json(nullptr);
    Json calls = Json::array();
    for (const auto& c : dr.failed_calls)
      calls.push_back({{"call", c.call},
                       {"site", c.site},
                       {"result", c.result},
                       {"name", c.result_name},
                       {"string", c.result_string}});
    j["failed_calls"] = calls;
    print(j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
  } else {
    if (dr.loaded)
      print(fmt::format("CUDA driver {}.{} ({})\n", dr.driver_version / 1000, (dr.driver_version % 1000) / 10,
                        dr.library_path));
    for (const auto& g : dr.gpus) {
      print(fmt::format("\nDevice {}: \"{}\"\n", g.ordinal, g.name));
      print(fmt::format("  compute capability          {}.{} ({})\n", g.cc_major, g.cc_minor, g.arch_family()));
      print(fmt::format("  multiprocessors             {}\n", g.sm_count));
      print(fmt::format("  shared memory per block     {} opt-in ({} B)\n", human_bytes(g.smem_per_block_optin),
                        g.smem_per_block_optin));
      print(fmt::format("  shared memory per SM        {}\n", human_bytes(g.smem_per_sm)));
      print(fmt::format("  L2 cache                    {}\n", human_bytes(g.l2_bytes)));
      print(fmt::format("  global memory               {}\n", human_bytes(g.memory_bytes)));
      if (g.memory_bandwidth_bytes_per_s > 0)
        print(fmt::format("  memory bandwidth (clocks)   {:.0f} GB/s\n", g.memory_bandwidth_bytes_per_s / 1e9));
      if (!g.pci_bus_id.empty()) print(fmt::format("  PCI bus id                  {}\n", g.pci_bus_id));
      if (!g.uuid_hash.empty()) print(fmt::format("  UUID (hashed)               {}\n", g.uuid_hash));
    }
    for (const auto& c : dr.failed_calls)
      std::fprintf(stderr, "specprobe: %s: %s failed: %s (%s)\n", c.site.c_str(), c.call.c_str(), c.result_name.c_str(),
                   c.result_string.c_str());
  }
  if (!dr.loaded || dr.gpus.empty()) {
    std::fprintf(stderr, "specprobe: error: %s\n", dr.problem ? dr.problem->message.c_str() : "no CUDA device found");
    return 3;
  }
  return 0;
}

namespace {

// The catalog for `rules list` and `explain`: a --rules-dir with no rule is an input error.
Expected<std::shared_ptr<const Catalog>> info_catalog(const std::string& rules_dir) {
  auto catalog = load_catalog({rules_dir, "", ""});
  Status st = catalog ? require_rules(**catalog) : Status(catalog.error());
  if (!st) {
    std::fprintf(stderr, "specprobe: %s\n", st.error().str().c_str());
    return st.error();
  }
  return catalog;
}

}  // namespace

int run_rules_list_command(const std::string& format, const std::string& rules_dir) {
  auto catalog = info_catalog(rules_dir);
  if (!catalog) return exit_code(catalog.error().kind);
  const std::vector<Rule>* rules = &(*catalog)->rules;
  if (format == "json") {
    Json a = Json::array();
    for (const auto& r : *rules)
      a.push_back({{"id", r.id},
                   {"slug", r.slug},
                   {"title", r.title},
                   {"severity", to_string(r.severity)},
                   {"stage", to_string(r.stage)},
                   {"certainty", to_string(r.certainty)},
                   {"condition", r.condition_text.empty() ? Json(nullptr) : Json(r.condition_text)},
                   {"category", r.category},
                   {"deprecated", r.deprecated},
                   {"references", r.references}});
    print(a.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
    return 0;
  }
  static const std::pair<char, const char*> kBands[] = {{'1', "SP1xxx serving configuration"},
                                                        {'2', "SP2xxx checkpoint"},
                                                        {'3', "SP3xxx compatibility"},
                                                        {'4', "SP4xxx probe outcomes"},
                                                        {'9', "SP9xxx tool and environment"}};
  for (const auto& [digit, name] : kBands) {
    bool header = false;
    for (const auto& r : *rules) {
      if (r.id[2] != digit) continue;
      if (!header) print(fmt::format("{}{}\n", header ? "" : "\n", name));
      header = true;
      print(fmt::format("  {}  {:<7} {:<13} {:<13} {}{}\n", r.id, to_string(r.severity), to_string(r.stage),
                        to_string(r.certainty), r.title, r.deprecated ? " (deprecated)" : ""));
    }
  }
  return 0;
}

int run_explain_command(const std::string& id_in, const std::string& rules_dir) {
  auto catalog = info_catalog(rules_dir);
  if (!catalog) return exit_code(catalog.error().kind);
  if (const Advisory* a = (*catalog)->find_advisory(id_in)) {
    print(describe_advisory(*a));
    return 0;
  }
  const Rule* found = (*catalog)->find(id_in);
  if (!found) {
    const std::string near = (*catalog)->closest_id(id_in);
    std::fprintf(stderr, "specprobe: error: unknown rule id '%s'%s\n", id_in.c_str(), did_you_mean(near).c_str());
    return 2;
  }
  const Rule& r = *found;
  print(fmt::format("{} {} ({}, stage {}, {})\n{}\n", r.id, r.slug, to_string(r.severity), to_string(r.stage),
                    to_string(r.certainty), r.title));
  if (r.certainty == Certainty::conditional) print(fmt::format("Bites only {}.\n", r.condition_text));
  print("\n");
  if (auto doc = embedded_file(fmt::format("docs/rules/{}.md", r.id))) {
    print(std::string(*doc));
    if (!doc->empty() && doc->back() != '\n') print("\n");
  } else {
    print(r.description + "\n\nFix: " + r.remediation + "\n");
    if (!r.references.empty()) {
      print("\nReferences:\n");
      for (const auto& ref : r.references) print("  - " + ref + "\n");
    }
  }
  return 0;
}

std::string describe_advisory(const Advisory& a) {
  const Certainty c = certainty_of(a);
  std::string out = fmt::format(
      "{} ({}, stage {}, {}, published {})\n{}\n{}\n{}\n\nAffected ({}):\n", a.id, to_string(a.severity),
      to_string(a.stage), to_string(c), a.published, a.summary,
      c == Certainty::conditional
          ? fmt::format("Bites only {}.\n",
                        a.condition_text.empty() ? "when requests use the feature it names" : a.condition_text)
          : std::string(),
      a.details, a.engine == "any" ? "any engine" : a.engine + " deployments");
  for (const auto& ap : a.affected)
    for (const auto& r : ap.ranges)
      out += fmt::format("  {} {}{}\n", ap.package, r.introduced == "0" ? "" : ">= " + r.introduced + ", ",
                         r.fixed.empty() ? "no fixed release known" : "< " + r.fixed);
  if (!a.gpu.empty()) {
    out += "GPUs:";
    for (const auto& g : a.gpu) out += " " + g;
    out += "\n";
  }
  out += "Trigger (JSON Logic over facts; `specprobe facts` lists them):\n  " + a.trigger().dump() + "\n";
  if (!a.upgrade.empty() || !a.fix_config.empty()) {
    out += "Fix:\n";
    for (const auto& [pkg, ver] : a.upgrade) out += fmt::format("  upgrade {} to {}\n", pkg, ver);
    if (!a.fix_config.empty()) out += "  " + a.fix_config + "\n";
  }
  out += "References:\n";
  for (const auto& r : a.references) out += fmt::format("  - {} ({})\n", r.url, r.type);
  return out;
}

int run_advisories_command(const AdvisoriesOptions& o) {
  auto catalog = load_catalog({.rules_dir = "", .advisories_dir = o.advisories_dir, .published_before = ""});
  if (!catalog) {
    std::fprintf(stderr, "specprobe: %s\n", catalog.error().str().c_str());
    return exit_code(catalog.error().kind);
  }
  // --gpu: the arch family / arch an advisory's gpu list names.
  Json gpu = nullptr;
  if (!o.gpu.empty()) {
    auto g = declared_gpu_facts(o.gpu);
    if (!g) {
      std::fprintf(stderr, "specprobe: %s\n", g.error().str().c_str());
      return 2;
    }
    gpu = *g;
  }
  std::map<std::string, std::string> versions;  // package -> version
  for (const auto& l : o.libs) {
    const size_t eq = l.find('=');
    if (eq == std::string::npos || eq == 0 || !parse_version(l.substr(eq + 1))) {
      std::fprintf(stderr, "specprobe: error: --lib expects NAME=VERSION, got '%s'\n", l.c_str());
      return 2;
    }
    versions[l.substr(0, eq)] = l.substr(eq + 1);
  }
  Json list = Json::array();
  std::string text;
  size_t shown = 0;
  for (const auto& a : (*catalog)->advisories) {
    if (!o.engine.empty() && a.engine != "any" && a.engine != o.engine) continue;
    if (!gpu.is_null() && !a.gpu.empty()) {
      const std::string fam = gpu.value("arch_family", "");
      const std::string arch =
          gpu.contains("arch") ? gpu["arch"].get<std::string>() : gpu_arch_label(Json{{"gpu", gpu}});
      if (std::find(a.gpu.begin(), a.gpu.end(), fam) == a.gpu.end() &&
          std::find(a.gpu.begin(), a.gpu.end(), arch) == a.gpu.end())
        continue;
    }
    // --lib: the advisory affects that version of the package (packages it does not name pass).
    Json facts = Json::object();
    for (const auto& [pkg, ver] : versions) facts["lib"][pkg]["version"] = ver;
    bool affected = true;
    for (const auto& ap : a.affected)
      if (versions.count(ap.package)) {
        AffectedPackage one = ap;
        Advisory probe = a;
        probe.affected = {one};
        affected &= place_versions(probe, facts).kind != VersionVerdict::Kind::fixed;
      }
    if (!affected) continue;
    ++shown;
    if (o.format == "json") {
      Json ranges = Json::array();
      for (const auto& ap : a.affected)
        for (const auto& r : ap.ranges)
          ranges.push_back({{"package", ap.package},
                            {"introduced", r.introduced},
                            {"fixed", r.fixed.empty() ? Json(nullptr) : Json(r.fixed)}});
      list.push_back({{"id", a.id},
                      {"summary", a.summary},
                      {"engine", a.engine},
                      {"published", a.published},
                      {"severity", to_string(a.severity)},
                      {"stage", to_string(a.stage)},
                      {"certainty", to_string(certainty_of(a))},
                      {"condition", a.condition_text.empty() ? Json(nullptr) : Json(a.condition_text)},
                      {"affected", ranges},
                      {"gpu", a.gpu},
                      {"url", a.primary_url()}});
    } else {
      std::string ranges;
      for (const auto& ap : a.affected)
        for (const auto& r : ap.ranges)
          ranges += fmt::format("{}{} {}", ranges.empty() ? "" : "; ", ap.package,
                                r.introduced == "0" && r.fixed.empty() ? "all"
                                : r.introduced == "0"                  ? "<" + r.fixed
                                : r.fixed.empty()                      ? ">=" + r.introduced
                                                                       : r.introduced + ".." + "<" + r.fixed);
      text += fmt::format("{:<20} {:<7} {:<13} {:<13} {}  {}\n{:<20} {}\n", a.id, to_string(a.severity),
                          to_string(a.stage), to_string(certainty_of(a)), a.published, a.summary, "", ranges);
    }
  }
  if (o.format == "json")
    print(list.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
  else
    print(text + fmt::format("{} of {} advisories\n", shown, (*catalog)->advisories.size()));
  return 0;
}

int run_facts_command(const std::string& format) {
  auto registry = fact_registry();
  if (!registry) {
    std::fprintf(stderr, "specprobe: %s\n", registry.error().str().c_str());
    return 3;
  }
  const FactRegistry& reg = **registry;
  if (format == "markdown") {
    print(reg.markdown());
  } else if (format == "json") {
    Json a = Json::array();
    for (const auto& f : reg.facts())
      a.push_back({{"name", f.name},
                   {"type", f.type},
                   {"unit", f.unit.empty() ? Json(nullptr) : Json(f.unit)},
                   {"writer", f.writer},
                   {"input", reg.writer(f.writer)->input},
                   {"doc", f.doc}});
    print(a.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
  } else {
    for (const auto& w : reg.writers()) {
      print(fmt::format("\n{}{}: {}\n", w.name, w.input ? " (input)" : "", w.what));
      for (const auto& f : reg.facts())
        if (f.writer == w.name) print(fmt::format("  {:<40} {:<7} {}\n", f.name, f.type, f.doc));
    }
  }
  return 0;
}

}  // namespace specprobe
