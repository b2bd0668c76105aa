#!/bin/bash
# One device-machine call for the probe kernels: gpu query, GPU tests (ctest label gpu), the probe
# correctness matrices, the fault/hang isolation demo (through the GPU test binary), time to
# verdict, and the benchmarks vs the HBM roofline (each bench measures the copy ceiling in the same
# run). With DG=<dir of an importable deep_gemm> in the environment, DeepGEMM's own paged MQA logits
# kernel is timed in the same run at the same shape (bench/deepgemm_mqa_bench.py).
# DG_PRELOAD is put in LD_PRELOAD for that step only. On the lent machines' image (torch 2.11,
# Python 3.12) DeepGEMM 2.6.1 built from source segfaults in its JIT's std::regex (a locale facet
# call lands in the extension's own copy) unless the system libstdc++ is preloaded:
# DG_PRELOAD=/usr/lib/x86_64-linux-gnu/libstdc++.so.6. Logs go to $OUT; the tables come last.
# Usage (from the repo root on the device): [DG=dir [DG_WAIT=file] DG_PRELOAD=lib] bash bench/probe_run_device.sh BUILD_DIR
# BUILD_DIR: a build dir or its copy by bench/pack_device_build.sh.
set -u
B=$(cd "${1:-.dev/probe}" && pwd)
OUT=${OUT:-/tmp/probe_out}
mkdir -p "$OUT"
SP=$B/specprobe
TB=$B/tests/specprobe_gpu_tests  # the GPU test binary: the only one that knows test_fault / test_hang
# A build dir copied elsewhere (bench/pack_device_build.sh): ctest's files still name the build and
# source dirs they were generated in; point them at where the copy and this checkout are now.
built=$(sed -n 's/^# Build directory: //p' "$B/CTestTestfile.cmake" 2>/dev/null)
srcdir=$(sed -n 's/^# Source directory: //p' "$B/CTestTestfile.cmake" 2>/dev/null)
if [ -n "$built" ] && [ -n "$srcdir" ] && [ "$built" != "$B" ]; then
  find "$B" -name '*.cmake' -exec sed -i "s#$built#$B#g; s#$srcdir#$PWD#g" {} +
fi
log() { echo; echo "=== $*"; }
ttv() {  # time to verdict: the plan-sized probes in one child, three cold processes
  for i in 1 2 3; do
    /usr/bin/time -f "wall %e s" "$1" probe --probe mqa_logits,spec_verify,graph_replay --next-n 4 --gqa 8 --kv-dtype bf16 --k 3 --context 200 > /dev/null; echo "rc=$?"
  done
}
{
log "nvidia-smi"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
log "ldd"; ldd $SP | grep -v "linux-vdso\|ld-linux" | awk '{print $1}' | tr '\n' ' '; echo
log "specprobe gpu"; $SP gpu; echo "rc=$?"
log "time to verdict: specprobe probe --probe mqa_logits,spec_verify,graph_replay --next-n 4 --gqa 8 --kv-dtype bf16 --k 3 --context 200"
ttv $SP
$SP probe --probe mqa_logits,spec_verify,graph_replay --next-n 4 --gqa 8 --kv-dtype bf16 --k 3 --context 200
log "ctest -L gpu"; (cd "$B" && ctest -L gpu --output-on-failure --timeout 300); echo "rc=$?"
# The test probes (a faulting and a hanging kernel) live in the GPU test binary only, which is also
# a `specprobe probe` front end whose children re-execute it (tests/support/test_main.hpp).
log "isolation demo: specprobe_gpu_tests probe --probe test_fault,test_hang,mqa_logits --next-n 3 --timeout 5"
/usr/bin/time -f "wall %e s" $TB probe --probe test_fault,test_hang,mqa_logits --next-n 3 --timeout 5; echo "rc=$?"
} 2>&1 | tee "$OUT/summary.txt"
{
log "matrix: specprobe probe --probe mqa_logits --next-n 1-8 --heads 32,64"
$SP probe --probe mqa_logits --next-n 1-8 --heads 32,64 --format json > "$OUT/matrix_mqa.json"; echo "rc=$?"
log "matrix, two-CTA sm_90a kernel forced: SPECPROBE_MQA_KERNEL=tma specprobe probe --probe mqa_logits --next-n 1-8 --heads 64 --batch 48 --context 1500"
SPECPROBE_MQA_KERNEL=tma $SP probe --probe mqa_logits --next-n 1-8 --heads 64 --batch 48 --context 1500 --format json > "$OUT/matrix_mqa_tma.json"; echo "rc=$?"
log "matrix, mma.sync kernel forced: SPECPROBE_MQA_KERNEL=mma specprobe probe --probe mqa_logits --next-n 1-8 --heads 32,64"
SPECPROBE_MQA_KERNEL=mma $SP probe --probe mqa_logits --next-n 1-8 --heads 32,64 --format json > "$OUT/matrix_mqa_mma.json"; echo "rc=$?"
log "matrix: specprobe probe --probe spec_verify,graph_replay --gqa 1,2,4,6,8,16 --kv-dtype bf16,fp8 --k 3"
$SP probe --probe spec_verify,graph_replay --gqa 1,2,4,6,8,16 --kv-dtype bf16,fp8 --k 3 --format json > "$OUT/matrix_sv.json"; echo "rc=$?"
log "matrix, portable cp.async spec-verify kernel forced: SPECPROBE_SV_KERNEL=cp_async specprobe probe --probe spec_verify,graph_replay --gqa 1,2,4,6,8,16 --kv-dtype bf16 --k 3"
SPECPROBE_SV_KERNEL=cp_async $SP probe --probe spec_verify,graph_replay --gqa 1,2,4,6,8,16 --kv-dtype bf16 --k 3 --format json > "$OUT/matrix_sv_cpasync.json"; echo "rc=$?"
log "medium mqa (persistent CTAs cross request boundaries; every row checked): --batch 48 --context 1500 next_n 1-8, H 64,128"
$SP probe --probe mqa_logits --next-n 1-8 --heads 64,128 --batch 48 --context 1500 --format json > "$OUT/medium_mqa.json"; echo "rc=$?"
log "extra shapes: mqa H=16,128 D=64,128 block_kv 32,256 next_n 1,3,8; spec_verify D=64,256, k=0,7, block 32,128"
$SP probe --probe mqa_logits --next-n 1,3,8 --heads 16,128 --head-dim 64,128 --block-kv 32,256 --format json > "$OUT/extra_mqa.json"; echo "rc=$?"
$SP probe --probe spec_verify --gqa 6,12 --k 0,7 --sv-head-dim 64,256 --kv-dtype bf16,fp8 --block-size 32,128 --format json > "$OUT/extra_sv.json"; echo "rc=$?"
log "matrix: mla_verify, DeepSeek-V3 rows (512 + 64, dense) and V4 rows (448 + 64, output 512; dense and top-k 512)"
$SP probe --probe mla_verify --mla-heads 16,128 --k 1,3,7 --kv-dtype bf16,fp8 --block-size 1,64 --format json > "$OUT/matrix_mla_v3.json"; echo "rc=$?"
$SP probe --probe mla_verify --mla-heads 16,64 --mla-latent-dim 448 --mla-v-dim 512 --mla-topk 0,512 --k 1,3,7 --kv-dtype bf16,fp8 --block-size 1,64 --format json > "$OUT/matrix_mla_v4.json"; echo "rc=$?"
} 2>&1 | tee -a "$OUT/summary.txt"
python3 - "$OUT" <<'PY' 2>&1 | tee -a "$OUT/summary.txt"
import json, sys, collections
out = sys.argv[1]
for f in ["matrix_mqa.json", "matrix_mqa_tma.json", "matrix_mqa_mma.json", "medium_mqa.json", "matrix_sv.json", "matrix_sv_cpasync.json", "extra_mqa.json", "extra_sv.json", "matrix_mla_v3.json", "matrix_mla_v4.json"]:
    try: rs = json.load(open(f"{out}/{f}"))
    except Exception as e: print(f, "unreadable", e); continue
    c = collections.Counter(r["status"] for r in rs)
    print(f"--- {f}: {dict(c)}")
    for r in rs:
        m = r.get("metrics", {}); e = r.get("evidence", {})
        err = m.get("max_rel_err"); nerr = m.get("norm_rel_err")
        print(f'{r["name"]:<62} {r["status"]:<5} maxrel={err if err is None else f"{err:.2e}"} normrel={nerr if nerr is None else f"{nerr:.2e}"} {e.get("kernel","")} regs={e.get("registers")} occ={e.get("occupancy_blocks_per_sm")} st={e.get("stages")} {r.get("reason","")[:100]}')
PY
{
log "bench: mqa_logits B=256 ctx=8192 H=64 D=128 block_kv=64, every request full (DeepGEMM's shape), next_n 1-8"
$SP probe --probe mqa_logits --next-n 1-8 --heads 64 --bench --lengths full; echo "rc=$?"
log "bench: same, request lengths drawn in [next_n, 8192], next_n 1-4"
$SP probe --probe mqa_logits --next-n 1-4 --heads 64 --bench; echo "rc=$?"
log "bench: two-CTA sm_90a kernel forced (SPECPROBE_MQA_KERNEL=tma), full lengths, next_n 1-8"
SPECPROBE_MQA_KERNEL=tma $SP probe --probe mqa_logits --next-n 1-8 --heads 64 --bench --lengths full; echo "rc=$?"
log "bench: mma.sync kernel forced (SPECPROBE_MQA_KERNEL=mma), full lengths, next_n 1,2,4"
SPECPROBE_MQA_KERNEL=mma $SP probe --probe mqa_logits --next-n 1,2,4 --heads 64 --bench --lengths full --tiles-per-cta 8; echo "rc=$?"
log "bench: spec_verify B=64 ctx=8192 k=3 GQA=8 heads_kv=8 D=128 (auto splits; then 4 splits)"
$SP probe --probe spec_verify --gqa 8 --k 3 --kv-dtype bf16,fp8 --bench; echo "rc=$?"
$SP probe --probe spec_verify --gqa 8 --k 3 --kv-dtype bf16 --bench --splits 4; echo "rc=$?"
log "bench: spec_verify bf16, the portable cp.async kernel forced (SPECPROBE_SV_KERNEL=cp_async)"
SPECPROBE_SV_KERNEL=cp_async $SP probe --probe spec_verify --gqa 8 --k 3 --kv-dtype bf16 --bench; echo "rc=$?"
if [ -n "${DG:-}" ]; then
  # DG_WAIT: a file that appears when a background build of DG has finished (up to 7 minutes in).
  while [ -n "${DG_WAIT:-}" ] && [ ! -e "$DG_WAIT" ] && [ $SECONDS -lt 420 ]; do sleep 5; done
  log "DeepGEMM in the same run: python3 bench/deepgemm_mqa_bench.py (B=256, L=8192, H=64, D=128, block_kv 64, full lengths)"
  PYTHONPATH=$(cd "$DG" && pwd) LD_PRELOAD=${DG_PRELOAD:-} timeout 300 python3 bench/deepgemm_mqa_bench.py --next-n 1,2,3,4; echo "rc=$?"
  log "ours again after DeepGEMM (drift check): full lengths, next_n 1,2,3,4"
  $SP probe --probe mqa_logits --next-n 1-4 --heads 64 --bench --lengths full; echo "rc=$?"
fi
} 2>&1 | tee "$OUT/bench.txt"
