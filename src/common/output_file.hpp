// Writing output so that it is never lost silently and never seen half-written. Every write is
// checked (short writes, fflush, ferror, fsync, close); a failure is an io_error (exit 5) whose
// message names the destination.
//
// Report files are replaced atomically: the content goes to a dot-prefixed temporary file in the
// target's directory (".NAME.tmp.XXXXXX", from mkstemp), which is fsync'd, closed and renamed over
// the target, so a reader polling the target sees the old report or the new one, never a part;
// on any failure the temporary file is removed and the target is left as it was. A target that
// exists and is not a regular file (/dev/stdout, /dev/full, a FIFO) is written in place; a
// symbolic link is followed (the file it names is replaced, the link stays), except under /dev/ and
// /proc/ (/dev/stdout to a file: written in place, as the shell opened it).
#pragma once
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace specprobe {

// Tests: runs after the content is written to TMP_PATH, before fsync and rename; an error it
// returns fails the write (as a failing write would).
using BeforeRename = std::function<Status(const std::string& tmp_path)>;

Status write_file_atomic(const std::string& path, std::string_view content, const BeforeRename& before_rename = {});

// write_file_atomic in pieces: the content goes to the temporary file as it is written, and
// commit() renames it over PATH (a target written in place, as above, is written as it comes).
// A writer destroyed without commit, or after a failure, removes its temporary file and leaves
// the target as it was. Every error names PATH.
class AtomicFileWriter {
 public:
  static Expected<std::unique_ptr<AtomicFileWriter>> open(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  Status write(std::string_view content);
  // Overwrites bytes written before, at OFFSET from the start (a temporary file only: a target
  // written in place cannot be, and says so with ESPIPE).
  Status write_at(size_t offset, std::string_view content);
  bool rewritable() const { return !tmp_.empty(); }
  size_t written() const { return written_; }
  Status commit(const BeforeRename& before_rename = {});

 private:
  AtomicFileWriter() = default;
  Status fail(int err);
  std::string path_, target_, dir_, tmp_;  // tmp_ empty: written in place
  int fd_ = -1;
  size_t written_ = 0;
};

// Appends CONTENT to PATH (created when missing) with checked writes; for logs that others
// append to as well (the GitHub job summary).
Status append_file(const std::string& path, std::string_view content);

// fwrite + fflush + ferror on FP; the error names it ("standard output", "standard error").
Status write_stream(std::FILE* fp, std::string_view content);

// "standard output" for stdout, "standard error" for stderr, else "the output stream".
std::string stream_name(std::FILE* fp);

// At the end of a command: flushes and closes stdout. When that fails (or an earlier write to it
// did), prints one message and returns the io exit code in place of 0 or 1 (a report was due and is
// lost); RC otherwise (an RC that already is the io code had its message printed).
int finish_stdout(int rc);

}  // namespace specprobe
