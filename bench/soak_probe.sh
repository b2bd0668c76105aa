#!/bin/bash
# Soak test of `specprobe probe` (issue 8): N consecutive runs of a small realistic plan, every
# 50th run the faulting and hanging test probes (through the GPU test binary, the only one that
# knows them: `tests/specprobe_gpu_tests probe ...` is `specprobe probe` with test_fault and
# test_hang), watching for growth of host or device memory and for processes left behind. The work is in bench/soak_probe.py (python3, standard library only).
#
# Usage (repo root):  bash bench/soak_probe.sh [--bin .dev/<dir>/specprobe] [--runs N] [options]
#   --plan ARGS         `specprobe probe` arguments of a plan run (default: --probe
#                       mqa_logits,spec_verify,graph_replay --next-n 3 --gqa 8 --kv-dtype bf16 --k 2 --context 200)
#   --fault-plan ARGS   every --fault-every (50) runs (default: --probe test_fault,test_hang --timeout 3)
#   --fault-bin PATH    the GPU test binary for the fault runs (default: tests/specprobe_gpu_tests
#                       beside --bin, as bench/pack_device_build.sh lays them out)
#   --gpu-every M       nvidia-smi memory.used + compute apps every M runs, before and after (25)
#   --deadline-s S      start no run after S seconds (summary still printed; exit 3 if cut short)
#   --out DIR           soak_probe.csv (one row per run) and soak_probe_summary.txt ($OUT)
#   --self-test         check the harness with a fake specprobe, N=20 (no GPU, no nvidia-smi)
# Environment: SPECPROBE_BIN, SPECPROBE_TEST_BIN, N, OUT set the defaults of --bin, --fault-bin,
# --runs, --out.
#
# Per run: exit code and cause (from --format json), wall time, peak RSS of the specprobe parent
# and of its probe children (VmHWM sampled from /proc; wait4's ru_maxrss = the larger of both),
# processes left behind (the harness is a child subreaper, so orphans and unreaped zombies come
# back to it and are counted, then killed and reaped).
#
# Fails (exit 1, each reason on a FAIL: line) when:
#   - the median peak RSS (parent, child or wait4) of the last 100 plan runs exceeds the first
#     100's by more than 5% and by more than 1024 KiB (--rss-tolerance-pct, --rss-floor-kib);
#   - GPU memory used after the last run exceeds the value before the first by more than 64 MiB
#     (--gpu-tolerance-mib), or a compute app is left on the GPU between runs;
#   - any process is left behind after any run;
#   - a plan run does not exit 0 with every probe pass (or skip), or a fault run does not exit 1
#     with test_fault = crash (a CUDA error) and test_hang = crash (timeout).
# Exit 2: usage error (no binary); exit 3: --deadline-s cut the soak short, nothing else failed.
# Without nvidia-smi the GPU figures read n/a and are not checked.
#
# On the H100 (a plan run ~0.35 s, a fault run ~3.7 s: 1000 runs ~7 min):
#   bash bench/soak_probe.sh --bin .dev/<dir>/specprobe --runs 1000 --deadline-s 540 --out "$OUT"
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v python3 > /dev/null || { echo "soak_probe: error: python3 not found on PATH" >&2; exit 2; }
exec python3 "$here/soak_probe.py" "$@"
