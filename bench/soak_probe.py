#!/usr/bin/env python3
"""Soak test of `specprobe probe`: N consecutive runs, watching for growth and leaks.

Run through bench/soak_probe.sh (see its header for usage and the tolerances). Standard library
only: the GPU machine has python3 and nvidia-smi, no -dev packages and maybe no /usr/bin/time.

Per run it records the exit code and its cause (from the JSON results), wall time, the peak RSS
of the specprobe parent and of its probe children (VmHWM sampled from /proc while they run: the
parent's RUSAGE_CHILDREN is not visible from here; wait4's ru_maxrss is the larger of the two,
but never below this harness's own peak, which Linux carries across the fork and exec), and the
processes left behind. The harness makes itself a child subreaper
(PR_SET_CHILD_SUBREAPER), so anything the run orphans (a probe child that outlives its parent,
an unreaped zombie) is re-parented here and counted; leftovers are then killed and reaped so one
leak is counted once. Every --gpu-every runs (and before the first and after the last) it reads
nvidia-smi memory.used and the compute apps; without nvidia-smi those columns read n/a.
"""
import argparse
import csv
import ctypes
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time

DEFAULT_PLAN = "--probe mqa_logits,spec_verify,graph_replay --next-n 3 --gqa 8 --kv-dtype bf16 --k 2 --context 200"
DEFAULT_FAULT_PLAN = "--probe test_fault,test_hang --timeout 3"
PR_SET_CHILD_SUBREAPER = 36

EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3


# ---------------------------------------------------------------------------------------------
# /proc helpers


def proc_table():
    """pid -> (ppid, state, comm) for every process we can read."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        # comm is in parentheses and may contain spaces or ')': split at the last ')'
        lp, rp = data.find("("), data.rfind(")")
        rest = data[rp + 2:].split()
        if len(rest) < 2:
            continue
        out[int(name)] = (int(rest[1]), rest[0], data[lp + 1:rp])
    return out


def descendants(root, table):
    kids = {}
    for pid, (ppid, _, _) in table.items():
        kids.setdefault(ppid, []).append(pid)
    found, todo = [], list(kids.get(root, []))
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(kids.get(p, []))
    return found


def kib_field(path, key):
    """The kB value of a "Key:   123 kB" line of a /proc file, or None."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def vm_hwm_kib(pid):
    return kib_field(f"/proc/{pid}/status", "VmHWM")


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def mem_available_kib():
    return kib_field("/proc/meminfo", "MemAvailable")


def become_subreaper():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


# ---------------------------------------------------------------------------------------------
# nvidia-smi (absent: None, printed as n/a)


def nvidia_smi(args, timeout=30):
    try:
        p = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    return [l.strip() for l in p.stdout.splitlines() if l.strip()]


def gpu_sample():
    """(memory.used MiB summed over GPUs or None, compute-app lines or None, seconds taken)."""
    t0 = time.monotonic()
    mem = nvidia_smi(["--query-gpu=memory.used", "--format=csv,noheader,nounits"])
    used = None
    if mem is not None:
        try:
            used = sum(int(float(x)) for x in mem)
        except ValueError:
            used = None
    apps = nvidia_smi(["--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader,nounits"])
    return used, apps, time.monotonic() - t0


def na(v, fmt="{}"):
    return "n/a" if v is None else fmt.format(v)


# ---------------------------------------------------------------------------------------------
# one run


def classify(kind, rc, stdout, stderr, harness_timeout):
    """(cause, expected). A plan run must exit 0 with no fail/crash/error result; a fault run
    must exit 1 with test_fault and test_hang both 'crash' (a CUDA error / a timeout)."""
    if harness_timeout:
        return "harness timeout (run killed)", False
    if rc < 0:
        return f"specprobe killed by {signal.Signals(-rc).name}", False
    try:
        results = json.loads(stdout)
        if not isinstance(results, list):
            raise ValueError("not a list")
    except ValueError:
        first = (stderr.strip().splitlines() or [""])[0][:120]
        return f"rc={rc}, no JSON results: {first}", False
    parts, statuses = [], {}
    for r in results:
        if not isinstance(r, dict):
            continue
        st = r.get("status", "?")
        statuses[r.get("probe", "?")] = st
        if st == "pass":
            continue
        detail = r.get("cuda_error") or (f"signal {r['signal']}" if r.get("signal") else None) or \
            ("timeout" if r.get("timeout_s") is not None else None) or str(r.get("reason", ""))[:70]
        parts.append(f"{r.get('probe', '?')} {st} ({detail})")
    cause = "ok" if rc == 0 and not parts else f"rc={rc}: " + "; ".join(sorted(set(parts)) or ["no failing result"])
    if kind == "plan":
        expected = rc == 0 and all(s in ("pass", "skip") for s in statuses.values())
    else:
        fault_ok = statuses.get("test_fault") == "crash" and any(
            r.get("probe") == "test_fault" and r.get("cuda_error") for r in results if isinstance(r, dict))
        hang_ok = statuses.get("test_hang") == "crash" and any(
            r.get("probe") == "test_hang" and r.get("timeout_s") is not None for r in results if isinstance(r, dict))
        expected = rc == 1 and fault_ok and hang_ok
    return cause, expected


def run_once(argv, run_timeout, sample_s, tmpdir):
    """Runs ARGV; returns a dict of measurements."""
    out_path, err_path = os.path.join(tmpdir, "stdout"), os.path.join(tmpdir, "stderr")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        pid = proc.pid
        parent_hwm, child_hwm, children = 0, 0, set()
        harness_timeout = False
        while True:
            wpid, status, ru = os.wait4(pid, os.WNOHANG)
            if wpid == pid:
                break
            h = vm_hwm_kib(pid)
            if h:
                parent_hwm = max(parent_hwm, h)
            table = proc_table()
            for c in descendants(pid, table):
                children.add(c)
                ch = vm_hwm_kib(c)
                if ch:
                    child_hwm = max(child_hwm, ch)
            if time.monotonic() - t0 > run_timeout:
                harness_timeout = True
                for sig_target in [pid] + descendants(pid, table):
                    try:
                        os.killpg(os.getpgid(sig_target), signal.SIGKILL)
                    except OSError:
                        pass
                wpid, status, ru = os.wait4(pid, 0)
                break
            time.sleep(sample_s)
        wall = time.monotonic() - t0
        proc.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    with open(out_path, encoding="utf-8", errors="replace") as f:
        stdout = f.read()
    with open(err_path, encoding="utf-8", errors="replace") as f:
        stderr = f.read()
    return {"rc": proc.returncode, "wall_s": wall, "parent_hwm_kib": parent_hwm or None,
            "child_hwm_kib": child_hwm or None, "children_seen": len(children),
            "wait4_maxrss_kib": ru.ru_maxrss, "stdout": stdout, "stderr": stderr,
            "harness_timeout": harness_timeout}


def collect_leftovers(me, subreaper, bin_reals, baseline):
    """Processes this run left behind: our descendants (as subreaper), else processes running
    one of the binaries that were not there before the soak. Kills and reaps them; returns
    descriptions."""
    table = proc_table()
    if subreaper:
        pids = descendants(me, table)
    else:
        pids = []
        for pid in table:
            if pid in baseline or pid == me:
                continue
            try:
                exe = os.path.realpath(f"/proc/{pid}/exe")
            except OSError:
                exe = ""
            cl = cmdline(pid)
            if exe in bin_reals or any(b in cl for b in bin_reals) or "__probe-child" in cl:
                pids.append(pid)
    desc = []
    for pid in pids:
        ppid, state, comm = table.get(pid, (0, "?", "?"))
        desc.append(f"{pid}:{comm}:{'zombie' if state == 'Z' else 'state ' + state}:{cmdline(pid)[:80]}")
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if subreaper:  # reap what was re-parented to us (zombies included)
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            try:
                wpid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if wpid == 0:
                if not descendants(me, proc_table()):
                    break
                time.sleep(0.01)
    return desc


# ---------------------------------------------------------------------------------------------
# the soak


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def soak(a):
    bin_path = a.bin
    if not (os.path.isfile(bin_path) and os.access(bin_path, os.X_OK)):
        print(f"soak_probe: error: {bin_path}: not an executable file (build it, or pass --bin)", file=sys.stderr)
        return EXIT_USAGE
    bin_real = os.path.realpath(bin_path)
    # Fault runs use the test probes, which only the GPU test binary knows (its `probe` command is
    # `specprobe probe` with test_fault / test_hang; its children re-execute it).
    fault_bin = a.fault_bin or os.path.join(os.path.dirname(bin_path), "tests", "specprobe_gpu_tests")
    if a.fault_every > 0 and not (os.path.isfile(fault_bin) and os.access(fault_bin, os.X_OK)):
        print(f"soak_probe: error: {fault_bin}: not an executable file (the GPU test binary runs the fault "
              f"runs: build it, or pass --fault-bin, or --fault-every 0)", file=sys.stderr)
        return EXIT_USAGE
    a.fault_bin = fault_bin
    bin_reals = {bin_real, os.path.realpath(fault_bin)}
    plan = shlex.split(a.plan)
    fault_plan = shlex.split(a.fault_plan)
    for p in (plan, fault_plan):
        if "--format" in p:
            print("soak_probe: error: the plans must not set --format (the soak adds --format json)", file=sys.stderr)
            return EXIT_USAGE
    os.makedirs(a.out, exist_ok=True)
    csv_path = os.path.join(a.out, "soak_probe.csv")
    summary_path = os.path.join(a.out, "soak_probe_summary.txt")
    me = os.getpid()
    subreaper = become_subreaper()
    baseline = set(proc_table())
    g_used, g_apps, g_secs = gpu_sample()
    gpu_points = [(0, g_used, len(g_apps) if g_apps is not None else None)]
    baseline_apps = set(l.split(",")[0].strip() for l in (g_apps or []))
    host_points = [(0, mem_available_kib())]
    leftover_gpu_apps = []
    print(f"soak_probe: {a.runs} runs of {bin_path} probe {a.plan}"
          + (f" (every {a.fault_every}th: {fault_bin} probe {a.fault_plan})" if a.fault_every > 0 else "")
          + f"; subreaper {'on' if subreaper else 'OFF (falling back to a /proc scan)'}"
          + f"; nvidia-smi {'n/a' if g_used is None else f'{g_used} MiB used, {len(g_apps or [])} compute apps, {g_secs:.2f} s per sample'}",
          flush=True)
    fields = ["run", "kind", "rc", "expected", "cause", "wall_s", "parent_hwm_kib", "child_hwm_kib", "children_seen",
              "wait4_maxrss_kib", "leftover_procs", "leftover_desc", "gpu_mem_used_mib", "gpu_compute_apps",
              "host_mem_available_kib"]
    rows = []
    t_start = time.monotonic()
    incomplete = False
    with open(csv_path, "w", newline="") as fcsv, tempfile.TemporaryDirectory(prefix="soak_probe.") as tmp:
        w = csv.DictWriter(fcsv, fieldnames=fields)
        w.writeheader()
        for i in range(1, a.runs + 1):
            if a.deadline_s > 0 and time.monotonic() - t_start > a.deadline_s:
                incomplete = True
                print(f"soak_probe: deadline of {a.deadline_s:g} s reached after {i - 1} runs; stopping", flush=True)
                break
            kind = "fault" if a.fault_every > 0 and i % a.fault_every == 0 else "plan"
            argv = [fault_bin, "probe", *fault_plan, "--format", "json"] if kind == "fault" else \
                [bin_path, "probe", *plan, "--format", "json"]
            m = run_once(argv, a.run_timeout, a.sample_ms / 1000.0, tmp)
            cause, expected = classify(kind, m["rc"], m["stdout"], m["stderr"], m["harness_timeout"])
            left = collect_leftovers(me, subreaper, bin_reals, baseline)
            row = {"run": i, "kind": kind, "rc": m["rc"], "expected": int(expected), "cause": cause,
                   "wall_s": f"{m['wall_s']:.4f}", "parent_hwm_kib": m["parent_hwm_kib"],
                   "child_hwm_kib": m["child_hwm_kib"], "children_seen": m["children_seen"],
                   "wait4_maxrss_kib": m["wait4_maxrss_kib"], "leftover_procs": len(left),
                   "leftover_desc": " | ".join(left), "gpu_mem_used_mib": "", "gpu_compute_apps": "",
                   "host_mem_available_kib": ""}
            if a.gpu_every > 0 and (i % a.gpu_every == 0 or i == a.runs):
                used, apps, _ = gpu_sample()
                extra = [l for l in (apps or []) if l.split(",")[0].strip() not in baseline_apps]
                for _ in range(3):  # a killed (hung) context may still be tearing down: settle first
                    if not extra:
                        break
                    time.sleep(a.gpu_settle_s / 3)
                    used, apps, _ = gpu_sample()
                    extra = [l for l in (apps or []) if l.split(",")[0].strip() not in baseline_apps]
                if extra:
                    leftover_gpu_apps.append((i, extra))
                gpu_points.append((i, used, len(apps) if apps is not None else None))
                host_points.append((i, mem_available_kib()))
                row["gpu_mem_used_mib"] = na(used)
                row["gpu_compute_apps"] = na(len(apps) if apps is not None else None)
                row["host_mem_available_kib"] = na(host_points[-1][1])
            w.writerow(row)
            fcsv.flush()
            rows.append({**row, "wall": m["wall_s"]})
            if not expected or left:
                print(f"soak_probe: run {i} ({kind}): {cause}" + (f"; left behind: {row['leftover_desc']}" if left else ""),
                      flush=True)
            if a.progress_every > 0 and i % a.progress_every == 0:
                print(f"soak_probe: {i}/{a.runs} runs, {time.monotonic() - t_start:.1f} s", flush=True)
    total_wall = time.monotonic() - t_start
    if not rows:
        print("soak_probe: error: no run completed", file=sys.stderr)
        return EXIT_INCOMPLETE
    if gpu_points[-1][0] != rows[-1]["run"]:  # stopped early: take the end point now
        used, apps, _ = gpu_sample()
        gpu_points.append((rows[-1]["run"], used, len(apps) if apps is not None else None))
        host_points.append((rows[-1]["run"], mem_available_kib()))
    return summarize(a, rows, gpu_points, host_points, leftover_gpu_apps, total_wall, incomplete,
                     summary_path, csv_path, subreaper)


def summarize(a, rows, gpu_points, host_points, leftover_gpu_apps, total_wall, incomplete, summary_path, csv_path,
              subreaper):
    lines, failures = [], []
    harness_hwm = vm_hwm_kib(os.getpid())
    plan_rows = [r for r in rows if r["kind"] == "plan"]
    win = min(a.window, max(1, len(plan_rows) // 2))
    first, last = plan_rows[:win], plan_rows[-win:]
    lines.append(f"specprobe soak: {len(rows)} of {a.runs} runs ({len(plan_rows)} plan, {len(rows) - len(plan_rows)} fault), "
                 f"binary {a.bin}")
    lines.append(f"  plan:  probe {a.plan}")
    if a.fault_every > 0:
        lines.append(f"  fault: {a.fault_bin} probe {a.fault_plan} (every {a.fault_every}th run)")
    walls = sorted(r["wall"] for r in plan_rows)
    fwalls = sorted(r["wall"] for r in rows if r["kind"] == "fault")
    lines.append(f"  total wall {total_wall:.1f} s; plan run wall median {na(median(walls), '{:.3f}')} s, "
                 f"max {na(walls[-1] if walls else None, '{:.3f}')} s; fault run wall median {na(median(fwalls), '{:.3f}')} s")
    lines.append("")
    lines.append(f"  {'host memory (KiB, plan runs)':<34} {'first ' + str(win) + ' med':>14} {'last ' + str(win) + ' med':>14} "
                 f"{'max':>10} {'growth':>8}  limit")
    tol = a.rss_tolerance_pct
    for key, label in (("parent_hwm_kib", "specprobe parent VmHWM"), ("child_hwm_kib", "probe child VmHWM (max of children)"),
                       ("wait4_maxrss_kib", "wait4 ru_maxrss (max of both)")):
        f_med, l_med = median(r[key] for r in first), median(r[key] for r in last)
        mx = max((r[key] for r in rows if r[key] is not None), default=None)
        growth = None if f_med in (None, 0) or l_med is None else 100.0 * (l_med - f_med) / f_med
        bad = growth is not None and l_med > f_med * (1 + tol / 100.0) and l_med - f_med > a.rss_floor_kib
        lines.append(f"  {label:<34} {na(f_med, '{:.0f}'):>14} {na(l_med, '{:.0f}'):>14} {na(mx):>10} "
                     f"{na(growth, '{:+.1f}%'):>8}  +{tol:g}% and +{a.rss_floor_kib} KiB{'  FAIL' if bad else ''}")
        if bad:
            failures.append(f"{label}: median of the last {win} plan runs {l_med:.0f} KiB > first {win} {f_med:.0f} KiB "
                            f"+ {tol:g}% (and + {a.rss_floor_kib} KiB)")
    lines.append("")
    mid_target = rows[-1]["run"] / 2
    mid = min(gpu_points, key=lambda p: abs(p[0] - mid_target)) if gpu_points else (0, None, None)
    start, end = gpu_points[0], gpu_points[-1]
    g_growth = None if start[1] is None or end[1] is None else end[1] - start[1]
    g_bad = g_growth is not None and g_growth > a.gpu_tolerance_mib
    lines.append(f"  GPU memory used (MiB): start {na(start[1])} (run {start[0]}), middle {na(mid[1])} (run {mid[0]}), "
                 f"end {na(end[1])} (run {end[0]}); growth {na(g_growth, '{:+d}')} (limit +{a.gpu_tolerance_mib})"
                 f"{'  FAIL' if g_bad else ''}")
    if g_bad:
        failures.append(f"GPU memory used grew by {g_growth} MiB (> {a.gpu_tolerance_mib} MiB)")
    pts = [p for p in gpu_points if p[1] is not None]
    if pts:
        lines.append(f"  GPU memory used min/max over {len(pts)} samples: {min(p[1] for p in pts)} / {max(p[1] for p in pts)} MiB")
    lines.append(f"  GPU compute apps left between runs: "
                 + ("n/a" if start[2] is None else f"{sum(len(x) for _, x in leftover_gpu_apps)}"
                    + (f" (first at run {leftover_gpu_apps[0][0]}: {leftover_gpu_apps[0][1][0]})" if leftover_gpu_apps else "")))
    if leftover_gpu_apps:
        failures.append(f"GPU compute apps left after runs: {leftover_gpu_apps[0][1]} at run {leftover_gpu_apps[0][0]}")
    lines.append(f"  (VmHWM is sampled every {a.sample_ms:g} ms while a run lives, so a run of a few ms is under-read; wait4's"
                 f" ru_maxrss is exact but never below the harness's own peak, {harness_hwm} KiB: Linux keeps it across exec)")
    hs, he = host_points[0][1], host_points[-1][1]
    lines.append(f"  host MemAvailable (KiB, info only: page cache moves it): start {na(hs)}, end {na(he)}"
                 + ("" if hs is None or he is None else f" ({he - hs:+d})"))
    lines.append("")
    left_runs = [r for r in rows if r["leftover_procs"]]
    lines.append(f"  leftover processes (zombies or strays after a run; {'subreaper' if subreaper else '/proc scan'}): "
                 f"{sum(r['leftover_procs'] for r in rows)} in {len(left_runs)} runs")
    for r in left_runs[:5]:
        lines.append(f"    run {r['run']}: {r['leftover_desc'][:200]}")
    if left_runs:
        failures.append(f"{sum(r['leftover_procs'] for r in rows)} leftover processes (first after run {left_runs[0]['run']})")
    children = [r["children_seen"] for r in rows]
    lines.append(f"  probe children per run: plan {na(median(r['children_seen'] for r in plan_rows), '{:g}')} (median), "
                 f"fault {na(median(r['children_seen'] for r in rows if r['kind'] == 'fault'), '{:g}')}; max {max(children)}")
    lines.append("")
    lines.append("  exits by cause:")
    by = {}
    for r in rows:
        k = (r["kind"], r["rc"], r["cause"], r["expected"])
        by[k] = by.get(k, 0) + 1
    for (kind, rc, cause, exp), n in sorted(by.items(), key=lambda kv: (-kv[1], kv[0][0], str(kv[0][1]))):
        lines.append(f"    {n:>5} x {kind:<5} rc={rc:<3} {'expected  ' if exp else 'UNEXPECTED'} {cause[:150]}")
    unexpected = [r for r in rows if not r["expected"]]
    if unexpected:
        failures.append(f"{len(unexpected)} runs ended unexpectedly (first: run {unexpected[0]['run']}, {unexpected[0]['cause'][:120]})")
    if any(" skip (" in r["cause"] for r in plan_rows):
        lines.append("  note: plan probes were skipped (see the causes above): the soak did not launch those kernels")
    lines.append("")
    if incomplete:
        lines.append(f"  INCOMPLETE: the --deadline-s of {a.deadline_s:g} s stopped the soak after {len(rows)} of {a.runs} runs")
    for f in failures:
        lines.append(f"  FAIL: {f}")
    verdict = "FAIL" if failures else ("INCOMPLETE" if incomplete else "PASS")
    lines.append(f"  RESULT: {verdict}   (csv: {csv_path})")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    with open(summary_path, "w") as f:
        f.write(text)
    if failures:
        return EXIT_CHECK_FAILED
    return EXIT_INCOMPLETE if incomplete else EXIT_OK


# ---------------------------------------------------------------------------------------------
# self-test with a fake specprobe (no GPU, no nvidia-smi needed)

FAKE = r"""#!/bin/bash
# Fake specprobe (and fake GPU test binary) for soak_probe.py --self-test. Counts its runs in $FAKE_STATE/count.
# FAKE_MODE: clean | leak (run FAKE_AT orphans a sleeper) | zombie (run FAKE_AT exits with an
# unreaped child) | grow (the probe child's RSS grows with each run) | fail (run FAKE_AT exits 3)
if [ "$1" = "__probe-child" ]; then
  x=$(head -c $((${2:-1000} * 1024)) /dev/zero | tr '\0' 'x'); sleep 0.02; exit 0
fi
n=$(( $(cat "$FAKE_STATE/count" 2>/dev/null || echo 0) + 1 )); echo $n > "$FAKE_STATE/count"
case " $* " in *test_fault*) fault=1 ;; *) fault=0 ;; esac
grow=0; [ "$FAKE_MODE" = grow ] && grow=$((n * 400))
"$0" __probe-child $((2000 + grow)) & wait $!
if [ "$FAKE_MODE" = leak ] && [ "$n" = "$FAKE_AT" ]; then (setsid sleep 30 </dev/null >/dev/null 2>&1 &); sleep 0.05; fi
if [ "$FAKE_MODE" = fail ] && [ "$n" = "$FAKE_AT" ]; then echo "specprobe: internal error: boom" >&2; exit 3; fi
if [ "$fault" = 1 ]; then
  "$0" __probe-child 500 & wait $!
  echo '[{"probe":"test_fault","status":"crash","cuda_error":"CUDA_ERROR_ILLEGAL_ADDRESS","reason":"x"},'
  echo ' {"probe":"test_hang","status":"crash","timeout_s":3,"reason":"no result within 3 s"}]'
  exit 1
fi
if [ "$FAKE_MODE" = zombie ] && [ "$n" = "$FAKE_AT" ]; then
  # the shell becomes a sleep that never reaps its child: the child exits first (a zombie),
  # then the parent exits and the zombie is re-parented to the harness
  sleep 0.01 & exec sleep 0.1
fi
echo '[{"probe":"mqa_logits","status":"pass"},{"probe":"spec_verify","status":"pass"},{"probe":"graph_replay","status":"pass"}]'
exit 0
"""

FAKE_SMI = r"""#!/bin/bash
# Fake nvidia-smi for soak_probe.py --self-test: FAKE_MODE=gpuleak grows memory.used by 30 MiB a
# sample and shows a compute app from the third sample on; otherwise 500 MiB and no apps.
c=$(cat "$FAKE_STATE/smi" 2>/dev/null || echo 0)
case "$1" in
  --query-gpu=*) c=$((c + 1)); echo $c > "$FAKE_STATE/smi"
                 if [ "$FAKE_MODE" = gpuleak ]; then echo $((500 + c * 30)); else echo 500; fi ;;
  --query-compute-apps=*) if [ "$FAKE_MODE" = gpuleak ] && [ "$c" -ge 3 ]; then echo "4242, specprobe, 300"; fi ;;
esac
"""


def self_test(a):
    ok = True
    with tempfile.TemporaryDirectory(prefix="soak_probe_selftest.") as d:
        fake = os.path.join(d, "specprobe")
        with open(fake, "w") as f:
            f.write(FAKE)
        os.chmod(fake, 0o755)
        smi_dir = os.path.join(d, "smi")
        os.makedirs(smi_dir)
        with open(os.path.join(smi_dir, "nvidia-smi"), "w") as f:
            f.write(FAKE_SMI)
        os.chmod(os.path.join(smi_dir, "nvidia-smi"), 0o755)
        # nvidia-smi must read n/a here even on a GPU machine: hide it from PATH
        env_path = ":".join(p for p in os.environ.get("PATH", "").split(":")
                            if p and not os.path.exists(os.path.join(p, "nvidia-smi")))
        cases = [  # mode, at, expected exit, text the output must hold
            ("clean", 0, EXIT_OK, ["RESULT: PASS", "GPU memory used (MiB): start n/a", "leftover processes", "0 in 0 runs"]),
            ("leak", 7, EXIT_CHECK_FAILED, ["FAIL: 1 leftover processes (first after run 7)", "sleep 30"]),
            ("zombie", 6, EXIT_CHECK_FAILED, ["leftover processes (first after run 6)", ":sleep:zombie:"]),
            ("grow", 0, EXIT_CHECK_FAILED, ["FAIL: probe child VmHWM (max of children): median of the last"]),
            ("fail", 9, EXIT_CHECK_FAILED, ["UNEXPECTED", "rc=3, no JSON results: specprobe: internal error: boom",
                                            "FAIL: 1 runs ended unexpectedly (first: run 9"]),
        ]
        cases += [  # with the fake nvidia-smi on PATH
            ("gpuok", 0, EXIT_OK, ["GPU memory used (MiB): start 500 (run 0), middle 500 (run 10), end 500 (run 20); growth +0",
                                   "GPU compute apps left between runs: 0", "RESULT: PASS"]),
            ("gpuleak", 0, EXIT_CHECK_FAILED, ["FAIL: GPU memory used grew by ",
                                               "FAIL: GPU compute apps left after runs: ['4242, specprobe, 300'] at run 10"]),
        ]
        for mode, at, want_rc, want_text in cases:
            state = os.path.join(d, "state-" + mode)
            os.makedirs(state)
            out = os.path.join(d, "out-" + mode)
            path = smi_dir + ":" + env_path if mode.startswith("gpu") else env_path
            env = dict(os.environ, FAKE_MODE=mode, FAKE_AT=str(at), FAKE_STATE=state, PATH=path)
            cmd = [sys.executable, os.path.abspath(__file__), "--bin", fake, "--fault-bin", fake, "--runs", str(a.runs), "--fault-every", "5",
                   "--gpu-every", "5", "--gpu-settle-s", "0.3", "--window", "5", "--out", out, "--sample-ms", "2"]
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
            text = p.stdout + p.stderr
            missing = [t for t in want_text if t not in text]
            rows = 0
            try:
                with open(os.path.join(out, "soak_probe.csv")) as f:
                    rows = sum(1 for _ in csv.DictReader(f))
            except OSError:
                pass
            good = p.returncode == want_rc and not missing and rows == a.runs
            ok &= good
            print(f"self-test {mode:<7} exit {p.returncode} (want {want_rc}), csv rows {rows} (want {a.runs})"
                  f"{', missing: ' + repr(missing) if missing else ''}: {'ok' if good else 'FAILED'}")
            if not good:
                print(text)
        # usage: a missing binary is exit 2 with a message naming it
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--bin", os.path.join(d, "nope"), "--out", d],
                           capture_output=True, text=True)
        good = p.returncode == EXIT_USAGE and "nope: not an executable file" in p.stderr
        ok &= good
        print(f"self-test missing binary exit {p.returncode} (want {EXIT_USAGE}): {'ok' if good else 'FAILED'}")
    print("self-test: " + ("PASS" if ok else "FAIL"))
    return EXIT_OK if ok else EXIT_CHECK_FAILED


def main():
    ap = argparse.ArgumentParser(description="soak test of specprobe probe (see bench/soak_probe.sh)")
    ap.add_argument("--bin", default=os.environ.get("SPECPROBE_BIN", "build/specprobe"), help="the specprobe binary")
    ap.add_argument("--runs", "-n", type=int, default=int(os.environ.get("N", "1000")), help="number of runs (default 1000)")
    ap.add_argument("--plan", default=DEFAULT_PLAN, help="arguments of `specprobe probe` for a plan run")
    ap.add_argument("--fault-plan", default=DEFAULT_FAULT_PLAN, help="arguments of the test binary's `probe` for a fault run")
    ap.add_argument("--fault-bin", default=os.environ.get("SPECPROBE_TEST_BIN", ""),
                    help="the GPU test binary that runs the fault runs (default: tests/specprobe_gpu_tests beside --bin)")
    ap.add_argument("--fault-every", type=int, default=50, help="every Mth run is a fault run (0: none)")
    ap.add_argument("--gpu-every", type=int, default=25, help="nvidia-smi sample every M runs (and before/after)")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/soak_probe_out"), help="where the CSV and summary go")
    ap.add_argument("--window", type=int, default=100, help="runs in the first/last median windows")
    ap.add_argument("--rss-tolerance-pct", type=float, default=5.0, help="allowed growth of the median RSS")
    ap.add_argument("--rss-floor-kib", type=int, default=1024, help="growth below this many KiB never fails")
    ap.add_argument("--gpu-tolerance-mib", type=int, default=64, help="allowed growth of GPU memory used")
    ap.add_argument("--gpu-settle-s", type=float, default=3, help="wait up to this long for a compute app to go away")
    ap.add_argument("--run-timeout", type=float, default=120, help="seconds before the harness kills a run")
    ap.add_argument("--deadline-s", type=float, default=0, help="stop starting runs after this many seconds (0: none)")
    ap.add_argument("--sample-ms", type=float, default=5, help="/proc sampling interval while a run is going")
    ap.add_argument("--progress-every", type=int, default=100, help="print progress every M runs")
    ap.add_argument("--self-test", action="store_true", help="test this harness with a fake specprobe (no GPU)")
    a = ap.parse_args()
    if a.runs < 1:
        ap.error("--runs must be >= 1")
    if a.self_test:
        if a.runs == 1000 and "N" not in os.environ:
            a.runs = 20
        return self_test(a)
    return soak(a)


if __name__ == "__main__":
    sys.exit(main())
