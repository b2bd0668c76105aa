// Host side of the test-only fault and hang probes (see test_faults.hpp).
#include "probes/test_faults.hpp"

#include "gpu/cuda_session.hpp"
#include "probes/probe_common.hpp"

namespace specprobe::probes {

namespace {

Json run_one(const Json& spec, const char* kernel, bool hang) {
  if (probe_kernels_fatbin().empty()) return make_result(spec, kSkip, kNoKernelsReason);
  auto sess = GpuSession::open();
  if (!sess) return make_result(spec, kError, sess.error().message);
  GpuSession& s = **sess;
  auto f = s.function(kernel);
  if (!f) return make_result(spec, kError, f.error().message);
  uint64_t arg = 0x10;  // fault: a wild address no allocation covers
  if (hang) {
    auto flag = s.alloc(4);
    if (!flag) return make_result(spec, kError, flag.error().message);
    if (auto st = s.fill32(*flag, 0, 1); !st) return make_result(spec, kError, st.error().message);
    arg = *flag;
  }
  probe_phase(PhaseWhere::kDevice, "run kernel");
  Status st = s.launch(*f, LaunchShape{1, 1, 1, 32, 0}, &arg);
  if (st) st = s.sync();
  if (st) return make_result(spec, kPass, "the kernel completed (unexpected for a test fault)");
  Json r = make_result(spec, kCrash, st.error().message);
  r["cuda_error"] = s.driver().result_name(s.driver().last_result());
  return r;
}

}  // namespace

Json run_test_fault_probe(const Json& spec) { return run_one(spec, "probe_fault_kernel", false); }
Json run_test_hang_probe(const Json& spec) { return run_one(spec, "probe_hang_kernel", true); }

}  // namespace specprobe::probes
