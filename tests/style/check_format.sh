#!/usr/bin/env bash
# The C++/CUDA sources follow .clang-format. Without arguments: exit 1 and list the files that
# differ (a diff of the first few); --fix rewrites them in place. Uses clang-format-14 (Debian 12's
# clang-format package), else clang-format; a missing clang-format is an error, not a pass.
set -euo pipefail
cd "$(dirname "$0")/../.."
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$cf" ]; then echo "check_format: clang-format not found (apt-get install clang-format)" >&2; exit 2; fi
mapfile -t files < <(git ls-files -- 'src/*.cpp' 'src/*.hpp' 'probes/*.cpp' 'probes/*.hpp' 'kernels/*.cu' \
  'kernels/*.cuh' 'kernels/*.hpp' 'tests/*.cpp' 'tests/*.hpp' 'tests/*.cu' 'bench/*.cpp' 'bench/*.cu' 2>/dev/null ||
  find src probes kernels tests bench -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh')
if [ "${1:-}" = "--fix" ]; then "$cf" -i "${files[@]}"; exit 0; fi
bad=()
for f in "${files[@]}"; do
  if ! "$cf" --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [ ${#bad[@]} -eq 0 ]; then echo "check_format: ${#files[@]} files follow .clang-format"; exit 0; fi
echo "check_format: ${#bad[@]} of ${#files[@]} files differ from .clang-format (fix: bash tests/style/check_format.sh --fix):" >&2
printf '  %s\n' "${bad[@]}" >&2
for f in "${bad[@]:0:3}"; do diff -u "$f" <("$cf" "$f") | head -20 >&2 || true; done
exit 1
