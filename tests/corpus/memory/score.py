#!/usr/bin/env python3
"""Score specprobe's memory model against the engines' own start-up figures (cases/*.yaml).

For each case: the plan (the case's command or logged arguments) is checked offline with the
model's public config.json (--model), the GPU the case names (--gpu) and the engine release it
states (--lib), and the report's memory facts are compared with what the engine logged:

  weights    vLLM "Model loading took X GiB" (target + drafter, one rank) /
             SGLang "Load weight end ... mem usage" (the target)          within 3%
  kv tokens  vLLM "GPU KV cache size" / SGLang max_total_num_tokens       within 10%
  outcome    a logged start-up OOM or refusal must be predicted "fails" or "at-risk"
  blocked    a server that started must not be predicted "fails" (never block a working deployment)

Cases dated up to the split date are the build part (the model may be tuned on them); later ones
are held out. Prints a markdown report (or writes it with --out).

usage: score.py [--specprobe build/specprobe] [--out SCORES.md] [--split 2026-03-31] [--verbose]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
GIB = 1024.0 ** 3


def load_yaml(path):
    try:
        import yaml  # PyYAML
    except ImportError:  # the scorer runs where specprobe's test venv is
        sys.exit("score.py needs PyYAML (pip install pyyaml)")
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def plan_file(case, tmp):
    """The case's plan as a file specprobe reads: a command as a shell script, logged args as a log."""
    text = (case.get("command") or "").strip()
    if not text:
        return None
    log_like = any(s in text for s in ("non-default args:", "Namespace(", "ServerArgs(", "server_args="))
    path = os.path.join(tmp, case["id"] + (".log" if log_like else ".sh"))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    return path


def run_case(specprobe, case, tmp):
    cfg = case.get("model_config")
    if not cfg:
        return None, "no public config.json"
    cfg_dir = os.path.dirname(os.path.join(ROOT, cfg))
    plan = plan_file(case, tmp)
    if not plan:
        return None, "no command"
    gpu = (case.get("gpu") or {}).get("name")
    if not gpu:
        return None, "no GPU"
    args = [specprobe, "check", plan, "--model", cfg_dir, "--gpu", gpu, "--format", "json", "--probes", "off",
            "--no-matrix", "--no-resolve", "--offline", "--stack-probes", "off", "--no-suppressions",
            "--exit-zero", "--engine", case["engine"]]
    if case.get("engine_version"):
        args += ["--lib", "{}={}".format(case["engine"], case["engine_version"])]
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        return None, "specprobe: " + (p.stderr.strip().splitlines() or ["no output"])[-1][:160]
    reports = doc.get("reports", [doc]) if isinstance(doc, dict) else doc
    mem = reports[0].get("facts", {}).get("memory") if reports else None
    if not mem:
        return None, "no memory facts"
    if not mem.get("modelled"):
        return None, "not modelled: " + str(mem.get("reason"))
    return mem, None


def miss_reason(case):
    """Why the model does not predict this case's failure: its notes from "specprobe (" on, if any."""
    notes = " ".join(str(case.get("notes") or "").split())
    at = notes.find("specprobe (")
    return notes[at:] if at >= 0 else None


def rel_err(pred, logged):
    if pred is None or logged in (None, 0):
        return None
    return (pred - logged) / logged


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--specprobe", default=os.path.join(ROOT, "build", "specprobe"))
    ap.add_argument("--out")
    ap.add_argument("--split", default="2026-03-31")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()

    cases = []
    cdir = os.path.join(HERE, "cases")
    for name in sorted(os.listdir(cdir)):
        if name.endswith(".yaml"):
            cases.append(load_yaml(os.path.join(cdir, name)))

    rows, skipped = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for c in cases:
            mem, why = run_case(a.specprobe, c, tmp)
            if why:
                skipped.append((c["id"], why))
                continue
            lg = c.get("logged") or {}
            part = "build" if str(c.get("date", "")) <= a.split else "held-out"
            weights_pred = (mem.get("weights_bytes") or 0) / GIB
            if c["engine"] == "vllm":
                weights_pred += (mem.get("drafter_bytes") or 0) / GIB
            we = rel_err(weights_pred, lg.get("weights_gib"))
            ke = rel_err(mem.get("kv_tokens"), lg.get("kv_tokens"))
            kv_pred = (mem.get("kv_bytes") or 0) / GIB if mem.get("kv_bytes") is not None else None
            ae = rel_err(kv_pred, lg.get("kv_available_gib")) if c["engine"] == "vllm" else None
            bad = c.get("outcome", "started") != "started"
            predicted_bad = mem.get("status") in ("fails", "at-risk")
            rows.append({"id": c["id"], "part": part, "engine": c["engine"], "weights": we, "kv": ke,
                         "weights_pred": weights_pred, "weights_logged": lg.get("weights_gib"),
                         "kv_pred": mem.get("kv_tokens"), "kv_logged": lg.get("kv_tokens"), "avail": ae,
                         "avail_pred": kv_pred, "avail_logged": lg.get("kv_available_gib"),
                         "outcome": c.get("outcome", "started"), "status": mem.get("status"),
                         "oom_ok": (predicted_bad if bad else None), "summary": mem.get("summary"),
                         "why": miss_reason(c)})

    out = ["# Memory model against the engines' own figures", "",
           "`python3 tests/corpus/memory/score.py` ({} cases, {} scored; split {}: build = up to the split date, "
           "held-out = later).".format(len(cases), len(rows), a.split), ""]
    out.append("| part | cases | weights within 3% | KV tokens within 10% | vLLM KV memory within 10% | "
               "start-up failures predicted | started servers predicted to fail |")
    out.append("|---|---|---|---|---|---|---|")
    for part in ("build", "held-out", "all"):
        rs = [r for r in rows if part == "all" or r["part"] == part]
        w = [r for r in rs if r["weights"] is not None]
        k = [r for r in rs if r["kv"] is not None]
        o = [r for r in rs if r["oom_ok"] is not None]
        av = [r for r in rs if r["avail"] is not None]
        started = [r for r in rs if r["outcome"] == "started"]
        def frac(xs, ok):
            n = sum(1 for x in xs if ok(x))
            return "{}/{} ({:.0f}%)".format(n, len(xs), 100.0 * n / len(xs)) if xs else "-"
        out.append("| {} | {} | {} | {} | {} | {} | {} |".format(
            part, len(rs), frac(w, lambda r: abs(r["weights"]) <= 0.03), frac(k, lambda r: abs(r["kv"]) <= 0.10),
            frac(av, lambda r: abs(r["avail"]) <= 0.10), frac(o, lambda r: r["oom_ok"]),
            frac(started, lambda r: r["status"] == "fails")))
    out += ["", "## Cases", "",
            "| case | part | weights GiB (pred / logged) | KV tokens (pred / logged) | KV GiB (pred / logged) | outcome / status |",
            "|---|---|---|---|---|---|"]
    for r in rows:
        wtxt = "{:.2f} / {}".format(r["weights_pred"], r["weights_logged"]) if r["weights_logged"] else "-"
        if r["weights"] is not None:
            wtxt += " ({:+.1f}%)".format(100 * r["weights"])
        ktxt = "{} / {}".format(r["kv_pred"], r["kv_logged"]) if r["kv_logged"] else "-"
        if r["kv"] is not None:
            ktxt += " ({:+.1f}%)".format(100 * r["kv"])
        atxt = "{:.2f} / {}".format(r["avail_pred"], r["avail_logged"]) if r["avail_logged"] is not None and r["avail_pred"] is not None else "-"
        if r["avail"] is not None:
            atxt += " ({:+.1f}%)".format(100 * r["avail"])
        out.append("| {} | {} | {} | {} | {} | {} / {} |".format(r["id"], r["part"], wtxt, ktxt, atxt, r["outcome"], r["status"]))
    missed = [r for r in rows if r["oom_ok"] is False]
    if missed:
        out += ["", "## Start-up failures not predicted", "",
                "Each case's own account (its notes from \"specprobe (\" on) of why the plan, the checkpoint, "
                "the engine version and the GPU do not predict it.", ""]
        for r in missed:
            out.append("- {} ({} / {}): {}".format(r["id"], r["outcome"], r["status"],
                                                    r["why"] or "no account in the case's notes yet"))
    out += ["", "## Not scored", ""]
    for cid, why in skipped:
        out.append("- {}: {}".format(cid, why))
    text = "\n".join(out) + "\n"
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
