#!/usr/bin/env bash
# ctest "dockerfile_stages" (label package-slow): Docker cannot run on the CI machines, so this
# runs the Dockerfile's build stage as plain shell, the way `docker build` would, against a copy
# of the build context, then checks what the runtime stage copies out of it runs.
#   ARG      -> shell variable (default, or an override below; like --build-arg)
#   WORKDIR  -> a directory under the scratch root ($WORK/root + path)
#   COPY     -> copy from the build context (git's files minus .dockerignore)
#   RUN      -> bash -euo pipefail -c, in the WORKDIR, with the ARGs/ENVs exported
#   runtime stage: COPY --from=build is copied into $WORK/image, ENTRYPOINT is run from there.
# apt-get steps run only as root (SPECPROBE_DOCKERFILE_APT=0 skips them, =1 forces them): on a
# Debian 12 host they install the build stage's packages into the host, as they would in the
# image. A full build of the binary: about 10 minutes on 2 cores.
# usage: dockerfile_stages_test.sh SOURCE_DIR [WORK_DIR]
set -euo pipefail
src=$(cd "$1" && pwd)
work=${2:-$(mktemp -d /tmp/specprobe-dockerfile.XXXXXX)}
rm -rf "$work/root" "$work/context" "$work/image"
root="$work/root" ctx="$work/context" image="$work/image"
mkdir -p "$root" "$ctx" "$image"
t0=$(date +%s)
apt_mode=${SPECPROBE_DOCKERFILE_APT:-auto}
if [ "$apt_mode" = auto ]; then apt_mode=$([ "$(id -u)" = 0 ] && echo 1 || echo 0); fi

# --- the build context: the files a checkout has, minus .dockerignore's patterns -------------
mapfile -t ignore < <(grep -v '^\s*#' "$src/.dockerignore" | sed '/^\s*$/d; s:/$::')
ignored() {
  local p=$1 pat
  for pat in "${ignore[@]}"; do
    # shellcheck disable=SC2053  # glob match on purpose
    [[ $p == $pat || $p == $pat/* ]] && return 0
    # shellcheck disable=SC2053
    [[ $pat == '**/'* && ( $p == ${pat#\*\*/} || $p == */${pat#\*\*/} || $p == */${pat#\*\*/}/* ) ]] && return 0
  done
  return 1
}
n=0
while IFS= read -r -d '' f; do
  [ -e "$src/$f" ] || continue   # deleted in the work tree
  ignored "$f" && continue
  mkdir -p "$ctx/$(dirname "$f")"
  cp -a "$src/$f" "$ctx/$f"
  n=$((n + 1))
done < <(git -C "$src" ls-files -co --exclude-standard -z)
echo "== context: $n files"

# --- parse: join continuation lines, drop comments ------------------------------------------
mapfile -t instr < <(awk '
  /^[ \t]*#/ && cont == "" { next }
  { line = $0
    if (line ~ /\\[ \t]*$/) { sub(/\\[ \t]*$/, "", line); cont = cont line " "; next }
    print cont line; cont = "" }' "$src/Dockerfile" | sed '/^\s*$/d')

declare -A defaults=()          # global ARG defaults (before the first FROM)
declare -A overrides=(          # like --build-arg
  [PREFIX]="$root/opt/specprobe"
  [SPECPROBE_GIT_SHA]="$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)")
stage="" stage_index=0 cwd="$root" entry=""
declare -A env=()

expand() {  # expand ${VAR} / $VAR with the current stage's ARG/ENV values
  local s=$1 k
  for k in "${!env[@]}"; do s=${s//"\${$k}"/${env[$k]}}; s=${s//"\$$k"/${env[$k]}}; done
  printf '%s' "$s"
}
in_root() { case $1 in "$root"/*) printf '%s' "$1" ;; /*) printf '%s' "$root$1" ;; *) printf '%s' "$cwd/$1" ;; esac; }

for line in "${instr[@]}"; do
  read -r op rest <<<"$line"
  op=${op^^}
  case $op in
    ARG)
      name=${rest%%=*}; val=""
      [[ $rest == *=* ]] && val=${rest#*=}
      if [ -z "$stage" ]; then defaults[$name]=$val; continue; fi
      [ -z "$val" ] && val=${defaults[$name]:-}
      [ -n "${overrides[$name]+x}" ] && val=${overrides[$name]}
      env[$name]=$val ;;
    ENV)
      name=${rest%%[= ]*}; val=${rest#*[= ]}; env[$name]=$(expand "$val") ;;
    FROM)
      stage_index=$((stage_index + 1))
      stage=$(sed -nE 's/.*[[:space:]][Aa][Ss][[:space:]]+([^[:space:]]+).*/\1/p' <<<"$rest")
      [ -n "$stage" ] || stage="stage$stage_index"
      env=(); cwd="$root"
      base=$(read -r b _ <<<"$rest"; echo "$b")
      for k in "${!defaults[@]}"; do base=${base//"\${$k}"/${overrides[$k]:-${defaults[$k]}}}; done
      echo "== stage $stage (FROM $base)" ;;
    WORKDIR)
      cwd=$(in_root "$(expand "$rest")"); mkdir -p "$cwd" ;;
    COPY)
      if [[ $rest == --from=* ]]; then
        read -r from s d <<<"$rest"
        from=${from#--from=}
        [ "$from" = build ] || { echo "FAIL: COPY --from=$from: only the build stage is emulated"; exit 1; }
        s=$(in_root "$(expand "$s")"); d="$image$(expand "$d")"
        [ -e "$s" ] || { echo "FAIL: $line: $s was not produced by the build stage"; exit 1; }
        mkdir -p "$(dirname "$d")"; cp -a "$s" "$d"
        echo "   COPY --from=build -> ${d#"$image"} ($(du -h "$d" | cut -f1))"
      else
        read -r s d <<<"$rest"
        [ "$s" = . ] || { echo "FAIL: COPY $s: only 'COPY . DIR' is emulated"; exit 1; }
        d=$(in_root "$(expand "$d")"); mkdir -p "$d"; cp -a "$ctx/." "$d/"
      fi ;;
    RUN)
      if [ "$stage" != build ]; then
        # The runtime stage installs its base's packages (libcurl, CA certificates) and nothing
        # else: not emulated here (the image's files are what COPY --from=build brings).
        if [[ $rest == *apt-get* ]]; then echo "   (runtime packages, not emulated: $rest)"; continue; fi
        echo "FAIL: RUN in stage $stage: the runtime stage must only copy and install packages"; exit 1
      fi
      if [[ $rest == *apt-get* && $apt_mode != 1 ]]; then
        echo "   (skipped, not root: $rest)"; continue
      fi
      echo "   RUN $rest"
      t=$(date +%s)
      exports=""
      for k in "${!env[@]}"; do exports+="export $k=$(printf '%q' "${env[$k]}"); "; done
      (cd "$cwd" && bash -euo pipefail -c "$exports$rest")
      echo "   ... $(( $(date +%s) - t )) s" ;;
    ENTRYPOINT)
      entry=$(sed -E 's/^\[ *"([^"]+)".*/\1/' <<<"$rest") ;;
    CMD|LABEL|USER|EXPOSE|STOPSIGNAL|HEALTHCHECK|SHELL|VOLUME|ONBUILD) ;;
    *) echo "FAIL: unknown Dockerfile instruction: $op"; exit 1 ;;
  esac
done

# --- the runtime image: only the binary, and it runs ----------------------------------------
echo "== image contents:"; (cd "$image" && find . -type f | sort | sed 's/^/   /')
[ -n "$entry" ] || { echo "FAIL: no ENTRYPOINT"; exit 1; }
bin="$image$entry"
[ -x "$bin" ] || { echo "FAIL: ENTRYPOINT $entry is not in the image"; exit 1; }
"$bin" --version
ex="$src/docs/examples"
set +e
"$bin" check "$ex/seeds/dsv4-mtp.yaml" --model "$ex/checkpoints/deepseek-v4-flash" --gpu H100 --lib vllm=0.25.1 --quiet >"$work/check.txt" 2>&1
rc=$?
set -e
tail -5 "$work/check.txt"
if [ $rc -gt 1 ]; then echo "FAIL: specprobe check exited $rc"; exit 1; fi
bash "$src/tests/package/check_glibc_symbols.sh" "$bin"
echo "dockerfile_stages: ok ($(( $(date +%s) - t0 )) s)"
