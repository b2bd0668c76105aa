// libFuzzer harness: the whole pipeline (run_check) from bytes: a serving config and a small
// generated checkpoint, the real services (built-in catalog), probes and stack probes off, a
// declared GPU, then every printer (text, JSON, SARIF, JUnit, GitHub) on the report.
// Input: up to six sections separated by "\n----\n" lines:
//   0 the serving config (a vLLM YAML/JSON config or a deploy script)
//   1 config.json of the checkpoint; empty: no --model (the config's own model is used when it
//     names an existing local path)
//   2 model.safetensors.index.json (empty: none; then the shard is model.safetensors)
//   3 the header of the one shard (8-byte length and a sparse data region are added; empty: none)
//   4 .specprobe.yaml next to the config (suppressions; empty: none)
//   5 options, words: ext=.yaml|.yml|.json|.sh|.txt|none, gpu=NAME (any text; auto is H100),
//     engine=vllm|sglang, sweep (the what-if sweep), ignore=ID (--ignore)
// Without an options section the extension comes from the input's length (.yaml, .json, .sh,
// none) and the GPU from the length too (H100, B200, GB10, A100, MI300X), so that plain fixture
// files are seeds and every branch is reached.
// Properties: no crash, leak, UB or escaping exception; an error is a usage or input error
// with a message that names a file and carries no exception text; a report renders.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../pipeline/check_properties.hpp"
#include "fuzz_common.hpp"
#include "pipeline/check.hpp"

namespace {

void write_or_unlink(const std::string& path, std::string_view bytes) {
  if (bytes.empty())
    ::unlink(path.c_str());
  else
    specprobe::fuzz::write_file(path, bytes);
}

const specprobe::Services& pipeline_services() {
  static const specprobe::Services services = [] {
    auto s = specprobe::system_services();
    if (!s) SPECPROBE_FUZZ_FAIL("system_services: " + s.error().str());
    s->today = [] { return std::string("2026-11-25"); };
    s->query_gpus = [] { return specprobe::DriverReport{}; };  // never the real driver
    return *s;
  }();
  return services;
}

}  // namespace

SPECPROBE_FUZZ_ENTRY(fuzz_pipeline_one) {
  using specprobe::fuzz::write_file;
  namespace fs = std::filesystem;
  static const std::string dir = [] {
    std::string d = specprobe::fuzz::scratch_dir() + "/pipeline";
    fs::create_directories(d + "/ckpt");
    return d;
  }();
  const auto parts = specprobe::fuzz::split_sections(std::string_view(reinterpret_cast<const char*>(data), size), 6);
  auto part = [&](size_t i) { return i < parts.size() ? parts[i] : std::string_view(); };

  specprobe::CheckRequest req;
  static const char* const kExt[] = {".yaml", ".json", ".sh", ""};
  static const char* const kGpu[] = {"H100", "B200", "GB10", "A100", "MI300X"};
  std::string ext = kExt[size % 4];
  req.gpu = kGpu[(size / 4) % 5];
  req.matrix = false;
  if (parts.size() > 5) {
    std::istringstream words{std::string(part(5))};
    for (std::string w; words >> w;) {
      if (w.rfind("ext=", 0) == 0) {
        const std::string e = w.substr(4);
        for (const char* ok : {".yaml", ".yml", ".json", ".sh", ".txt"})
          if (e == ok) ext = e;
        if (e == "none") ext.clear();
      } else if (w.rfind("gpu=", 0) == 0) {
        req.gpu = w.size() > 4 && w.substr(4) != "auto" ? w.substr(4) : "H100";
      } else if (w == "engine=vllm" || w == "engine=sglang") {
        req.engine = w.substr(7);
      } else if (w == "sweep") {
        req.matrix = true;
      } else if (w.rfind("ignore=", 0) == 0) {
        req.ignore.push_back(w.substr(7));
      }
    }
  }
  // Every name this harness writes, rewritten or unlinked per input (the config's name depends
  // on its extension: the other names are unlinked).
  for (const char* e : {".yaml", ".yml", ".json", ".sh", ".txt", ""})
    if (ext != e) ::unlink((dir + "/config" + e).c_str());
  req.file = dir + "/config" + ext;
  write_file(req.file, part(0));
  write_or_unlink(dir + "/.specprobe.yaml", part(4));
  const std::string ckpt = dir + "/ckpt";
  write_or_unlink(ckpt + "/config.json", part(1));
  write_or_unlink(ckpt + "/model.safetensors.index.json", part(2));
  const std::string shard = ckpt + (part(2).empty() ? "/model.safetensors" : "/model-00001-of-00001.safetensors");
  ::unlink((ckpt + (part(2).empty() ? "/model-00001-of-00001.safetensors" : "/model.safetensors")).c_str());
  if (part(3).empty()) {
    ::unlink(shard.c_str());
  } else {
    specprobe::fuzz::write_shard(shard, part(3));
  }
  if (!part(1).empty()) req.model = ckpt;
  req.probes = "off";
  req.stack_probes = "off";

  const specprobe::Services& services = pipeline_services();
  auto r = specprobe::run_check(req, services);
  if (!r) {
    if (const std::string why =
            specprobe::testing::error_violation(r.error(), std::string_view(reinterpret_cast<const char*>(data), size));
        !why.empty())
      SPECPROBE_FUZZ_FAIL(why);
    return 0;
  }
  specprobe::testing::render_all(*r);  // a printer that throws is a crash
  // The verdict, the plan's matrix cell, the largest-k line and the exit code agree.
  if (const std::string why = specprobe::testing::agreement_violation(*r); !why.empty()) SPECPROBE_FUZZ_FAIL(why);
  return 0;
}
