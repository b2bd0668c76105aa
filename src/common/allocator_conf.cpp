// The allocator's settings, linked into the specprobe binary only when jemalloc is its allocator
// (CMakeLists.txt). jemalloc reads `malloc_conf` at its first allocation; MALLOC_CONF in the
// environment still applies on top.
//
// thp:always asks the kernel for transparent huge pages for the heap (madvise; nothing happens
// where THP is off). A check touches a few MB of fresh heap once: with 4 KiB pages that was
// ~1,300 of its ~1,900 page faults, about a sixth of its CPU on the 2-core CI machine; with huge
// pages a check faults ~650 times and its wall time drops by ~1.5 ms, for ~7 MB more peak RSS
// (issue 49, docs/perf/startup.md).
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's interface.
const char* malloc_conf = "thp:always";
}
