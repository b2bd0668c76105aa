// Checked, atomic output (see output_file.hpp).
#include "common/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace specprobe {
namespace {

Status failed(const std::string& what, int err) {
  return io_error(fmt::format("cannot write {}: {}", what, std::strerror(err)));
}

// write(2) until done; false with errno set on failure (a zero-byte write counts as ENOSPC).
bool write_all(int fd, std::string_view content) {
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    const ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

// Open FLAGS, write, close: each step checked.
Status write_through(const std::string& path, std::string_view content, int flags) {
  const int fd = open(path.c_str(), flags | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) return failed(path, errno);
  if (!write_all(fd, content)) {
    const int e = errno;
    close(fd);
    return failed(path, e);
  }
  if (close(fd) != 0) return failed(path, errno);
  return Ok{};
}

mode_t new_file_mode() {
  const mode_t mask = umask(022);
  umask(mask);
  return 0666 & ~mask;
}

}  // namespace

Status write_file_atomic(const std::string& path, std::string_view content, const BeforeRename& before_rename) {
  if (path.empty()) return io_error("cannot write a file with an empty name");
  std::string target = path;
  struct stat st {};
  if (path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0) return write_through(path, content, O_TRUNC);
  if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    // Replace the file the link names, not the link.
    if (char* real = realpath(path.c_str(), nullptr)) {
      target = real;
      std::free(real);
    }
  }
  const bool exists = stat(target.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) return write_through(target, content, O_TRUNC);  // a device, a FIFO

  const size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : target.substr(0, slash));
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  if (base.empty()) return failed(path, EISDIR);
  std::string tmp = (dir == "/" ? "" : dir) + "/." + base + ".tmp.XXXXXX";
  const int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return failed(path, errno);
  auto fail = [&](int err, bool open) {
    if (open) close(fd);
    unlink(tmp.c_str());
    return failed(path, err);
  };
  // mkstemp makes 0600; a report gets what a plain create would give it (or keeps the old mode).
  if (fchmod(fd, exists ? (st.st_mode & 07777) : new_file_mode()) != 0) return fail(errno, true);
  if (!write_all(fd, content)) return fail(errno, true);
  if (before_rename)
    if (auto hook = before_rename(tmp); !hook) {
      close(fd);
      unlink(tmp.c_str());
      return hook.error();
    }
  if (fsync(fd) != 0) return fail(errno, true);
  if (close(fd) != 0) return fail(errno, false);
  if (rename(tmp.c_str(), target.c_str()) != 0) return fail(errno, false);
  // The rename itself reaches the disk with the directory (best effort: some filesystems refuse).
  if (const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return Ok{};
}

Status append_file(const std::string& path, std::string_view content) {
  return write_through(path, content, O_APPEND | O_CREAT);
}

std::string stream_name(std::FILE* fp) {
  if (fp == stdout) return "standard output";
  if (fp == stderr) return "standard error";
  return "the output stream";
}

Status write_stream(std::FILE* fp, std::string_view content) {
  errno = 0;
  const size_t n = std::fwrite(content.data(), 1, content.size(), fp);
  int err = errno;
  if (n == content.size() && std::fflush(fp) != 0) err = errno;
  if (n != content.size() || std::ferror(fp)) return failed(stream_name(fp), err ? err : EIO);
  return Ok{};
}

int finish_stdout(int rc) {
  errno = 0;
  int err = 0;
  bool bad = std::fflush(stdout) != 0;
  if (bad) err = errno;
  bad = bad || std::ferror(stdout);
  if (!bad && std::fclose(stdout) != 0) {
    bad = true;
    err = errno;
  }
  if (!bad) return rc;
  if (rc == kIoErrorExit) return rc;  // said already
  std::fprintf(stderr, "specprobe: error: cannot write %s: %s\n", stream_name(stdout).c_str(),
               err ? std::strerror(err) : "a write to it failed");
  return rc == 0 || rc == 1 ? kIoErrorExit : rc;
}

}  // namespace specprobe
