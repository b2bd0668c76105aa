// The layers, checked by reading every #include in src/ and probes/: data flows one way,
//   common -> {inputs, gpu} -> facts -> {rules, probes} -> pipeline -> report -> cli, with
//   resolve (the models a plan names, from the Hub) on inputs, below the pipeline
// (a layer may include itself and any layer to its left; inputs and gpu, and rules and probes,
// do not include each other; report includes only common and pipeline). kernels/ is included
// only by probes/.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace {

// Layer of a path under the repository root ("src/inputs/x.hpp" -> "inputs").
std::string layer_of(const std::string& rel) {
  if (rel.rfind("probes/", 0) == 0) return "probes";
  if (rel.rfind("kernels/", 0) == 0) return "kernels";
  if (rel.rfind("src/", 0) != 0) return "";
  const std::string rest = rel.substr(4);
  const size_t slash = rest.find('/');
  return slash == std::string::npos ? "main" : rest.substr(0, slash);
}

// What each layer may include besides itself.
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> kAllowed = {
      {"common", {}},
      {"inputs", {"common"}},
      {"gpu", {"common"}},
      {"resolve", {"common", "inputs"}},
      {"facts", {"common", "inputs", "gpu"}},
      {"rules", {"common", "inputs", "gpu", "facts"}},
      {"probes", {"common", "inputs", "gpu", "facts", "kernels"}},
      {"pipeline", {"common", "inputs", "gpu", "resolve", "facts", "rules", "probes"}},
      // The printers render the report model alone (pipeline/report.hpp re-exports the rule result
      // and matrix types; the plan is typed there), never a stage's own header (issue 53).
      {"report", {"common", "pipeline"}},
      // The CLI: the pipeline and the report, plus what its subcommands use directly (cmake/layers.cmake).
      {"cli", {"common", "inputs", "gpu", "facts", "rules", "probes", "pipeline", "report"}},
      {"main", {"cli"}},
  };
  return kAllowed;
}

}  // namespace

TEST_CASE("layers include only layers below them", "[layering]") {
  const fs::path root(SPECPROBE_SOURCE_DIR);
  const std::regex include_re(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<std::string> violations;
  size_t files = 0, edges = 0;
  for (const char* top : {"src", "probes"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp") continue;
      const std::string rel = fs::relative(e.path(), root).string();
      const std::string from = layer_of(rel);
      REQUIRE(allowed().count(from) == 1);
      ++files;
      std::ifstream in(e.path());
      std::string line;
      while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        std::string target = m[1].str();
        if (target == "build_info.hpp") continue;  // generated into the build tree, no code
        // Includes are relative to src/ or the repository root (probes/, kernels/).
        std::string to;
        if (target.rfind("probes/", 0) == 0 || target.rfind("kernels/", 0) == 0)
          to = layer_of(target);
        else if (fs::exists(root / "src" / target))
          to = layer_of("src/" + target);
        else if (fs::exists(e.path().parent_path() / target))
          to = from;
        else {
          violations.push_back(rel + ": cannot resolve \"" + target + "\"");
          continue;
        }
        ++edges;
        if (to != from && !allowed().at(from).count(to))
          violations.push_back(rel + " (" + from + ") includes " + target + " (" + to + ")");
      }
    }
  }
  CHECK(files > 50);
  CHECK(edges > 100);
  for (const auto& v : violations) FAIL_CHECK(v);
}

// The build says the same: cmake/layers.cmake makes one object library per layer linking exactly
// these (written to BUILD/generated/layers.txt); ctest layer_symbols checks the objects' symbols
// against it.
TEST_CASE("the CMake layer libraries link what the include map allows", "[layering]") {
  const fs::path map = fs::path(SPECPROBE_BINARY).parent_path() / "generated" / "layers.txt";
  std::ifstream in(map);
  REQUIRE(in.good());
  std::map<std::string, std::set<std::string>> built;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const size_t colon = line.find(':');
    REQUIRE(colon != std::string::npos);
    std::set<std::string> deps;
    std::istringstream words(line.substr(colon + 1));
    for (std::string w; words >> w;) deps.insert(w);
    built[line.substr(0, colon)] = deps;
  }
  for (const auto& [layer, deps] : allowed()) {
    if (layer == "main") continue;  // src/main.cpp: the executable, not a layer library
    INFO(layer);
    REQUIRE(built.count(layer) == 1);
    std::set<std::string> want = deps;
    want.erase("kernels");  // CUDA sources, embedded as a fatbin in the probes library
    CHECK(built.at(layer) == want);
  }
  CHECK(built.size() == allowed().size() - 1);
}

// src/inputs/ in rooms, one per input form plus what they share, each including only rooms below
// it: text (line tables, JSON, relaxed JSON) and versions (installed libraries, the deployment's
// Python) at the bottom; the checkpoint reader on text; the shell on text; the engines' options on
// text; the form readers (config, command, deploy, log) on all of those through forms.hpp; the
// front door serving.hpp (public types, common only) and serving.cpp (the dispatch) at the top.
TEST_CASE("src/inputs rooms include only rooms below them", "[layering]") {
  const fs::path inputs = fs::path(SPECPROBE_SOURCE_DIR) / "src" / "inputs";
  const std::set<std::string> forms = {"text",       "shell",     "options",    "versions",
                                       "checkpoint", "forms.hpp", "serving.hpp"};
  const std::map<std::string, std::set<std::string>> allowed_rooms = {
      {"text", {}},
      {"versions", {}},
      {"checkpoint", {"text"}},
      {"shell", {"text", "serving.hpp"}},
      {"options", {"text", "serving.hpp"}},
      {"serving.hpp", {}},
      {"forms.hpp", {"options", "shell", "text", "serving.hpp"}},
      {"config", forms},
      {"command", forms},
      {"deploy", forms},
      {"log", forms},
      {"serving.cpp",
       {"text", "shell", "options", "versions", "checkpoint", "forms.hpp", "serving.hpp", "config", "command", "deploy",
        "log"}},
  };
  const auto room_of = [&](const fs::path& rel) {
    const auto first = rel.begin()->string();
    return first;  // a folder, or a file at the top of src/inputs
  };
  const std::regex include_re(R"re(^\s*#\s*include\s*"inputs/([^"]+)")re");
  std::vector<std::string> violations;
  size_t edges = 0;
  for (const auto& e : fs::recursive_directory_iterator(inputs)) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = fs::relative(e.path(), inputs);
    const std::string from = room_of(rel);
    INFO(rel.string());
    REQUIRE(allowed_rooms.count(from) == 1);  // a new room (or top-level file) names its place here
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      const std::string to = room_of(fs::path(m[1].str()));
      ++edges;
      if (to != from && !allowed_rooms.at(from).count(to))
        violations.push_back("src/inputs/" + rel.string() + " (" + from + ") includes inputs/" + m[1].str());
    }
  }
  CHECK(edges > 40);
  for (const auto& v : violations) FAIL_CHECK(v);
}
