#!/usr/bin/env python3
"""Read rate of a specprobe binary on the deploy corpus (tests/corpus/deploy), from the outside.

Runs `BINARY check --gpu H100 --probes off --no-matrix --unknown-ok --format json FILE` on every
file of manifest.yaml and compares the plan facts of each report with the manifest, field by field
as tests/inputs/deploy_corpus_test.cpp does (without its known_gaps.yaml): a binary that predates a
fact (deploy.gpus, deploy.engine_version, deploy.unresolved) counts as not matching where the
manifest states one. Prints exit codes and files whose facts all match, by form. Used for the
before/after figures in tests/corpus/deploy/README.md.

usage: deploy_corpus_rate.py BINARY [--list]
"""
import collections
import json
import os
import subprocess
import sys

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus", "deploy")


def get(facts, dotted):
    cur = facts
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def text(v):
    if v is None:
        return None
    if isinstance(v, str):
        return v
    return json.dumps(v)


def want_text(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def compare(server, facts):
    bad = []
    engine = server.get("engine")

    def same(field, want, got, ci=False, default=None):
        w, g = want_text(want), text(got)
        if w is None:
            ok = g is None or (default is not None and g == default)
        else:
            ok = g is not None and ((g.lower() == w.lower()) if ci else g == w)
        if not ok:
            bad.append(f"{field}: manifest {w}, read {g}")

    same("engine", engine, get(facts, "engine.name"))
    same("version", server.get("version"), get(facts, "deploy.engine_version"))
    same("model", server.get("model"), get(facts, "model.id"))
    method = None if get(facts, "spec.enabled") is False else get(facts, "spec.method")
    same("spec_method", server.get("spec_method"), method)
    same("k", server.get("k"), get(facts, "spec.num_steps" if engine == "sglang" else "spec.num_speculative_tokens"))
    for f in ("tp", "pp", "dp"):
        same(f, server.get(f), get(facts, "serve." + f), default="1")
    same("kv_cache_dtype", server.get("kv_cache_dtype"), get(facts, "serve.kv_cache_dtype"), default="auto")
    same("attention_backend", server.get("attention_backend"), get(facts, "attention.requested"), ci=True)
    same("gpus", server.get("gpus"), get(facts, "deploy.gpus"))
    want = sorted(server.get("unresolved") or [])
    got = sorted(n for n in (get(facts, "deploy.unresolved") or []) if not n.startswith("<"))
    if want != got:
        bad.append(f"unresolved: manifest {want}, read {got}")
    return bad


UNKNOWN_OK = []


def main():
    binary = sys.argv[1]
    # --unknown-ok (exit 4 -> 0) where the binary has it.
    if "--unknown-ok" in subprocess.run([binary, "check", "--help"], capture_output=True, text=True).stdout:
        UNKNOWN_OK.append("--unknown-ok")
    listing = "--list" in sys.argv
    manifest = yaml.safe_load(open(os.path.join(ROOT, "manifest.yaml")))
    codes = collections.Counter()
    by_form = collections.defaultdict(lambda: collections.Counter())
    for e in manifest:
        form = e["form"] + (" (malformed)" if e.get("malformed") else "")
        path = os.path.join(ROOT, "files", e["file"])
        p = subprocess.run([binary, "check", "--gpu", "H100", "--probes", "off", "--no-matrix", *UNKNOWN_OK,
                            "--format", "json", path], capture_output=True, text=True, timeout=60)
        codes[p.returncode] += 1
        t = by_form[form]
        t["files"] += 1
        t[f"exit {p.returncode}"] += 1
        if p.returncode in (2, 3):
            if listing:
                print(f"exit {p.returncode} {e['file']}: {p.stderr.strip()[:160]}")
            if e.get("malformed") and p.returncode == 2:
                t["match"] += 1  # a malformed file may be an input error
            continue
        doc = json.loads(p.stdout)
        reports = doc["reports"] if "reports" in doc else [doc]
        # A file that starts no server is one report of form "none" (verdict unknown): no servers.
        reports = [r for r in reports if r.get("input", {}).get("form") != "none"]
        servers = e.get("servers") or []
        bad = [] if len(servers) == len(reports) else [f"servers: manifest {len(servers)}, read {len(reports)}"]
        for s, r in zip(servers, reports):
            bad += compare(s, r["facts"])
        if not bad:
            t["match"] += 1
        elif listing:
            print(f"mismatch {e['file']}: " + "; ".join(bad))
    print(f"{'form':28} files  exit0/1/4  exit2  exit3  facts-match")
    total = collections.Counter()
    for form in sorted(by_form):
        t = by_form[form]
        ok = t["exit 0"] + t["exit 1"] + t["exit 4"]
        print(f"{form:28} {t['files']:5}  {ok:9}  {t['exit 2']:5}  {t['exit 3']:5}  {t['match']:11}")
        total.update(t)
    ok = total["exit 0"] + total["exit 1"] + total["exit 4"]
    print(f"{'all':28} {total['files']:5}  {ok:9}  {total['exit 2']:5}  {total['exit 3']:5}  {total['match']:11}")
    print("exit codes:", dict(sorted(codes.items())))


if __name__ == "__main__":
    main()
