// Independent jobs spread over the machine's cores: the checkpoint's shard headers, the catalog's
// records, the rules' results, the matrix's cells, the probes' CPU references, several files. The
// calling thread works too; at most 16 threads. The helpers are kept between calls (a pool that
// grows to what the calls ask, issue 49: a check made six of them and started a thread for each,
// which cost what the second core gained).
#pragma once
#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

namespace specprobe {

namespace detail {
// Runs FN(i) for each i in [0, N) on the calling thread and up to HELPERS pool threads; returns
// when all are done. A call made on a pool thread (a job inside a job) runs on that thread alone.
void run_parallel(size_t n, size_t helpers, const std::function<void(size_t)>& fn);
}  // namespace detail

// Calls FN(i) once for each i in [0, N), on up to min(N, MAX_THREADS, 16) threads (MAX_THREADS: the
// machine's cores when not given); returns when all are done. FN must not throw, and jobs must not
// share what they write, nor wait for one another (a job may run after another on one thread).
template <class Fn>
void parallel_for(size_t n, size_t max_threads, Fn&& fn) {
  const size_t nthreads = std::max<size_t>(1, std::min<size_t>({n, max_threads, 16}));
  if (nthreads == 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  detail::run_parallel(n, nthreads - 1, std::function<void(size_t)>(std::ref(fn)));
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
