// glibc compatibility shim for the release binary: lets `specprobe`, built on Debian 12
// (glibc 2.36) with a static libstdc++/libgcc, run on glibc 2.28 and later (RHEL/Rocky/Alma 8,
// Debian 10+, Ubuntu 18.10+; tested down to Ubuntu 18.04's 2.27). Linked into the executable only
// (cmake/glibc_compat.cmake), never into specprobe_lib or the test binaries, and not into sanitizer or fuzz builds.
//
// Three kinds of symbol would otherwise carry a glibc version newer than 2.28:
//  1. Symbols that only exist in newer glibc; they are defined here on older interfaces, and the
//     static link resolves every reference (ours, libstdc++.a's, libgcc_eh.a's) to them:
//       arc4random             (2.36; libstdc++'s std::random_device)  -> getrandom(2) syscall
//       _dl_find_object        (2.35; libgcc's unwinder, every throw)   -> dl_iterate_phdr
//       __libc_single_threaded (2.32; libstdc++'s shared_ptr/locale)    -> a constant 0 ("maybe
//                                                                          threaded": atomics)
//  2. Symbols that moved into libc.so.6 in 2.34 (libpthread, libdl, __libc_start_main) and got
//     a new default version there, and libm's exp and pow (2.29); the old version still exists in
//     every glibc. The link wraps
//     them (-Wl,--wrap=NAME) and __wrap_NAME calls NAME@<base version> (.symver). Before 2.34 the
//     old versions live in libpthread.so.0 / libdl.so.2, which the executable therefore NEEDs.
//  3. stat/lstat/fstat/fstat64 (2.33: before that they were inline wrappers around __xstat in
//     libc_nonshared.a): wrapped and implemented with the stat syscalls.
// tests/package/check_glibc_symbols.sh (ctest "glibc_symbols") keeps the list complete: it fails
// on any GLIBC_ version above 2.28 in `objdump -T specprobe`.
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>

#if !defined(__linux__) || !defined(__GLIBC__)
#error "glibc_compat.cpp is only for Linux/glibc builds (cmake/glibc_compat.cmake)"
#endif

#if defined(__x86_64__)
#define SPECPROBE_GLIBC_BASE "GLIBC_2.2.5"
#define SPECPROBE_GLIBC_2_12 "GLIBC_2.12"
#elif defined(__aarch64__)
#define SPECPROBE_GLIBC_BASE "GLIBC_2.17"
#define SPECPROBE_GLIBC_2_12 "GLIBC_2.17"
#else
#error "glibc_compat.cpp: unknown glibc base symbol version for this architecture"
#endif

// References to OLD_NAME bind to NAME@<base version>.
#define SPECPROBE_OLD(old_name, name) __asm__(".symver " #old_name ", " #name "@" SPECPROBE_GLIBC_BASE)

extern "C" {

// ---- 1. symbols newer glibc has and older glibc lacks ---------------------------------------

// libstdc++ reads this to skip atomic reference counting in single-threaded programs. 0 means
// "maybe multi-threaded", which is always correct (specprobe runs probe watchdog threads).
char __libc_single_threaded = 0;

// getrandom(2) (Linux 3.17) with a /dev/urandom fallback; like glibc's, it never fails.
static void specprobe_random_bytes(void* buf, size_t len) {
  auto* p = static_cast<unsigned char*>(buf);
  while (len > 0) {
    long n = syscall(SYS_getrandom, p, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;  // ENOSYS (kernel < 3.17): fall back below
    p += n;
    len -= static_cast<size_t>(n);
  }
  if (len == 0) return;
  int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/dev/urandom", O_RDONLY | O_CLOEXEC));
  if (fd < 0) abort();
  while (len > 0) {
    ssize_t n = read(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) abort();
    p += n;
    len -= static_cast<size_t>(n);
  }
  close(fd);
}

uint32_t arc4random(void) noexcept {
  uint32_t v;
  specprobe_random_bytes(&v, sizeof v);
  return v;
}

void arc4random_buf(void* buf, size_t n) noexcept { specprobe_random_bytes(buf, n); }

uint32_t arc4random_uniform(uint32_t upper) noexcept {
  if (upper < 2) return 0;
  const uint32_t min = -upper % upper;  // 2^32 mod upper: reject below it to avoid modulo bias
  for (;;) {
    uint32_t r = arc4random();
    if (r >= min) return r % upper;
  }
}

#if defined(DLFO_STRUCT_HAS_EH_DBASE)
// The unwinder's lookup of the object holding a code address and its PT_GNU_EH_FRAME.
// dlfo_link_map is left null: libgcc uses only dlfo_eh_frame (and dlfo_eh_dbase where it exists).
namespace {
struct FindObject {
  uintptr_t pc;
  dl_find_object* out;
  bool found;
};
int find_object_cb(dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<FindObject*>(data);
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  bool contains = false;
  const ElfW(Phdr)* eh = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_GNU_EH_FRAME) eh = &ph;
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t start = info->dlpi_addr + ph.p_vaddr, end = start + ph.p_memsz;
    if (start < lo) lo = start;
    if (end > hi) hi = end;
    if (q->pc >= start && q->pc < end) contains = true;
  }
  if (!contains) return 0;
  q->found = true;
  q->out->dlfo_flags = 0;
  q->out->dlfo_map_start = reinterpret_cast<void*>(lo);
  q->out->dlfo_map_end = reinterpret_cast<void*>(hi);
  q->out->dlfo_link_map = nullptr;
  q->out->dlfo_eh_frame = eh ? reinterpret_cast<void*>(info->dlpi_addr + eh->p_vaddr) : nullptr;
#if DLFO_STRUCT_HAS_EH_DBASE
  q->out->dlfo_eh_dbase = nullptr;
#endif
  return 1;
}
}  // namespace

int _dl_find_object(void* address, dl_find_object* result) noexcept {
  FindObject q{reinterpret_cast<uintptr_t>(address), result, false};
  dl_iterate_phdr(find_object_cb, &q);
  return q.found ? 0 : -1;
}
#endif

// ---- 2. symbols whose default version moved to 2.34: call the base version ------------------

#define SPECPROBE_WRAP(ret, name, params, args) \
  ret specprobe_old_##name params;              \
  SPECPROBE_OLD(specprobe_old_##name, name);    \
  ret __wrap_##name params { return specprobe_old_##name args; }
// The same for a function that came after the base version (its first version is VERSION).
#define SPECPROBE_WRAP_AT(ret, name, params, args, version)       \
  ret specprobe_old_##name params;                                \
  __asm__(".symver specprobe_old_" #name ", " #name "@" version); \
  ret __wrap_##name params { return specprobe_old_##name args; }

SPECPROBE_WRAP(int, pthread_create, (pthread_t * t, const pthread_attr_t* a, void* (*f)(void*), void* arg),
               (t, a, f, arg))
SPECPROBE_WRAP(int, pthread_join, (pthread_t t, void** r), (t, r))
SPECPROBE_WRAP(int, pthread_detach, (pthread_t t), (t))
SPECPROBE_WRAP(int, pthread_once, (pthread_once_t * o, void (*f)(void)), (o, f))
SPECPROBE_WRAP(int, pthread_key_create, (pthread_key_t * k, void (*d)(void*)), (k, d))
SPECPROBE_WRAP(int, __pthread_key_create, (pthread_key_t * k, void (*d)(void*)), (k, d))
SPECPROBE_WRAP(int, pthread_key_delete, (pthread_key_t k), (k))
SPECPROBE_WRAP(void*, pthread_getspecific, (pthread_key_t k), (k))
SPECPROBE_WRAP(int, pthread_setspecific, (pthread_key_t k, const void* v), (k, v))
SPECPROBE_WRAP(int, pthread_rwlock_rdlock, (pthread_rwlock_t * l), (l))
SPECPROBE_WRAP(int, pthread_rwlock_wrlock, (pthread_rwlock_t * l), (l))
SPECPROBE_WRAP(int, pthread_rwlock_unlock, (pthread_rwlock_t * l), (l))
// New default version in 2.32 (run_cleanup.cpp blocks signals around its forks).
SPECPROBE_WRAP(int, pthread_sigmask, (int how, const sigset_t* set, sigset_t* old), (how, set, old))
// The allocator (jemalloc, linked statically: CMakeLists.txt) locks, names its threads and
// computes with log.
SPECPROBE_WRAP(int, pthread_mutexattr_init, (pthread_mutexattr_t * a), (a))
SPECPROBE_WRAP(int, pthread_mutexattr_destroy, (pthread_mutexattr_t * a), (a))
SPECPROBE_WRAP(int, pthread_mutexattr_settype, (pthread_mutexattr_t * a, int t), (a, t))
SPECPROBE_WRAP(int, pthread_mutex_trylock, (pthread_mutex_t * m), (m))
SPECPROBE_WRAP_AT(int, pthread_setname_np, (pthread_t t, const char* n), (t, n), SPECPROBE_GLIBC_2_12)
SPECPROBE_WRAP_AT(int, pthread_getname_np, (pthread_t t, char* n, size_t len), (t, n, len), SPECPROBE_GLIBC_2_12)
SPECPROBE_WRAP(void*, dlopen, (const char* f, int m), (f, m))
SPECPROBE_WRAP(void*, dlsym, (void* h, const char* s), (h, s))
SPECPROBE_WRAP(int, dlclose, (void* h), (h))
SPECPROBE_WRAP(char*, dlerror, (void), ())
SPECPROBE_WRAP(int, dladdr, (const void* a, Dl_info* i), (a, i))

// exp, pow and log got new default versions in 2.29 (the same functions without the SVID error
// handling, _LIB_VERSION); the base versions compute the same results for the finite, in-range
// arguments specprobe passes and set errno the same way otherwise.
SPECPROBE_WRAP(double, exp, (double x), (x))
SPECPROBE_WRAP(double, pow, (double x, double y), (x, y))
SPECPROBE_WRAP(double, log, (double x), (x))

// crt1.o's _start calls __libc_start_main. Since glibc 2.34, _start passes no init function and
// the new __libc_start_main runs the executable's DT_INIT / DT_INIT_ARRAY itself; the 2.2.5
// version on glibc before 2.34 only calls the init it is given. So give it one that does what
// __libc_csu_init did for a dynamically linked program (ld.so has run DT_PREINIT_ARRAY); both
// old and new glibc call it instead of their own constructor walk. Destructors (DT_FINI_ARRAY)
// are run by ld.so's _dl_fini on every glibc.
using specprobe_main_fn = int (*)(int, char**, char**);
using specprobe_init_fn = void (*)(int, char**, char**);
extern specprobe_init_fn __init_array_start[] __attribute__((visibility("hidden")));
extern specprobe_init_fn __init_array_end[] __attribute__((visibility("hidden")));
void _init(void);

static void specprobe_csu_init(int argc, char** argv, char** envp) {
  _init();
  const size_t n = static_cast<size_t>(__init_array_end - __init_array_start);
  for (size_t i = 0; i < n; ++i) __init_array_start[i](argc, argv, envp);
}

int specprobe_old___libc_start_main(specprobe_main_fn main, int argc, char** argv, specprobe_init_fn init,
                                    void (*fini)(void), void (*rtld_fini)(void), void* stack_end);
SPECPROBE_OLD(specprobe_old___libc_start_main, __libc_start_main);
int __wrap___libc_start_main(specprobe_main_fn main, int argc, char** argv, specprobe_init_fn init, void (*fini)(void),
                             void (*rtld_fini)(void), void* stack_end) {
  return specprobe_old___libc_start_main(main, argc, argv, init ? init : specprobe_csu_init, fini, rtld_fini,
                                         stack_end);
}

// ---- 3. the stat family (exported functions only since 2.33): the syscalls ---------------------

static int specprobe_syscall_result(long r) { return static_cast<int>(r); }  // -1 + errno on error

int __wrap_stat(const char* path, struct stat* st) {
  return specprobe_syscall_result(syscall(SYS_newfstatat, AT_FDCWD, path, st, 0));
}
int __wrap_lstat(const char* path, struct stat* st) {
  return specprobe_syscall_result(syscall(SYS_newfstatat, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW));
}
int __wrap_fstat(int fd, struct stat* st) { return specprobe_syscall_result(syscall(SYS_fstat, fd, st)); }
int __wrap_fstat64(int fd, struct stat* st) { return __wrap_fstat(fd, st); }
int __wrap_stat64(const char* path, struct stat* st) { return __wrap_stat(path, st); }
int __wrap_lstat64(const char* path, struct stat* st) { return __wrap_lstat(path, st); }
int __wrap_fstatat(int dirfd, const char* path, struct stat* st, int flags) {
  return specprobe_syscall_result(syscall(SYS_newfstatat, dirfd, path, st, flags));
}
int __wrap_fstatat64(int dirfd, const char* path, struct stat* st, int flags) {
  return __wrap_fstatat(dirfd, path, st, flags);
}

}  // extern "C"
