// The progress line (see progress.hpp).
#include "cli/progress.hpp"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

namespace specprobe {
namespace {

using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

// A terminal line redrawn by a ticker thread while a phase lasts, so that a long phase (a probe
// run, a JIT build) shows its elapsed time going up. The thread ends with the last copy of the sink.
class TerminalLine {
 public:
  explicit TerminalLine(const ProgressOptions& o) : o_(o), start_(SteadyClock::now()), ticker_([this] { tick(); }) {}
  ~TerminalLine() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      clear_locked();
    }
    cv_.notify_all();
    ticker_.join();
  }
  void set(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    line_ = line;
    since_ = SteadyClock::now();
    if (line.empty())
      clear_locked();
    else if (shown_)
      draw_locked();  // already on screen: show the new phase at once
  }

 private:
  void tick() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      // system_clock, not wait_for's steady_clock: libstdc++ waits on a steady clock with
      // pthread_cond_clockwait (glibc 2.34), and the binary must run on glibc 2.31
      // (tests/package/check_glibc_symbols.sh); a clock jump only makes one tick early or late.
      cv_.wait_until(lock, std::chrono::system_clock::now() + std::chrono::milliseconds(250));
      if (stop_) break;
      if (!line_.empty() && seconds_since(since_) >= o_.delay_s) draw_locked();
    }
  }
  void draw_locked() {
    std::fputs(fmt::format("\rspecprobe: {} ({:.0f} s)\033[K", line_, seconds_since(start_)).c_str(), o_.out);
    std::fflush(o_.out);
    shown_ = true;
  }
  void clear_locked() {
    if (!shown_) return;
    std::fputs("\r\033[K", o_.out);  // carriage return, erase to the end of the line
    std::fflush(o_.out);
    shown_ = false;
  }

  ProgressOptions o_;
  SteadyClock::time_point start_, since_;
  std::string line_;
  bool shown_ = false, stop_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread ticker_;
};

}  // namespace

ProgressOptions progress_options(bool quiet, bool forced) {
  ProgressOptions o;
  o.quiet = quiet;
  o.forced = forced;
  o.terminal = isatty(fileno(o.out)) == 1;
  return o;
}

ProgressSink progress_sink(ProgressOptions o) {
  if (o.quiet || !(o.terminal || o.forced)) return nullptr;
  if (o.terminal) {
    auto line = std::make_shared<TerminalLine>(o);
    return [line](const std::string& text) { line->set(text); };
  }
  // A log: one plain line per phase, with the time since the start.
  const auto start = SteadyClock::now();
  return [o, start](const std::string& text) {
    if (text.empty()) return;
    std::fputs(fmt::format("specprobe: [{:6.1f} s] {}\n", seconds_since(start), text).c_str(), o.out);
    std::fflush(o.out);
  };
}

}  // namespace specprobe
