// Independent jobs spread over the machine's cores: the checkpoint's shard headers, the probes'
// CPU references. The calling thread works too; at most 16 threads.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

namespace specprobe {

// Calls FN(i) once for each i in [0, N), on up to min(N, MAX_THREADS, 16) threads (MAX_THREADS: the
// machine's cores when not given); returns when all are done. FN must not throw, and jobs must not share what they
// write.
template <class Fn>
void parallel_for(size_t n, size_t max_threads, Fn&& fn) {
  std::atomic<size_t> next{0};
  const size_t nthreads = std::max<size_t>(1, std::min<size_t>({n, max_threads, 16}));
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < nthreads; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
}

// parallel_for for jobs that may throw: every job runs, then the first exception (by index) is
// rethrown on the calling thread.
template <class Fn>
void parallel_for_rethrow(size_t n, size_t max_threads, Fn&& fn) {
  std::vector<std::exception_ptr> errors(n);
  parallel_for(n, max_threads, [&](size_t i) {
    try {
      fn(i);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  });
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

template <class Fn>
void parallel_for(size_t n, Fn&& fn) {
  parallel_for(n, std::max<size_t>(1, std::thread::hardware_concurrency()), std::forward<Fn>(fn));
}

}  // namespace specprobe
