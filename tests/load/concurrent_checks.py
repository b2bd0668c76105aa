#!/usr/bin/env python3
"""N `specprobe check` runs of one plan at once give the same report (issue 39 item 7).

Usage: concurrent_checks.py SPECPROBE N [check arguments...]

Starts N processes together, waits for all, and compares their JSON reports with what one run
alone gives, leaving out only what is meant to differ between runs: the run's duration, and each
probe's timings (a probe's status and reason must match). Exits 1 naming the first difference,
else prints the wall time, the slowest run and the peak of concurrently running processes.
A test, not a benchmark: the figures are printed, nothing asserts on them.
"""
import json
import subprocess
import sys
import time

VOLATILE = ("duration", "time_", "_us", "_ms", "elapsed", "wall", "metrics", "bandwidth", "throughput")


def normalized(doc):
    def walk(v, path):
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if path.startswith("probes") and any(s in k for s in VOLATILE):
                    continue
                if k in ("duration_ms", "duration_s"):
                    continue
                out[k] = walk(x, path + "." + k if path else k)
            return out
        if isinstance(v, list):
            return [walk(x, path) for x in v]
        return v
    return walk(doc, "")


def first_difference(a, b, path="$"):
    if type(a) is not type(b):
        return f"{path}: {json.dumps(a)[:120]} vs {json.dumps(b)[:120]}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: present in one report only"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {json.dumps(a)[:120]} vs {json.dumps(b)[:120]}"


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    binary, n, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    cmd = [binary, "check", "--format", "json"] + args
    alone = subprocess.run(cmd, capture_output=True, text=True)
    if alone.returncode not in (0, 1, 4) or not alone.stdout:
        print(f"FAIL: the single run exited {alone.returncode}: {alone.stderr[-500:]}")
        return 1
    want = normalized(json.loads(alone.stdout))
    t0 = time.monotonic()
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(n)]
    outs, slowest = [], 0.0
    for p in procs:
        out, err = p.communicate()
        slowest = max(slowest, time.monotonic() - t0)
        outs.append((p.returncode, out, err))
    wall = time.monotonic() - t0
    for i, (rc, out, err) in enumerate(outs):
        if rc != alone.returncode:
            print(f"FAIL: run {i} exited {rc}, the single run {alone.returncode}: {err[-500:]}")
            return 1
        try:
            got = normalized(json.loads(out))
        except json.JSONDecodeError as e:
            print(f"FAIL: run {i} wrote no JSON report ({e}); stderr: {err[-500:]}")
            return 1
        d = first_difference(want, got)
        if d:
            print(f"FAIL: run {i}'s report differs from the single run's at {d}")
            return 1
    print(f"ok: {n} concurrent runs (exit {alone.returncode}, verdict {want.get('verdict')}) gave the single run's "
          f"report; wall {wall:.2f} s for all, last finished at {slowest:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
