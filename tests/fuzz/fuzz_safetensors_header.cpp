// libFuzzer harness: a safetensors shard header (the JSON after the 8-byte length), validated as
// the checkpoint reader does. The input is the header text; the harness tries it against the
// file size that makes the data region exactly fit the largest data_offsets end (so validation
// runs to the end) and against sizes one byte off, a huge size and a zero size.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "inputs/checkpoint/safetensors.hpp"

namespace {

// Largest data_offsets[1] in a header that parses as JSON (0 when none).
uint64_t header_data_end(std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  uint64_t end = 0;
  if (!j.is_object()) return 0;
  for (const auto& [name, info] : j.items()) {
    if (!info.is_object()) continue;
    auto it = info.find("data_offsets");
    if (it == info.end() || !it->is_array() || it->size() != 2 || !(*it)[1].is_number_unsigned()) continue;
    end = std::max(end, (*it)[1].get<uint64_t>());
  }
  return end;
}

}  // namespace

SPECPROBE_FUZZ_ENTRY(fuzz_safetensors_header_one) {
  using namespace specprobe::checkpoint;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const uint64_t n = size;
  const uint64_t end = header_data_end(text);
  const uint64_t exact = end > std::numeric_limits<uint64_t>::max() - 8 - n ? 0 : 8 + n + end;
  for (uint64_t file_size :
       {exact, exact + 1, exact ? exact - 1 : 0, uint64_t{8} + n, std::numeric_limits<uint64_t>::max(), uint64_t{0}}) {
    HeaderResult r = parse_safetensors_header(text, n, file_size);
    if (r.header) {
      // A header that validates must describe tensors inside the data region, in order.
      const uint64_t data_bytes = file_size - 8 - n;
      for (const TensorInfo& t : r.header->tensors)
        if (t.begin > t.end || t.end > data_bytes) SPECPROBE_FUZZ_FAIL("property violated");
    } else if (r.error.code.empty()) {
      SPECPROBE_FUZZ_FAIL("property violated");  // a failure must say why
    }
  }
  return 0;
}
