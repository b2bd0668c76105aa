// The names the engine check (probes/engine_check.hpp) and the what-if sweep (rules/sweep.hpp)
// share for a matrix cell: the cell id sent to the installed engine and the key of its answer in
// the facts (engine_check.cells.<id>, and the for_cell of its answer record: facts/answers.hpp).
#pragma once
#include <string>

#include <fmt/format.h>

namespace specprobe {

// "k3-FLASH_ATTN-fp8"; an empty backend (the engine's own choice) is "-".
inline std::string engine_cell_id(int k, const std::string& backend, const std::string& kv) {
  return fmt::format("k{}-{}-{}", k, backend.empty() ? "-" : backend, kv.empty() ? "auto" : kv);
}

}  // namespace specprobe
