// libFuzzer harness: what a Hub (or a hostile mirror behind HF_ENDPOINT) can answer, through the
// resolver's answer handling (resolve/hub_answers.hpp) and the fetched-header reader. Sections
// ("\n----\n"):
//   0  the revision answer (JSON) -> parse_revision: a commit is plausible, every file name safe
//   1  a Content-Range value -> content_range_total
//   2  a script of answers for one logical request: each line "STATUS [LOCATION] [flags]" feeds
//      FetchChain::step; the chain must end within its hop and retry bounds, never send the token to
//      a host other than the endpoint's, and classify() must name the repo and never the token
//   3  the bytes fetched from a shard's start, read as a stub of a shard whose size is the first
//      line of section 1 (or the bytes' own size): never a crash, never a header past the size
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz_common.hpp"
#include "inputs/checkpoint/safetensors.hpp"
#include "resolve/hub_answers.hpp"

SPECPROBE_FUZZ_ENTRY(fuzz_hub_answers_one) {
  namespace r = specprobe::resolve;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto sections = specprobe::fuzz::split_sections(text, 4);

  std::string why;
  if (auto info = r::parse_revision(std::string(sections[0]), why)) {
    if (!r::plausible_commit(info->commit)) SPECPROBE_FUZZ_FAIL("implausible commit accepted");
    for (const auto& [name, f] : info->files)
      if (!r::safe_relative(name) || name != f.name) SPECPROBE_FUZZ_FAIL("unsafe file name accepted");
  } else if (why.empty()) {
    SPECPROBE_FUZZ_FAIL("revision refused without a reason");
  }

  const std::string range = sections.size() > 1 ? std::string(sections[1]) : std::string();
  const auto total = r::content_range_total(range.substr(0, range.find('\n')));

  if (sections.size() > 2) {
    static const std::string kToken = "hf_FUZZtokenVALUE0123456789";
    r::HubSettings s;
    s.endpoint = "https://hub.example";
    s.token = kToken;
    s.token_source = "HF_TOKEN";
    const auto endpoint = r::parse_url(s.endpoint);
    r::FetchChain chain;
    chain.settings = &s;
    chain.endpoint = &*endpoint;
    chain.request.url = "https://hub.example/org/name/resolve/main/config.json";
    std::istringstream lines{std::string(sections[2])};
    std::string line;
    r::HttpStep step = chain.step(nullptr);
    int steps = 0;
    while (step.request) {
      if (++steps > r::kMaxHops + r::kMaxRetries + 2) SPECPROBE_FUZZ_FAIL("the chain does not end");
      const auto u = r::parse_url(step.request->url);
      for (const auto& h : step.request->headers)
        if (h.rfind("Authorization:", 0) == 0 && (!u || u->host != "hub.example" || u->scheme != "https"))
          SPECPROBE_FUZZ_FAIL("token sent off the endpoint's host");
      r::HttpResponse resp;
      if (!std::getline(lines, line)) line = "200";
      std::istringstream words(line);
      std::string status, location, flags;
      words >> status >> location >> flags;
      resp.status = std::atol(status.substr(0, 4).c_str());
      if (resp.status >= 300 && resp.status < 400)
        resp.location = location;
      else
        flags = location + flags;
      if (flags.find('t') != std::string::npos) resp.transport_error = "timed out", resp.timed_out = true;
      if (flags.find('c') != std::string::npos) resp.transport_error = "refused", resp.connect_failed = true;
      if (flags.find('l') != std::string::npos) resp.transport_error = "too large", resp.too_large = true;
      if (flags.find('x') != std::string::npos) resp.transport_error = "cut", resp.truncated = true;
      if (flags.find('r') != std::string::npos) resp.headers["retry-after"] = flags.substr(flags.find('r') + 1, 5);
      if (flags.find('e') != std::string::npos) resp.headers["x-error-code"] = flags.substr(flags.find('e') + 1, 16);
      step = chain.step(&resp);
    }
    if (!chain.final.ok()) {
      const r::HubFailure f = r::classify(chain.final, "org/name", "config.json", s, chain.loop);
      if (f.kind.empty() || f.message.find("'org/name'") == std::string::npos)
        SPECPROBE_FUZZ_FAIL("failure without a repo");
      if (f.message.find(kToken) != std::string::npos) SPECPROBE_FUZZ_FAIL("token in a failure message");
    }
  }

  if (sections.size() > 3) {
    const std::string stub = specprobe::fuzz::scratch_dir() + "/stub";
    specprobe::fuzz::write_file(stub, sections[3]);
    const uint64_t file_size = total ? *total : sections[3].size();
    const auto h = specprobe::checkpoint::read_safetensors_header_stub(stub, file_size, "shard.safetensors");
    if (h.header && 8 + h.header->header_size > file_size) SPECPROBE_FUZZ_FAIL("header past the shard's size");
    if (!h.header && h.error.code.empty()) SPECPROBE_FUZZ_FAIL("no header and no error code");
  }
  return 0;
}
