// parallel_for (common/parallel.hpp): every job runs once, from any caller, nested or side by side,
// with the helper threads kept between calls.
#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/parallel.hpp"

using namespace specprobe;

TEST_CASE("parallel_for runs every job once, whatever the thread count", "[common][parallel]") {
  for (size_t threads : {size_t{1}, size_t{2}, size_t{4}, size_t{16}, size_t{64}}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{1000}}) {
      std::vector<std::atomic<int>> ran(n);
      parallel_for(n, threads, [&](size_t i) { ran[i].fetch_add(1); });
      INFO("threads " << threads << ", jobs " << n);
      for (size_t i = 0; i < n; ++i) CHECK(ran[i].load() == 1);
    }
  }
}

TEST_CASE("parallel_for inside a job, and from several threads at once, ends with every job run",
          "[common][parallel]") {
  // A job that makes its own jobs (a file's results rendered on the cores), on the caller and on
  // a helper thread; two callers sharing the helpers (the catalog loading while a check runs).
  std::atomic<int> inner{0};
  parallel_for(8, 4, [&](size_t) { parallel_for(50, 4, [&](size_t) { inner.fetch_add(1); }); });
  CHECK(inner.load() == 400);
  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([&] {
      for (int round = 0; round < 20; ++round) parallel_for(100, 8, [&](size_t) { total.fetch_add(1); });
    });
  for (auto& t : callers) t.join();
  CHECK(total.load() == 3 * 20 * 100);
}

TEST_CASE("parallel_for_rethrow runs every job, then throws the first failure by index", "[common][parallel]") {
  std::vector<std::atomic<int>> ran(200);
  try {
    parallel_for_rethrow(200, 4, [&](size_t i) {
      ran[i].fetch_add(1);
      if (i == 150 || i == 70) throw std::runtime_error("job " + std::to_string(i));
    });
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "job 70");
  }
  for (auto& r : ran) CHECK(r.load() == 1);
  // The helpers are still there for the next call.
  std::atomic<int> after{0};
  parallel_for(100, 4, [&](size_t) { after.fetch_add(1); });
  CHECK(after.load() == 100);
}
