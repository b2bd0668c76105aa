// Test-only probes (kernels/test_faults.cu) that prove the runner's isolation: one kernel faults
// with an illegal address (reported as crash + CUDA_ERROR_ILLEGAL_ADDRESS), one hangs (killed by
// the runner's timeout). Touch the GPU.
#pragma once
#include "common/json.hpp"

namespace specprobe::probes {

Json run_test_fault_probe(const Json& spec);
Json run_test_hang_probe(const Json& spec);

}  // namespace specprobe::probes
