// Runs the built specprobe binary on hostile inputs under hard bounds: a wall-clock timeout (the
// child is killed, and the case fails, when it runs over), an address-space limit where the build
// is not sanitized (ASan reserves terabytes of shadow, so sanitized builds check peak RSS only),
// no core files. Reports how the child ended and its peak resident memory.
#pragma once
#include <string>
#include <vector>

namespace specprobe::hostile {

struct BoundedResult {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it (SIGKILL after a timeout included)
  bool timed_out = false;
  long max_rss_kib = 0;  // peak resident set of the child (wait4's ru_maxrss)
  // This test process's resident set when it forked the child. Linux counts the pages a forked
  // child shares with its parent until exec in the child's ru_maxrss, so a large test process (a
  // sanitized build is hundreds of MiB) raises max_rss_kib above what specprobe itself used.
  long inherited_rss_kib = 0;
  // Whether specprobe's own peak can have stayed below CAP_KIB: max_rss_kib is the larger of its
  // own peak and (about) inherited_rss_kib, so the bound is CAP_KIB plus what was inherited.
  bool rss_below(long cap_kib) const { return max_rss_kib < cap_kib + inherited_rss_kib; }
  std::string out, err;
  std::string stalled;  // after a timeout: where the child was (reached exec? state, wchan)
};

// Whether this build is sanitized (the binary under test is built with the same flags).
bool sanitized_build();

// Runs SPECPROBE_BINARY with ARGS (no shell) in CWD (empty: inherit), killing it after
// TIMEOUT_S seconds (four times that in a sanitized build: an ASan+UBSan Debug binary runs 10-30
// times slower, and the timeout is there to catch a hang, not to time the run). Without a sanitizer the address space
// is capped at AS_LIMIT_MIB. AS_NOBODY: when running as root, the child drops to uid/gid 65534 before exec, so that
// file permissions apply to it (root reads a mode-000 directory); exit 125 when that fails.
BoundedResult run_bounded(const std::vector<std::string>& args, const std::string& cwd = {}, int timeout_s = 60,
                          long as_limit_mib = 4096, bool as_nobody = false);

}  // namespace specprobe::hostile
