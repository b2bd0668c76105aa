#!/usr/bin/env bash
# ctests "install_tree" and "package_contents" (label package).
#   install BUILD SRC: `cmake --install BUILD --prefix TMP` installs the binary, man page,
#                      completions, docs and report schema, and the installed binary runs.
#   package BUILD SRC: CPack writes the .deb and the .tar.gz; `dpkg-deb -c` / `tar -tz` list the
#                      same files under /usr and specprobe-<v>-linux-<arch>/, the .deb depends
#                      on libc6 only, at a version <= 2.28; lintian (when installed) reports
#                      no error on the .deb.
set -euo pipefail
mode=$1 build=$(cd "$2" && pwd) src=$(cd "$3" && pwd)
tmp=$(mktemp -d /tmp/specprobe-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
nrules=$(find "$src/docs/rules" -maxdepth 1 -name 'SP*.md' | wc -l)
nschema=$(find "$src/docs/schema" -maxdepth 1 -name '*.json' | wc -l)

# The files every install must have, relative to the prefix.
expected=(
  bin/specprobe
  share/man/man1/specprobe.1.gz
  share/doc/specprobe/copyright
  share/doc/specprobe/changelog.gz
  share/bash-completion/completions/specprobe
  share/zsh/site-functions/_specprobe
  share/zsh/vendor-completions/_specprobe
  share/fish/vendor_completions.d/specprobe.fish
  share/specprobe/schema/report-1.json
  share/doc/specprobe/LICENSE
  share/doc/specprobe/README.md
  share/doc/specprobe/install.md
  share/doc/specprobe/ci.md
  share/doc/specprobe/rules/SP3001.md
  share/doc/specprobe/examples/seeds/dsv4-mtp.yaml
  share/doc/specprobe/examples/checkpoints/deepseek-v4-flash/config.json
)
check_list() {  # $1: what, $2: file with one path per line, relative to the prefix
  local what=$1 list=$2 f n
  for f in "${expected[@]}"; do
    grep -qxF "$f" "$list" || { echo "FAIL: $what lacks $f"; fail=1; }
  done
  n=$(grep -c '^share/doc/specprobe/rules/SP.*\.md$' "$list" || true)
  [ "$n" = "$nrules" ] || { echo "FAIL: $what has $n rule pages, docs/rules has $nrules"; fail=1; }
  n=$(grep -c '^share/specprobe/schema/.*\.json$' "$list" || true)
  [ "$n" = "$nschema" ] || { echo "FAIL: $what has $n schema files, docs/schema has $nschema"; fail=1; }
  if grep -Eq '(^|/)(tests?|bench|kernels|src)/|\.cpp$|_tests$' "$list"; then
    echo "FAIL: $what ships build or test files:"; grep -E '(^|/)(tests?|bench|kernels|src)/|\.cpp$|_tests$' "$list"; fail=1
  fi
}

case $mode in
install)
  cmake --install "$build" --prefix "$tmp/p" >"$tmp/install.log"
  (cd "$tmp/p" && find . -type f -o -type l | sed 's:^\./::' | sort) >"$tmp/list"
  echo "installed $(wc -l <"$tmp/list") files:"
  grep -v '^share/doc/specprobe/rules/SP' "$tmp/list" | sed 's/^/  /'
  echo "  (+ $(grep -c '^share/doc/specprobe/rules/SP' "$tmp/list") rule pages under share/doc/specprobe/rules/)"
  check_list "install tree" "$tmp/list"
  "$tmp/p/bin/specprobe" --version
  ex="$tmp/p/share/doc/specprobe/examples"
  set +e
  "$tmp/p/bin/specprobe" check "$ex/seeds/dsv4-mtp.yaml" --model "$ex/checkpoints/deepseek-v4-flash" \
    --gpu H100 --lib vllm=0.25.1 --quiet >"$tmp/check.txt" 2>&1
  rc=$?
  set -e
  [ $rc -le 1 ] || { echo "FAIL: installed specprobe check exited $rc"; cat "$tmp/check.txt"; fail=1; }
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/p/share/specprobe/schema/report-1.json" ||
    { echo "FAIL: installed schema is not JSON"; fail=1; }
  ;;
package)
  command -v dpkg-deb >/dev/null || { echo "dpkg-deb not found (apt-get install dpkg-dev)"; exit 1; }
  (cd "$tmp" && cpack --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1) ||
    { cat "$tmp/cpack.log"; echo "FAIL: cpack"; exit 1; }
  deb=$(ls "$tmp"/out/*.deb) tgz=$(ls "$tmp"/out/*.tar.gz)
  echo "packages: $(basename "$deb") ($(du -h "$deb" | cut -f1)), $(basename "$tgz") ($(du -h "$tgz" | cut -f1))"
  dpkg-deb -c "$deb" | awk '{print $NF}' | grep -v '/$' | sed 's:^\./usr/::' | sort >"$tmp/deb.list"
  check_list ".deb" "$tmp/deb.list"
  if grep -v '^\./usr/' <(dpkg-deb -c "$deb" | awk '{print $NF}') | grep -qv '^\./$'; then
    echo "FAIL: .deb installs outside /usr"; fail=1
  fi
  dpkg-deb -f "$deb" Package Version Architecture Depends Installed-Size | sed 's/^/  /'
  depends=$(dpkg-deb -f "$deb" Depends)
  if [[ ! $depends =~ ^libc6\ \(\>=\ ([0-9.]+)\)$ ]]; then
    echo "FAIL: Depends should be libc6 only, is: $depends"; fail=1
  elif [ "$(printf '%s\n2.28\n' "${BASH_REMATCH[1]}" | sort -V | tail -1)" != 2.28 ]; then
    echo "FAIL: Depends needs libc6 ${BASH_REMATCH[1]} > 2.28"; fail=1
  fi
  if command -v lintian >/dev/null; then
    lint=$(lintian --allow-root --tag-display-limit 0 "$deb" 2>&1 || true)
    echo "lintian: $(grep -c '^E:' <<<"$lint" || true) errors, $(grep -c '^W:' <<<"$lint" || true) warnings"
    [ -z "$lint" ] || sed 's/^/  /' <<<"$lint"
    if grep -q '^E:' <<<"$lint"; then echo "FAIL: lintian reports errors on the .deb"; fail=1; fi
  else
    echo "lintian not installed: the .deb is not linted (apt-get install lintian)"
  fi
  top=$(basename "$tgz" .tar.gz)
  [[ $top =~ ^specprobe-[0-9][0-9.]*-linux-(x86_64|aarch64)$ ]] ||
    { echo "FAIL: tarball name $top is not specprobe-<version>-linux-<arch>"; fail=1; }
  tar -tzf "$tgz" | grep -v '/$' | sed "s:^$top/::" | sort >"$tmp/tgz.list"
  check_list ".tar.gz" "$tmp/tgz.list"
  if grep -v "^$top/" <(tar -tzf "$tgz") | grep -q .; then echo "FAIL: tarball has files outside $top/"; fail=1; fi
  mkdir "$tmp/x" && tar -xzf "$tgz" -C "$tmp/x"
  "$tmp/x/$top/bin/specprobe" --version
  ;;
*) echo "usage: $0 install|package BUILD SRC"; exit 2 ;;
esac
[ $fail = 0 ] && echo "$mode: ok"
exit $fail
