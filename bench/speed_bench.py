#!/usr/bin/env python3
"""Benchmark (not a test; issue 49): the figures of `specprobe check` start-up and throughput on
this machine. Prints a table; no figure is asserted.

  1. `check` without probes on the DeepSeek-V4 example (full matrix, --gpu H200): median and p90
     wall time of the whole process, JSON and text output.
  2. `check` on a synthetic DeepSeek-V3-size checkpoint (163 shards, ~92k tensors; written by
     checkpoint_bench): median wall time.
     And 20 deploy files checked in one call against that checkpoint (read once).
  3. 1,000 deploy files in one call (the deploy corpus, repeated): wall time, peak memory and the
     size of the JSON report, compact (the default for several files) and full (--results all).

usage: speed_bench.py [--build DIR] [--runs N] [--files N]
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, env=None):
    """Wall seconds, exit code, the child's peak RSS in MB (ru_maxrss of the latest child), stderr
    and the child's CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, p.returncode, max(after.ru_maxrss, before.ru_maxrss) / 1024.0, p.stderr.decode(errors="replace"), cpu


def series(cmd, runs, env=None):
    """Median and p90 wall ms, and the median CPU ms (steadier than wall on a shared machine)."""
    walls, cpus = [], []
    for _ in range(runs):
        w, rc, _, err, cpu = timed(cmd, env)
        if rc not in (0, 1, 4):
            sys.exit(f"{' '.join(cmd)}: exit {rc}: {err}")
        walls.append(w * 1000)
        cpus.append(cpu * 1000)
    walls.sort()
    return statistics.median(walls), walls[min(len(walls) - 1, len(walls) * 9 // 10)], statistics.median(cpus)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--files", type=int, default=1000)
    a = ap.parse_args()
    exe = os.path.join(a.build, "specprobe")
    env = dict(os.environ, HF_HUB_OFFLINE="1", XDG_CACHE_HOME=tempfile.mkdtemp(prefix="speed-cache-"))
    rows = []

    example = [exe, "check", os.path.join(ROOT, "docs/examples/seeds/dsv4-mtp.yaml"), "--model",
               os.path.join(ROOT, "docs/examples/checkpoints/deepseek-v4-flash"), "--gpu", "H200", "--lib",
               "vllm=0.25.1", "--probes", "off"]
    series(example + ["--format", "json"], 3, env)  # warm the page cache
    for fmt in ("json", "text"):
        med, p90, cpu = series(example + ["--format", fmt], a.runs, env)
        rows.append((f"check, DeepSeek-V4 example, full matrix, --format {fmt}",
                     f"median {med:.1f} ms, p90 {p90:.1f} ms (CPU {cpu:.1f} ms)"))

    bench = os.path.join(a.build, "bench", "checkpoint_bench")
    with tempfile.TemporaryDirectory(prefix="speed-") as tmp:
        if os.path.exists(bench):
            ckpt = os.path.join(tmp, "dsv3")
            os.makedirs(ckpt)
            subprocess.run([bench, "1", ckpt], check=True, stdout=subprocess.DEVNULL)
            shards = len([n for n in os.listdir(ckpt) if n.endswith(".safetensors")])
            cmd = [exe, "check", "--model", ckpt, "--gpu", "H200", "--probes", "off", "--format", "json", "--",
                   "vllm", "serve", ckpt, "--speculative-config", '{"method": "mtp", "num_speculative_tokens": 1}']
            series(cmd, 2, env)
            med, p90, cpu = series(cmd, max(5, a.runs // 3), env)
            rows.append((f"check, {shards}-shard checkpoint (checkpoint_bench)",
                         f"median {med:.1f} ms, p90 {p90:.1f} ms (CPU {cpu:.1f} ms)"))
            # Several deploy files against one --model: the checkpoint is read once per process.
            many = []
            for i in range(20):
                f = os.path.join(tmp, f"shared-{i:02d}.yaml")
                with open(f, "w") as out:
                    out.write(f"model: {ckpt}\nspeculative-config: "
                              f'{{"method": "mtp", "num_speculative_tokens": {i % 3 + 1}}}\n')
                many.append(f)
            w, rc, _, err, _ = timed([exe, "check", "--model", ckpt, "--gpu", "H200", "--probes", "off", "--format",
                                   "json", "-o", os.path.join(tmp, "many.json"), "--exit-zero"] + many, env)
            rows.append((f"20 files, one --model of {shards} shards", f"{w:.2f} s" if rc == 0 else f"exit {rc}: {err[:200]}"))
        else:
            rows.append(("check, 163-shard checkpoint", f"skipped: no {bench} (cmake --build --target checkpoint_bench)"))

        corpus = os.path.join(ROOT, "tests/corpus/deploy/files")
        sources = sorted(os.path.join(d, n) for d, _, ns in os.walk(corpus) for n in ns
                         if "malformed" not in d)
        files_dir = os.path.join(tmp, "files")
        os.makedirs(files_dir)
        files = []
        for i in range(a.files):
            src = sources[i % len(sources)]
            dst = os.path.join(files_dir, f"{i:04d}-{os.path.basename(src)}")
            shutil.copyfile(src, dst)
            files.append(dst)
        for label, extra in (("compact (default: -j one per core)", []), ("compact, -j 1", ["-j", "1"]),
                             ("full (--results all)", ["--results", "all"])):
            out = os.path.join(tmp, "report.json")
            cmd = [exe, "check", "--no-resolve", "--gpu", "H200", "--probes", "off", "--format", "json", "-o", out,
                   "--exit-zero"] + extra + files
            w, rc, rss, err, cpu = timed(cmd, env)
            if rc != 0:
                rows.append((f"{a.files} files in one call, {label}", f"exit {rc}: {err.strip()[:200]}"))
                continue
            size = os.path.getsize(out) / 1e6
            rows.append((f"{a.files} files in one call, {label}",
                         f"{w:.2f} s (CPU {cpu:.2f} s), report {size:.1f} MB, peak RSS {rss:.0f} MB"))

    width = max(len(r[0]) for r in rows)
    print(f"specprobe speed ({os.cpu_count()} cores, {exe})")
    for what, fig in rows:
        print(f"  {what:<{width}}  {fig}")


if __name__ == "__main__":
    main()
