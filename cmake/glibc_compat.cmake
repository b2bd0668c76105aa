# Old-glibc compatibility of the specprobe executable (src/common/glibc_compat.cpp explains it):
# the binary is built on Debian 12 (glibc 2.36) but must run on glibc 2.28+ (RHEL/Rocky/Alma 8,
# Debian 10+, Ubuntu 18.10+). The shim defines the few symbols newer glibc added (arc4random,
# _dl_find_object, __libc_single_threaded) and the link wraps the ones whose default version
# moved (pthread/dl functions and __libc_start_main in 2.34, the stat family in 2.33, exp, pow and log in 2.29) onto their
# base versions. Only the executable gets it; sanitizer and fuzz builds (whose runtimes intercept
# pthread_create and friends) do not. ctest "glibc_symbols" (label package) checks the result.
option(SPECPROBE_GLIBC_COMPAT "Make the specprobe binary run on glibc 2.28+" ON)
set(SPECPROBE_GLIBC_COMPAT_ACTIVE OFF)
if(SPECPROBE_GLIBC_COMPAT AND CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT SPECPROBE_SANITIZE
   AND NOT SPECPROBE_FUZZ AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|aarch64|arm64)$")
  include(CheckCXXSourceCompiles)
  check_cxx_source_compiles("#include <features.h>\n#ifndef __GLIBC__\n#error no glibc\n#endif\nint main(){}"
    SPECPROBE_HAVE_GLIBC)
  if(SPECPROBE_HAVE_GLIBC)
    set(SPECPROBE_GLIBC_COMPAT_ACTIVE ON)
  endif()
endif()

if(SPECPROBE_GLIBC_COMPAT_ACTIVE)
  target_sources(specprobe PRIVATE ${CMAKE_SOURCE_DIR}/src/common/glibc_compat.cpp)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/src/common/glibc_compat.cpp PROPERTIES
    SKIP_PRECOMPILE_HEADERS ON)
  set(_specprobe_wrapped
    __libc_start_main
    pthread_create pthread_join pthread_detach pthread_once pthread_key_create __pthread_key_create
    pthread_key_delete pthread_getspecific pthread_setspecific
    pthread_rwlock_rdlock pthread_rwlock_wrlock pthread_rwlock_unlock pthread_sigmask
    pthread_mutexattr_init pthread_mutexattr_destroy pthread_mutexattr_settype pthread_mutex_trylock
    pthread_setname_np pthread_getname_np
    dlopen dlsym dlclose dlerror dladdr
    stat lstat fstat stat64 lstat64 fstat64 fstatat fstatat64
    exp pow log)
  foreach(sym ${_specprobe_wrapped})
    target_link_options(specprobe PRIVATE "LINKER:--wrap=${sym}")
  endforeach()
  # On glibc < 2.34 the base versions of the pthread and dl functions live in libpthread.so.0
  # and libdl.so.2 (stubs on newer glibc), so the executable must NEED them.
  target_link_options(specprobe PRIVATE
    "LINKER:--push-state,--no-as-needed,-l:libpthread.so.0,-l:libdl.so.2,--pop-state")
  message(STATUS "specprobe: glibc compatibility shim on (binary runs on glibc 2.28+)")
endif()
