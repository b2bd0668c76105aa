#!/usr/bin/env bash
# Installs everything specprobe's build and tests need on Debian 12 (run as root, or with sudo).
# The CUDA toolkit (nvcc) is optional: without it the probe kernels are not built and probes
# report "skip: built without probe kernels".
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  cmake ninja-build g++ make git \
  libcli11-dev nlohmann-json3-dev libfmt-dev catch2 libyaml-cpp-dev libjemalloc-dev libcurl4-openssl-dev \
  python3 python3-venv python3-jsonschema python3-yaml libxml2-utils \
  clang clang-format libclang-rt-14-dev \
  binutils dpkg-dev file curl lintian >/dev/null
# libcurl4-openssl-dev: curl/curl.h (the binary loads libcurl at run time, for the Hub resolver);
# binutils: objdump for ctest glibc_symbols; dpkg-dev: dpkg-deb and dpkg-shlibdeps for CPack's
# .deb (ctest package_contents); lintian: the .deb has no lintian error (package_contents,
# tools/release/release.sh); curl: the action and GitLab template download releases;
# python3-venv: the venvs of specprobe engines and of the wheel and pre-commit tests;
# python3-yaml: the action / pre-commit / GitLab template tests;
# clang-format: ctest clang_format (.clang-format).
echo "setup: done"
