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

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) close(fd_);
  if (!tmp_.empty()) unlink(tmp_.c_str());
}

Status AtomicFileWriter::fail(int err) {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) unlink(tmp_.c_str());
  tmp_.clear();
  return failed(path_, err);
}

Expected<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::open(const std::string& path) {
  if (path.empty()) return io_error("cannot write a file with an empty name");
  std::unique_ptr<AtomicFileWriter> w(new AtomicFileWriter());
  w->path_ = path;
  std::string target = path;
  struct stat st {};
  auto through = [&]() -> Expected<std::unique_ptr<AtomicFileWriter>> {
    w->fd_ = ::open(target.c_str(), O_TRUNC | O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (w->fd_ < 0) return failed(path, errno).error();
    return std::move(w);
  };
  if (path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0) return through();
  if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    // Replace the file the link names, not the link.
    if (char* real = realpath(path.c_str(), nullptr)) {
      target = real;
      std::free(real);
    }
  }
  const bool exists = stat(target.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) return through();  // a device, a FIFO

  const size_t slash = target.rfind('/');
  w->dir_ = slash == std::string::npos ? "." : (slash == 0 ? "/" : target.substr(0, slash));
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  if (base.empty()) return failed(path, EISDIR).error();
  std::string tmp = (w->dir_ == "/" ? "" : w->dir_) + "/." + base + ".tmp.XXXXXX";
  w->fd_ = mkostemp(tmp.data(), O_CLOEXEC);
  if (w->fd_ < 0) return failed(path, errno).error();
  w->tmp_ = tmp;
  w->target_ = target;
  // mkstemp makes 0600; a report gets what a plain create would give it (or keeps the old mode).
  if (fchmod(w->fd_, exists ? (st.st_mode & 07777) : new_file_mode()) != 0) return w->fail(errno).error();
  return w;
}

Status AtomicFileWriter::write(std::string_view content) {
  if (fd_ < 0) return failed(path_, EBADF);
  if (!write_all(fd_, content)) return fail(errno);
  written_ += content.size();
  return Ok{};
}

Status AtomicFileWriter::write_at(size_t offset, std::string_view content) {
  if (fd_ < 0 || tmp_.empty()) return failed(path_, ESPIPE);
  for (size_t done = 0; done < content.size();) {
    const ssize_t n = pwrite(fd_, content.data() + done, content.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(n == 0 ? ENOSPC : errno);
    done += static_cast<size_t>(n);
  }
  return Ok{};
}

Status AtomicFileWriter::commit(const BeforeRename& before_rename) {
  if (fd_ < 0) return failed(path_, EBADF);
  if (tmp_.empty()) {  // written in place
    const int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0) return failed(path_, errno);
    return Ok{};
  }
  if (before_rename)
    if (auto hook = before_rename(tmp_); !hook) {
      close(fd_);
      fd_ = -1;
      unlink(tmp_.c_str());
      tmp_.clear();
      return hook.error();
    }
  if (fsync(fd_) != 0) return fail(errno);
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) return fail(errno);
  if (rename(tmp_.c_str(), target_.c_str()) != 0) return fail(errno);
  tmp_.clear();
  // The rename itself reaches the disk with the directory (best effort: some filesystems refuse).
  if (const int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return Ok{};
}

Status write_file_atomic(const std::string& path, std::string_view content, const BeforeRename& before_rename) {
  auto w = AtomicFileWriter::open(path);
  if (!w) return w.error();
  if (auto st = (*w)->write(content); !st) return st;
  return (*w)->commit(before_rename);
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
