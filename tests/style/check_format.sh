#!/usr/bin/env bash
# The C++/CUDA sources follow .clang-format. Without arguments: exit 1 and list the files that
# differ (a diff of the first few); --fix rewrites them in place (all files, baseline included);
# --baseline rewrites tests/style/format_baseline.txt from the files that differ now.
# Uses clang-format-14 (Debian 12's clang-format package), else clang-format; a missing
# clang-format is an error, not a pass.
#
# The baseline lists files exempt from the check: it held the files written before .clang-format
# existed until the whole tree was reformatted (one `--fix` commit, 2026-11-29) and is empty now;
# it stays for a vendored or generated file that must keep its own layout. A baseline entry that
# no longer exists is an error; one that now conforms is listed to be dropped (a ratchet, as
# clang-tidy's and hadolint's baselines are).
set -euo pipefail
cd "$(dirname "$0")/../.."
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$cf" ]; then echo "check_format: clang-format not found (apt-get install clang-format)" >&2; exit 2; fi
baseline=tests/style/format_baseline.txt
mapfile -t files < <(git ls-files -- 'src/*.cpp' 'src/*.hpp' 'probes/*.cpp' 'probes/*.hpp' 'kernels/*.cu' \
  'kernels/*.cuh' 'kernels/*.hpp' 'tests/*.cpp' 'tests/*.hpp' 'tests/*.cu' 'bench/*.cpp' 'bench/*.cu' 2>/dev/null ||
  find src probes kernels tests bench -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh')
if [ "${1:-}" = "--fix" ]; then "$cf" -i "${files[@]}"; exit 0; fi
differs() { ! "$cf" --dry-run --Werror "$1" >/dev/null 2>&1; }
if [ "${1:-}" = "--baseline" ]; then
  { echo "# Files not yet reformatted to .clang-format (tests/style/check_format.sh skips them)."
    for f in "${files[@]}"; do if differs "$f"; then echo "$f"; fi; done; } > "$baseline"
  echo "check_format: $(grep -vc '^#' "$baseline") files in $baseline"; exit 0
fi
declare -A skip=()
if [ -f "$baseline" ]; then
  while IFS= read -r f; do [ -z "$f" ] || [ "${f:0:1}" = "#" ] || skip[$f]=1; done < "$baseline"
fi
declare -A tracked=()
for f in "${files[@]}"; do tracked[$f]=1; done
gone=()
for f in "${!skip[@]}"; do [ -n "${tracked[$f]:-}" ] || gone+=("$f"); done
bad=() clean_now=()
for f in "${files[@]}"; do
  if [ -n "${skip[$f]:-}" ]; then
    differs "$f" || clean_now+=("$f")
  elif differs "$f"; then
    bad+=("$f")
  fi
done
status=0
if [ ${#gone[@]} -gt 0 ]; then
  echo "check_format: $baseline names files that are not in the tree (remove them):" >&2
  printf '  %s\n' "${gone[@]}" >&2
  status=1
fi
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: ${#bad[@]} of $((${#files[@]} - ${#skip[@]})) checked files differ from .clang-format (fix: clang-format -i FILE):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  for f in "${bad[@]:0:3}"; do diff -u "$f" <("$cf" "$f") | head -20 >&2 || true; done
  status=1
fi
[ ${#clean_now[@]} -eq 0 ] || echo "check_format: ${#clean_now[@]} baseline files follow .clang-format now; drop them from $baseline: ${clean_now[*]}"
[ $status -ne 0 ] || echo "check_format: $((${#files[@]} - ${#skip[@]})) files follow .clang-format (${#skip[@]} in the baseline, not checked)"
exit $status
