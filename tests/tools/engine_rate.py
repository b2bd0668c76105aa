#!/usr/bin/env python3
"""How often the engine check answers on the deploy corpus, as a user with engine environments
would run it.

Runs `BINARY check FILE --gpu H100 (or --gpu) --probes off --stack-probes off --no-matrix --unknown-ok
--format json --engine-env auto` on every well-formed file of tests/corpus/deploy/manifest.yaml
whose servers run vLLM or SGLang, with
  - the Hub stand-in (tests/support/hub_standin.py) serving every model config of
    tests/corpus/models/<org>--<name>/ (HF_ENDPOINT; nothing reaches the network),
  - XDG_CACHE_HOME in a temporary directory whose specprobe/engines/ links the engine venvs of
    BUILD_DIR/engines (tests/engines/setup_engines.sh BUILD_DIR), so --engine-env auto asks the
    release a file names where that environment exists, and the newest one where it names none,
and prints, per engine: reports, the engine check's outcome (ok / refused = answered; missing-input,
adapter-error, no-environment, ...), the share answered among the reports it could answer (its
models read, an environment of its release here), the time per file, and why the others were not
answered. Exit 1 when --min-share is given and not reached.

usage: engine_rate.py BINARY [--engines BUILD_DIR/engines] [--jobs N] [--only A,B] [--gpu NAME] [--min-share F]
                       [--list]
"""
import argparse
import collections
import concurrent.futures
import os
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import resolver_rate  # noqa: E402
from resolver_rate import CORPUS, start_standin  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
ANSWERED = ("ok", "refused")


def run(binary, path, env, timeout, gpu):
    extra = ["--stack-probes", "off", "--engine-env", "auto", "--engine-timeout", str(timeout)]
    return resolver_rate.run(binary, path, env, extra, gpu=gpu, timeout=timeout + 120)


def fact(report, dotted):
    cur = report.get("facts") or {}
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def models_read(report):
    """The target's config was read (and the draft's, where the plan names a draft model)."""
    missing = {m.get("fact", "") for m in report.get("missing") or []}
    if any(f.startswith(("model.", "draft.")) for f in missing):
        return False
    return fact(report, "model.architecture") is not None or fact(report, "model.model_type") is not None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--engines", default=os.path.join(ROOT, "build", "engines"))
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--only", default="", help="comma-separated substrings: only files whose path has one")
    ap.add_argument("--gpu", default="H100", help="the GPU every file is checked for (default H100)")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--min-share", type=float, default=None)
    ap.add_argument("--list", action="store_true", help="also list every report not answered, eligible or not")
    args = ap.parse_args()
    manifest = yaml.safe_load(open(os.path.join(CORPUS, "manifest.yaml")))
    only = [o for o in args.only.split(",") if o]
    entries = [e for e in manifest if not e.get("malformed") and (not only or any(o in e["file"] for o in only))
               and any(s.get("engine") in ("vllm", "sglang") for s in e.get("servers") or [])]
    with tempfile.TemporaryDirectory() as tmp:
        envs = os.path.join(tmp, "cache", "specprobe", "engines")
        os.makedirs(envs)
        linked = []
        for name in sorted(os.listdir(args.engines)) if os.path.isdir(args.engines) else []:
            venv = os.path.join(args.engines, name)
            if os.path.isfile(os.path.join(venv, ".specprobe-engine.json")):
                os.symlink(os.path.abspath(venv), os.path.join(envs, name))
                linked.append(name)
        if not linked:
            print(f"engine_rate: no engine environments in {args.engines} (tests/engines/setup_engines.sh BUILD_DIR)")
            return 0
        proc, endpoint, _ = start_standin(tmp)
        try:
            home = os.path.join(tmp, "home")
            os.makedirs(home)
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LC_ALL": "C",
                   "HF_ENDPOINT": endpoint, "XDG_CACHE_HOME": os.path.join(tmp, "cache")}
            rows = []
            t_all = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
                futs = {pool.submit(run, args.binary, os.path.join(CORPUS, "files", e["file"]), env, args.timeout, args.gpu): e
                        for e in entries}
                for fut in concurrent.futures.as_completed(futs):
                    e = futs[fut]
                    rc, reports, took, err = fut.result()
                    for r in reports or [{"verdict": "none", "facts": {}}]:
                        rows.append((e["file"], rc, r, took, err))
            wall = time.monotonic() - t_all
        finally:
            proc.terminate()
            proc.wait()
    print(f"environments: {', '.join(linked)}; {len(entries)} files, wall {wall:.0f} s with {args.jobs} at once")
    by_engine = collections.defaultdict(list)
    for row in rows:
        engine = fact(row[2], "engine.name") or "?"
        by_engine[engine].append(row)
    failed = False
    for engine, rs in sorted(by_engine.items()):
        outcomes = collections.Counter(fact(r, "engine_check.outcome") or "(none)" for _, _, r, _, _ in rs)
        eligible = [row for row in rs if models_read(row[2]) and fact(row[2], "engine_check.outcome") != "no-environment"]
        answered = [row for row in eligible if fact(row[2], "engine_check.outcome") in ANSWERED]
        times = sorted(row[3] for row in rs)
        share = len(answered) / len(eligible) if eligible else 0.0
        print(f"\n{engine}: {len(rs)} reports; engine check outcome: " +
              ", ".join(f"{k} {v}" for k, v in outcomes.most_common()))
        print(f"  models read and an environment of the release here: {len(eligible)}; answered (ok or refused): "
              f"{len(answered)} = {100 * share:.0f}%")
        if times:
            print(f"  time per file: median {times[len(times) // 2]:.1f} s, max {times[-1]:.1f} s")
        cached = sum(1 for row in rs if fact(row[2], "engine_check.cached"))
        print(f"  answers from the cache: {cached}")
        for f, rc, r, took, _ in sorted(rs if args.list else eligible, key=lambda x: x[0]):
            out = fact(r, "engine_check.outcome")
            if out == "refused" and args.list:
                print(f"  refused: {f} [{fact(r, 'engine_check.stage')}] {' '.join(str(fact(r, 'engine_check.message')).split())[:400]}")
            if out not in ANSWERED:
                why = fact(r, "engine_check.missing") or fact(r, "engine_check.reason") or fact(r, "engine_check.message")
                read = "" if models_read(r) else " (models not read)"
                print(f"  not answered: {f} [{out}]{read} {str(why)[:300]}")
        if args.min_share is not None and eligible and share < args.min_share:
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
