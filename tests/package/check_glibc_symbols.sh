#!/usr/bin/env bash
# ctest "glibc_symbols" (label package): the release binary must run on glibc 2.28 (RHEL/Rocky/
# Alma 8, Debian 10) and later. Fails when `objdump -T BINARY` shows a GLIBC_ symbol version above
# MAX (default 2.28), any GLIBCXX_/CXXABI_ version (libstdc++ must be linked statically), or a
# NEEDED library other than glibc's own (libc, libm, libpthread, libdl, ld-linux).
# usage: check_glibc_symbols.sh BINARY [MAX]
set -euo pipefail
bin=$1
max=${2:-2.28}
command -v objdump >/dev/null || { echo "objdump not found (apt-get install binutils)"; exit 1; }
dyn=$(objdump -T "$bin")
fail=0

versions=$(grep -o 'GLIBC_[0-9][0-9.]*' <<<"$dyn" | sed 's/GLIBC_//' | sort -uV)
echo "GLIBC versions referenced: $(tr '\n' ' ' <<<"$versions")"
newest=$(tail -1 <<<"$versions")
echo "newest: GLIBC_$newest (limit GLIBC_$max)"
while read -r v; do
  [ -n "$v" ] || continue
  if [ "$(printf '%s\n%s\n' "$v" "$max" | sort -V | tail -1)" != "$max" ]; then
    echo "FAIL: symbols needing GLIBC_$v > $max:"
    grep -E "GLIBC_${v//./\\.}[) ]" <<<"$dyn" | awk '{print "  " $NF}'
    fail=1
  fi
done <<<"$versions"

if grep -Eq 'GLIBCXX_|CXXABI_' <<<"$dyn"; then
  echo "FAIL: libstdc++ symbols are dynamic (link it statically):"
  grep -E 'GLIBCXX_|CXXABI_' <<<"$dyn" | awk '{print "  " $(NF-1) " " $NF}' | head -20
  fail=1
fi

needed=$(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}')
echo "NEEDED: $(tr '\n' ' ' <<<"$needed")"
while read -r lib; do
  case "$lib" in
    libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|librt.so.1|ld-linux-*.so.*) ;;
    *) echo "FAIL: NEEDED $lib is not part of glibc"; fail=1 ;;
  esac
done <<<"$needed"

if [ $fail = 0 ]; then echo "glibc_symbols: ok"; fi
exit $fail
