// Host side of the test-only fault and hang probes (see test_faults.hpp). Their kernels live in the
// test fatbin, loaded as a second module into the probe's GPU session.
#include "support/test_faults.hpp"

#include "gpu/cuda_session.hpp"
#include "probes/probe_common.hpp"

namespace specprobe::testing {

namespace {

using probes::kCrash;
using probes::kError;
using probes::kPass;
using probes::kSkip;
using probes::make_result;
using probes::PhaseWhere;
using probes::probe_phase;

Json run_one(const Json& spec, const char* kernel, bool hang) {
  const auto fat = test_kernels_fatbin();
  if (fat.empty()) return make_result(spec, kSkip, kNoKernelsReason);
  auto sess = GpuSession::open(fat);
  if (!sess) return make_result(spec, kError, sess.error().message);
  GpuSession& s = **sess;
  cu::Driver& d = s.driver();
  cu::CUmodule module = nullptr;
  if (auto st = SP_CU(d, cuModuleLoadData(&module, fat.data())); !st)
    return make_result(spec, kError, st.error().message);
  cu::CUfunction f = nullptr;
  if (auto st = SP_CU(d, cuModuleGetFunction(&f, module, kernel)); !st)
    return make_result(spec, kError, st.error().message);
  uint64_t arg = 0x10;  // fault: a wild address no allocation covers
  if (hang) {
    auto flag = s.alloc(4);
    if (!flag) return make_result(spec, kError, flag.error().message);
    if (auto st = s.fill32(*flag, 0, 1); !st) return make_result(spec, kError, st.error().message);
    arg = *flag;
  }
  probe_phase(PhaseWhere::kDevice, "run kernel");
  Status st = s.launch(f, LaunchShape{1, 1, 1, 32, 0}, &arg);
  if (st) st = s.sync();
  if (st) {
    (void)SP_CU(d, cuModuleUnload(module));
    return make_result(spec, kPass, "the kernel completed (unexpected for a test fault)");
  }
  // The context is unusable now; the session destroys it, and the module with it.
  Json r = make_result(spec, kCrash, st.error().message);
  r["cuda_error"] = d.result_name(d.last_result());
  return r;
}

}  // namespace

Json run_test_fault_probe(const Json& spec) { return run_one(spec, "probe_fault_kernel", false); }
Json run_test_hang_probe(const Json& spec) { return run_one(spec, "probe_hang_kernel", true); }

const std::vector<probes::ProbeKind>& probe_kinds_with_tests() {
  static const std::vector<probes::ProbeKind> kKinds = [] {
    std::vector<probes::ProbeKind> k = probes::probe_kinds();
    k.push_back({"test_fault", "test only: a kernel that writes through a wild pointer", run_test_fault_probe});
    k.push_back({"test_hang", "test only: a kernel that never finishes", run_test_hang_probe});
    return k;
  }();
  return kKinds;
}

}  // namespace specprobe::testing
