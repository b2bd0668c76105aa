// Error formatting and the one table from error kind to exit code.
#include "common/error.hpp"

namespace specprobe {

std::string SourceLocation::str() const {
  if (file.empty()) return {};
  if (line <= 0) return file;
  if (column <= 0) return fmt::format("{}:{}", file, line);
  return fmt::format("{}:{}:{}", file, line, column);
}

std::string Error::str() const {
  const std::string loc = where.str();
  return loc.empty() ? fmt::format("error: {}", message) : fmt::format("{}: error: {}", loc, message);
}

int worse_exit(int a, int b) {
  auto rank = [](int c) { return c == 5 ? 6 : c == 3 ? 5 : c == 2 ? 4 : c == 1 ? 3 : c == 4 ? 2 : c == 0 ? 0 : 1; };
  return rank(b) > rank(a) ? b : a;
}

int exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
    case ErrorKind::input:
      return 2;
    case ErrorKind::environment:
    case ErrorKind::internal:
      return 3;
    case ErrorKind::io:
      return kIoErrorExit;
  }
  return 3;
}

Error usage_error(std::string message) { return {ErrorKind::usage, std::move(message), {}}; }
Error input_error(std::string message, SourceLocation where) {
  return {ErrorKind::input, std::move(message), std::move(where)};
}
Error environment_error(std::string message) { return {ErrorKind::environment, std::move(message), {}}; }
Error internal_error(std::string message) { return {ErrorKind::internal, std::move(message), {}}; }
Error io_error(std::string message) { return {ErrorKind::io, std::move(message), {}}; }

}  // namespace specprobe
