#!/usr/bin/env bash
# The packaging tests left out of tests/run_all.sh (run as root on Debian 12, after a build in
# build/ - tests/run_all.sh or the README's cmake commands):
#   package-root  old_glibc: the .deb installed and run in a Debian 11 (glibc 2.31) chroot
#   package-slow  dockerfile_stages: the Dockerfile's build stage as plain shell (~10 min)
# usage: bash tests/package/run_heavy.sh [OLD_ROOT]   (default /work/scratch/bullseye, or
#        $SPECPROBE_OLD_ROOT; made with debootstrap when missing)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=${1:-${SPECPROBE_OLD_ROOT:-/work/scratch/bullseye}}
bash tests/package/make_old_root.sh "$root"
cmake --build build --target specprobe
SPECPROBE_OLD_ROOT=$root ctest --test-dir build --output-on-failure -L 'package-root|package-slow'
