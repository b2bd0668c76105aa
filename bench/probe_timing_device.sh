#!/bin/bash
# Where the time to verdict goes with the plan's probes on a GPU (issue 49; docs/perf/startup.md):
# `check` cold with probes auto and off, the GPU query alone, and the probe child on the plan's
# specs (all together, each alone) so that the fixed cost (process, CUDA context, module load) and
# each probe's own time can be told apart. Prints figures; asserts nothing.
# Usage (repo root, on the GPU host): bash bench/probe_timing_device.sh SPECPROBE_BINARY [RUNS]
set -u
SP=$(readlink -f "${1:?specprobe binary}")
RUNS=${2:-3}
OUT=${OUT:-/tmp/probe_timing}
mkdir -p "$OUT"
EX=(check docs/examples/seeds/dsv4-mtp.yaml --model docs/examples/checkpoints/deepseek-v4-flash --lib vllm=0.25.1)
t() {  # wall time of one run, from bash's clock (no bc, no python on the timed path)
  local s=$EPOCHREALTIME; "$@" > /dev/null 2>&1; local rc=$? e=$EPOCHREALTIME
  printf "%d ms (rc %d)\n" $(( (${e/./} - ${s/./}) / 1000 )) "$rc"
}
echo "== nvidia-smi"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== specprobe gpu (driver query alone)"; for i in $(seq "$RUNS"); do t "$SP" gpu; done
echo "== check, probes off"; for i in $(seq "$RUNS"); do t "$SP" "${EX[@]}" --probes off; done
echo "== check, probes auto (the plan's probes)"; for i in $(seq "$RUNS"); do t "$SP" "${EX[@]}"; done
"$SP" "${EX[@]}" --format json -o "$OUT/report.json" > /dev/null 2>&1
python3 - "$OUT/report.json" "$OUT" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
specs = [p.get("spec") for p in rep.get("probes", []) if isinstance(p, dict) and p.get("spec")]
json.dump(specs, open(sys.argv[2] + "/specs.json", "w"))
print(f"== the plan's probes: {len(specs)}")
for p in rep.get("probes", []):
    print("  ", p.get("probe"), p.get("status"), json.dumps(p.get("spec"))[:160])
PY
ALL=$(cat "$OUT/specs.json")
echo "== probe child, every spec in one process"; for i in $(seq "$RUNS"); do t "$SP" __probe-child --specs "$ALL"; done
n=$(python3 -c "import json;print(len(json.load(open('$OUT/specs.json'))))")
for j in $(seq 0 $((n - 1))); do
  ONE=$(python3 -c "import json;print(json.dumps([json.load(open('$OUT/specs.json'))[$j]]))")
  echo "== probe child, spec $j alone: $(echo "$ONE" | cut -c1-120)"
  for i in $(seq "$RUNS"); do t "$SP" __probe-child --specs "$ONE"; done
done
echo "== probe child, no spec (process start only)"; for i in $(seq "$RUNS"); do t "$SP" __probe-child --specs '[]'; done
