#!/usr/bin/env bash
# Makes the old-glibc root that ctest "old_glibc" installs specprobe into:
#   bash tests/package/make_old_root.sh DIR [RELEASE]     (as root; a few minutes, ~200 MB)
# RELEASE: bionic (Ubuntu 18.04, glibc 2.27: below the 2.28 floor, so a pass there proves the
# floor; the default, as Debian 10 and the RHEL 8 family are no longer on mirrors this machine
# reaches), bullseye (Debian 11, glibc 2.31) or buster (Debian 10, glibc 2.28; needs
# SPECPROBE_DEBIAN_MIRROR pointing at an archive that still has it).
# Keep DIR outside the repository (e.g. /work/scratch/bionic). Reuses DIR when it is complete.
set -euo pipefail
dir=${1:?usage: make_old_root.sh DIR [bionic|bullseye|buster]}
release=${2:-bionic}
if [ -x "$dir/usr/bin/dpkg" ] && [ -f "$dir/etc/os-release" ]; then
  echo "make_old_root: $dir already holds $(. "$dir/etc/os-release"; echo "$PRETTY_NAME")"; exit 0
fi
[ "$(id -u)" = 0 ] || { echo "make_old_root: needs root (debootstrap, chroot)"; exit 1; }
if ! command -v debootstrap >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi
case "$release" in
  bionic)
    mirror=${SPECPROBE_UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}
    # Debian has no Ubuntu archive keyring package: check with ubuntu-keyring's key when it is
    # installed, else without signatures (a throwaway test root, never a product input).
    keyring=/usr/share/keyrings/ubuntu-archive-keyring.gpg
    if [ -f "$keyring" ]; then gpg=(--keyring "$keyring"); else gpg=(--no-check-gpg); fi ;;
  bullseye|buster)
    mirror=${SPECPROBE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
    gpg=() ;;
  *) echo "make_old_root: unknown release '$release' (bionic, bullseye, buster)"; exit 2 ;;
esac
debootstrap --variant=minbase "${gpg[@]}" "$release" "$dir" "$mirror"
echo "make_old_root: $(. "$dir/etc/os-release"; echo "$PRETTY_NAME") in $dir"
