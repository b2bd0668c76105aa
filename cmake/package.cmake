# CPack: `cpack --config build/CPackConfig.cmake` (or `cmake --build build --target package`)
# writes build/packages/specprobe_<version>_<arch>.deb and
# build/packages/specprobe-<version>-linux-<arch>.tar.gz (top directory of the same name, with
# bin/ and share/ inside: the release artifact that action.yml downloads).
set(CPACK_PACKAGE_NAME specprobe)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "specprobe")
set(CPACK_PACKAGE_CONTACT "specprobe maintainers <specprobe@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "pre-flight checker for speculative-decoding LLM serving configurations")
# The .deb's extended description: lines of at most 80 columns (lintian).
set(CPACK_PACKAGE_DESCRIPTION
  "specprobe tells, before an LLM server starts, whether a speculative-decoding
serving configuration (vLLM, SGLang) will work on this GPU with this checkpoint
and these libraries, why not, and the nearest configuration that works. One
binary; runs with and without a GPU.")
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_STRIP_FILES ON)
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_SOURCE_GENERATOR "")

string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" _specprobe_arch)
if(_specprobe_arch STREQUAL "amd64")
  set(_specprobe_arch x86_64)
elseif(_specprobe_arch STREQUAL "arm64")
  set(_specprobe_arch aarch64)
endif()
set(CPACK_PACKAGE_FILE_NAME "specprobe-${PROJECT_VERSION}-linux-${_specprobe_arch}")
set(CPACK_ARCHIVE_FILE_NAME "${CPACK_PACKAGE_FILE_NAME}")

# .deb: installs under /usr and depends on libc6 only (libstdc++, libgcc, yaml-cpp and jemalloc are linked
# statically). With the glibc shim, on glibc 2.28, the floor that ctest glibc_symbols enforces and
# ctest old_glibc runs on: dpkg-shlibdeps would say 2.34, because the executable NEEDs
# libpthread.so.0 and libdl.so.2, stubs on the build machine's glibc whose symbols files start at
# 2.34. Without the shim, dpkg-shlibdeps computes it.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
if(SPECPROBE_GLIBC_COMPAT_ACTIVE)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.28)")
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3")
# libcurl is loaded at run time (dlopen) to read model metadata from the Hugging Face Hub; without
# it the rest works and models named by Hub id stay unknown, said so in the report.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libcurl4, ca-certificates")

include(CPack)
