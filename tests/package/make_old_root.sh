#!/usr/bin/env bash
# Makes the Debian 11 (bullseye, glibc 2.31) root that ctest "old_glibc" installs the .deb into:
#   bash tests/package/make_old_root.sh DIR     (as root; about 3 minutes, ~215 MB)
# Keep DIR outside the repository (e.g. /work/scratch/bullseye). Reuses DIR when it is complete.
set -euo pipefail
dir=${1:?usage: make_old_root.sh DIR}
mirror=${SPECPROBE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ -x "$dir/usr/bin/dpkg" ] && [ -f "$dir/etc/debian_version" ]; then
  echo "make_old_root: $dir already holds Debian $(cat "$dir/etc/debian_version")"; exit 0
fi
[ "$(id -u)" = 0 ] || { echo "make_old_root: needs root (debootstrap, chroot)"; exit 1; }
if ! command -v debootstrap >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi
debootstrap --variant=minbase bullseye "$dir" "$mirror"
echo "make_old_root: Debian $(cat "$dir/etc/debian_version") in $dir"
