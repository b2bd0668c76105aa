#!/usr/bin/env python3
"""How many deploy-corpus reports end "unknown" because the model or draft could not be read,
with and without the Hub.

Runs `BINARY check FILE --gpu H100 --probes off --no-matrix --unknown-ok --format json` on every
well-formed file of tests/corpus/deploy/manifest.yaml, twice:
  offline  HF_HUB_OFFLINE=1 (what specprobe could read before the resolver: local paths only)
  hub      HF_ENDPOINT pointed at the Hub stand-in (tests/support/hub_standin.py) serving every
           model config of tests/corpus/models/<org>--<name>/, a fresh XDG_CACHE_HOME
and prints, per mode: files, files with an unknown verdict, files unknown because a model or draft
could not be read (a missing fact under model./draft./checkpoint., or an engine check that lacked
a model), and the exit codes (2 and 3 must not grow: none may fail because of the resolver).
--base BINARY runs the offline mode with another binary (the one before the resolver).
--compare also checks every file whose model the stand-in serves: the report via the Hub must
equal the report with --model-dir ID=DIR on the same files (verdict and every result's status).

Never reaches the network: the only endpoint is the stand-in on 127.0.0.1, and HOME points into a
temporary directory (no user Hugging Face cache or token is read).

usage: resolver_rate.py BINARY [--base BINARY] [--compare] [--list] [--jobs N]
"""
import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "corpus", "deploy")
MODELS = os.path.join(ROOT, "tests", "corpus", "models")
STANDIN = os.path.join(ROOT, "tests", "support", "hub_standin.py")


def reports_of(doc):
    if isinstance(doc, dict) and "reports" in doc:
        return doc["reports"]
    return [doc] if isinstance(doc, dict) else []


def model_missing(report):
    """True when the report is unknown and a model or draft it could not read is among the reasons."""
    if report.get("verdict") != "unknown":
        return False
    for m in report.get("missing") or []:
        fact = m.get("fact", "")
        if fact.startswith(("model.", "draft.", "checkpoint.")):
            return True
        if fact == "engine_check.status" and "model" in (m.get("supply") or ""):
            return True
    return False


def start_standin(tmp):
    root = os.path.join(tmp, "hub")
    served = set()
    for d in sorted(os.listdir(MODELS)):
        full = os.path.join(MODELS, d)
        if "--" not in d or not os.path.isdir(full):
            continue
        org, name = d.split("--", 1)
        os.makedirs(os.path.join(root, org), exist_ok=True)
        os.symlink(full, os.path.join(root, org, name))
        served.add(f"{org}/{name}")
    port_file = os.path.join(tmp, "port")
    proc = subprocess.Popen([sys.executable, STANDIN, "--root", root, "--port-file", port_file],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Up to a minute: under a loaded -j suite the stand-in's start (Python, its imports, an fsync)
    # has taken more than the 10 s this waited before.
    for _ in range(1200):
        if os.path.exists(port_file) or proc.poll() is not None:
            break
        time.sleep(0.05)
    if not os.path.exists(port_file):
        proc.kill()
        sys.exit(f"the Hub stand-in did not start (exit {proc.poll()})")
    with open(port_file) as f:
        port = int(f.read().strip())
    return proc, f"http://127.0.0.1:{port}", served


def run(binary, path, env, extra=(), gpu="H100", timeout=300):
    cmd = [binary, "check", path, "--gpu", gpu, "--probes", "off", "--no-matrix", "--unknown-ok",
           "--format", "json", *extra]
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    took = time.monotonic() - t0
    try:
        doc = json.loads(p.stdout) if p.stdout.strip() else None
    except ValueError:
        doc = None
    return p.returncode, reports_of(doc), took, p.stderr


def summary_key(report):
    results = {r.get("id"): r.get("status") for r in report.get("results") or []}
    return report.get("verdict"), results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--base", help="binary for the offline mode (default: BINARY)")
    ap.add_argument("--compare", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    manifest = yaml.safe_load(open(os.path.join(CORPUS, "manifest.yaml")))
    entries = [e for e in manifest if not e.get("malformed")]
    with tempfile.TemporaryDirectory() as tmp:
        proc, endpoint, served = start_standin(tmp)
        try:
            home = os.path.join(tmp, "home")
            os.makedirs(home)
            base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LC_ALL": "C"}
            offline_env = dict(base_env, HF_HUB_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9",
                               XDG_CACHE_HOME=os.path.join(tmp, "cache-offline"))
            hub_env = dict(base_env, HF_ENDPOINT=endpoint, XDG_CACHE_HOME=os.path.join(tmp, "cache-hub"))
            modes = [("offline", args.base or args.binary, offline_env), ("hub", args.binary, hub_env)]
            table = {}
            per_file = collections.defaultdict(dict)
            for mode, binary, env in modes:
                counts = collections.Counter()
                times = []
                with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
                    futs = {pool.submit(run, binary, os.path.join(CORPUS, "files", e["file"]), env): e for e in entries}
                    for fut in concurrent.futures.as_completed(futs):
                        e = futs[fut]
                        rc, reports, took, _ = fut.result()
                        times.append(took)
                        counts["files"] += 1
                        counts[f"exit {rc}"] += 1
                        unknown = any(r.get("verdict") == "unknown" for r in reports)
                        by_model = any(model_missing(r) for r in reports)
                        counts["unknown"] += unknown
                        counts["unknown: model or draft not read"] += by_model
                        per_file[e["file"]][mode] = (rc, unknown, by_model, reports)
                times.sort()
                counts["median ms"] = int(1000 * times[len(times) // 2]) if times else 0
                table[mode] = counts
            keys = ["files", "unknown", "unknown: model or draft not read", "exit 0", "exit 1", "exit 4", "exit 2",
                    "exit 3", "median ms"]
            print(f"{'':36}" + "".join(f"{m:>10}" for m, _, _ in modes))
            for k in keys:
                print(f"{k:36}" + "".join(f"{table[m].get(k, 0):>10}" for m, _, _ in modes))
            worse = [f for f, v in per_file.items() if v["hub"][0] in (2, 3) and v["offline"][0] not in (2, 3)]
            print(f"files that fail (exit 2/3) only with the Hub: {len(worse)}")
            for f in worse:
                print("  ", f)
            if args.list:
                for f, v in sorted(per_file.items()):
                    if v["offline"][2] != v["hub"][2]:
                        print(f"  now read: {f}")
                    elif v["hub"][2]:
                        print(f"  still unknown (model): {f}")
            rc = 1 if worse else 0
            if args.compare:
                rc = max(rc, compare(args.binary, entries, served, per_file, hub_env))
            return rc
        finally:
            proc.terminate()
            proc.wait()


def compare(binary, entries, served, per_file, hub_env):
    """Files whose models the stand-in serves: the Hub's report equals the local directories'."""
    checked = differ = 0
    for e in entries:
        servers = e.get("servers") or []
        ids = {s.get("model") for s in servers} | {s.get("draft_model") for s in servers}
        ids = {i for i in ids if i in served}
        if not ids:
            continue
        extra = []
        for i in sorted(ids):
            extra += ["--model-dir", f"{i}={os.path.join(MODELS, i.replace('/', '--'))}"]
        env = dict(hub_env, HF_HUB_OFFLINE="1")
        rc, reports, _, err = run(binary, os.path.join(CORPUS, "files", e["file"]), env, extra)
        hub_rc, _, _, hub_reports = per_file[e["file"]]["hub"]
        checked += 1
        a = [summary_key(r) for r in hub_reports]
        b = [summary_key(r) for r in reports]
        if rc != hub_rc or a != b:
            differ += 1
            print(f"DIFFERS {e['file']}: hub exit {hub_rc}, local exit {rc}")
            for (va, ra), (vb, rb) in zip(a, b):
                if va != vb:
                    print(f"    verdict {va} vs {vb}")
                for k in sorted(set(ra) | set(rb)):
                    if ra.get(k) != rb.get(k):
                        print(f"    {k}: {ra.get(k)} vs {rb.get(k)}")
    print(f"compare: {checked} files whose models the stand-in serves, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
