// Expected failures as values. Library code returns Expected<T>; only main turns an Error into
// an exit code (see exit_code()). Exceptions are caught at module boundaries and converted.
#pragma once
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace specprobe {

// Why something could not be done; decides the exit code.
enum class ErrorKind {
  usage,        // bad command line (exit 2)
  input,        // unreadable or invalid input file (exit 2)
  environment,  // driver, GPU, child process, filesystem outside the input (exit 3)
  internal,     // a bug or an embedded file that does not load (exit 3)
  io,           // the report (or other output) could not be written in full (exit 5)
};

// The exit code of a run whose output could not be written (ErrorKind::io): distinct from 3, so
// that CI can tell "the report is lost" from "the configuration could not be checked".
inline constexpr int kIoErrorExit = 5;

// A place in a user's file. line/column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  int end_line = 0;
  int end_column = 0;

  bool known() const { return !file.empty(); }
  // "file:line:col" (or less when unknown).
  std::string str() const;
};

struct Error {
  ErrorKind kind = ErrorKind::internal;
  std::string message;  // lower-case first word, no trailing period
  SourceLocation where;

  // "file:line:col: error: message" (the project's message format).
  std::string str() const;
};

int exit_code(ErrorKind kind);

// Of two exit codes (several files, several servers), the one that says most: a report not written
// (5), an environment or internal error (3), a usage or input error (2), then findings (1) over an
// unknown verdict (4) (one undecided file must not hide another's failure; issue 51), over 0.
int worse_exit(int a, int b);

Error usage_error(std::string message);
Error input_error(std::string message, SourceLocation where = {});
Error environment_error(std::string message);
Error internal_error(std::string message);
Error io_error(std::string message);

// A minimal std::expected stand-in (C++23's is not in g++ 12).
template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error error) : v_(std::move(error)) {}

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

struct Ok {};
using Status = Expected<Ok>;

}  // namespace specprobe
