#!/bin/bash
# One device-machine call for the probe work: gpu query, GPU tests (ctest label gpu), the probe
# matrix, the fault/hang isolation demo, time to verdict and the benchmarks vs the HBM roofline
# (each bench measures the copy ceiling in the same run). Logs go to $OUT.
# Usage (from the repo root on the device): bash bench/probe_run_device.sh .dev/probe
set -u
B=$(cd "${1:-.dev/probe}" && pwd)
OUT=${OUT:-/tmp/probe_out}
mkdir -p "$OUT"
SP=$B/specprobe
log() { echo; echo "=== $*"; }
{
log "nvidia-smi"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
log "specprobe gpu"; $SP gpu; echo "rc=$?"
log "ctest -L gpu"; (cd "$B" && ctest -L gpu --output-on-failure --timeout 300); echo "rc=$?"
log "isolation demo: specprobe probe --probe test_fault,test_hang,mqa_logits --next-n 3 --timeout 5"
/usr/bin/time -f "wall %e s" $SP probe --probe test_fault,test_hang,mqa_logits --next-n 3 --timeout 5; echo "rc=$?"
log "time to verdict (plan-sized probes, one child): mqa_logits next_n=4 H=64 + spec_verify + graph_replay k=3 gqa=8 bf16"
/usr/bin/time -f "wall %e s" $SP probe --probe mqa_logits,spec_verify,graph_replay --next-n 4 --gqa 8 --kv-dtype bf16 --k 3 --context 200; echo "rc=$?"
} 2>&1 | tee "$OUT/summary.txt"
{
log "matrix: specprobe probe --probe mqa_logits --next-n 1-8 --heads 32,64"
$SP probe --probe mqa_logits --next-n 1-8 --heads 32,64 --format json > "$OUT/matrix_mqa.json"; echo "rc=$?"
log "matrix: specprobe probe --probe spec_verify,graph_replay --gqa 1,2,4,6,8,16 --kv-dtype bf16,fp8 --k 3"
$SP probe --probe spec_verify,graph_replay --gqa 1,2,4,6,8,16 --kv-dtype bf16,fp8 --k 3 --format json > "$OUT/matrix_sv.json"; echo "rc=$?"
log "extra shapes: mqa H=16,128 D=64 block_kv 32,256; spec_verify D=64,256, k=0,7, block 32,128"
$SP probe --probe mqa_logits --next-n 1,3,8 --heads 16,128 --head-dim 64,128 --block-kv 32,256 --format json > "$OUT/extra_mqa.json"; echo "rc=$?"
$SP probe --probe spec_verify --gqa 6,12 --k 0,7 --sv-head-dim 64,256 --kv-dtype bf16,fp8 --block-size 32,128 --format json > "$OUT/extra_sv.json"; echo "rc=$?"
} 2>&1 | tee -a "$OUT/summary.txt"
python3 - "$OUT" <<'PY' 2>&1 | tee -a "$OUT/summary.txt"
import json, sys, collections
out = sys.argv[1]
for f in ["matrix_mqa.json", "matrix_sv.json", "extra_mqa.json", "extra_sv.json"]:
    try: rs = json.load(open(f"{out}/{f}"))
    except Exception as e: print(f, "unreadable", e); continue
    c = collections.Counter(r["status"] for r in rs)
    print(f"--- {f}: {dict(c)}")
    for r in rs:
        m = r.get("metrics", {}); e = r.get("evidence", {})
        err = m.get("max_rel_err"); nerr = m.get("norm_rel_err")
        print(f'{r["name"]:<75} {r["status"]:<5} maxrel={err if err is None else f"{err:.2e}"} normrel={nerr if nerr is None else f"{nerr:.2e}"} regs={e.get("registers")} occ={e.get("occupancy_blocks_per_sm")} {r.get("reason","")[:120]}')
PY
{
log "bench: mqa_logits B=256 ctx=8192 H=64 D=128 block_kv=64, next_n 1-4 (tiles_per_cta 4, then 2 and 8)"
$SP probe --probe mqa_logits --next-n 1-4 --heads 64 --bench; echo "rc=$?"
$SP probe --probe mqa_logits --next-n 1,2,4 --heads 64 --bench --tiles-per-cta 2; echo "rc=$?"
$SP probe --probe mqa_logits --next-n 1,2,4 --heads 64 --bench --tiles-per-cta 8; echo "rc=$?"
log "bench: mqa_logits next_n 5-8"
$SP probe --probe mqa_logits --next-n 5-8 --heads 64 --bench; echo "rc=$?"
log "bench: spec_verify B=64 ctx=8192 k=3 GQA=8 heads_kv=8 D=128 bf16 (auto splits, then 1 and 4)"
$SP probe --probe spec_verify --gqa 8 --k 3 --kv-dtype bf16 --bench; echo "rc=$?"
$SP probe --probe spec_verify --gqa 8 --k 3 --kv-dtype bf16 --bench --splits 1; echo "rc=$?"
$SP probe --probe spec_verify --gqa 8 --k 3 --kv-dtype bf16,fp8 --bench --splits 4; echo "rc=$?"
} 2>&1 | tee "$OUT/bench.txt"
