// The probe table (see kinds.hpp). A new probe is one entry here; its ProbeKind lives in its own
// file (probes/<name>.cpp, with kernels/<name>.cu).
#include "probes/kinds.hpp"

#include "probes/mla_verify.hpp"
#include "probes/mqa_logits.hpp"
#include "probes/spec_verify.hpp"

namespace specprobe::probes {

const std::vector<ProbeKind>& probe_kinds() {
  static const std::vector<ProbeKind> kKinds = {
      kMqaLogitsProbe,
      kSpecVerifyProbe,
      kGraphReplayProbe,
      kMlaVerifyProbe,
  };
  return kKinds;
}

Expected<std::vector<int>> parse_int_list(const std::string& text) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const size_t dash = item.find('-', 1);
    try {
      size_t used = 0;
      if (dash == std::string::npos) {
        const int v = std::stoi(item, &used);
        if (used != item.size()) throw std::invalid_argument(item);
        out.push_back(v);
      } else {
        const int lo = std::stoi(item.substr(0, dash), &used);
        if (used != dash) throw std::invalid_argument(item);
        const std::string hi_s = item.substr(dash + 1);
        const int hi = std::stoi(hi_s, &used);
        // in 64 bits: INT_MIN-INT_MAX would overflow hi - lo, and ++v past INT_MAX
        if (used != hi_s.size() || hi < lo || int64_t{hi} - lo > 64) throw std::invalid_argument(item);
        for (int64_t v = lo; v <= hi; ++v) out.push_back(static_cast<int>(v));
      }
    } catch (const std::exception&) {
      return usage_error("cannot read '" + item + "' as a number or range (e.g. 1-8, 1,2,4)");
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace specprobe::probes
