// The helper threads of parallel_for (see parallel.hpp).
#include "common/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>

namespace specprobe::detail {
namespace {

constexpr size_t kMaxHelpers = 15;  // with the calling thread, 16

// One parallel_for call: its items, taken one at a time by the caller and the helpers that join.
struct Job {
  size_t n = 0;
  size_t helpers_wanted = 0;
  const std::function<void(size_t)>* fn = nullptr;
  std::atomic<size_t> next{0};
  size_t helpers_joined = 0;  // under Pool::mu_
  size_t active = 0;          // helpers in the job now, under Pool::mu_
};

// A call made on a helper thread runs there alone (a job inside a job never waits for a helper).
thread_local bool t_helper = false;

class Pool {
 public:
  // Never destroyed: helpers wait on it until the process ends.
  static Pool& get() {
    static Pool* const pool = new Pool();
    return *pool;
  }

  void run(size_t n, size_t helpers, const std::function<void(size_t)>& fn) {
    Job job;
    job.n = n;
    job.helpers_wanted = std::min(helpers, kMaxHelpers);
    job.fn = &fn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(&job);
      // Enough idle helpers for this job (others may be busy with a long job of their own: a
      // file's engine check), up to the limit; a helper started now counts as idle.
      while (idle_ < job.helpers_wanted && helpers_ < kMaxHelpers) {
        std::thread([this] { work(); }).detach();
        ++helpers_;
        ++idle_;
      }
    }
    work_cv_.notify_all();
    std::exception_ptr thrown;  // FN must not throw; should it, the job still ends before it leaves
    try {
      for (size_t i; (i = job.next.fetch_add(1)) < n;) fn(i);
    } catch (...) {
      thrown = std::current_exception();
      job.next = n;
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      // No helper joins from now on; those in the job finish the items they took.
      jobs_.erase(std::remove(jobs_.begin(), jobs_.end(), &job), jobs_.end());
      done_cv_.wait(lock, [&] { return job.active == 0; });
    }
    if (thrown) std::rethrow_exception(thrown);
  }

 private:
  void work() {
    t_helper = true;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [&] { return !jobs_.empty(); });
      Job* job = jobs_.front();
      ++job->active;
      if (++job->helpers_joined >= job->helpers_wanted) jobs_.pop_front();
      --idle_;
      lock.unlock();
      for (size_t i; (i = job->next.fetch_add(1)) < job->n;) (*job->fn)(i);
      lock.lock();
      ++idle_;
      if (--job->active == 0) done_cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Job*> jobs_;  // calls that still take helpers
  size_t helpers_ = 0, idle_ = 0;
};

}  // namespace

void run_parallel(size_t n, size_t helpers, const std::function<void(size_t)>& fn) {
  if (t_helper || helpers == 0) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  Pool::get().run(n, helpers, fn);
}

}  // namespace specprobe::detail
