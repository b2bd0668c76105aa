#!/usr/bin/env python3
"""Score specprobe against the held-out corpus (a benchmark, not a test).

For every case under cases/<id>/ this runs

    build/specprobe check <serve file> --format json --probes off \
        [--model <model_dir>] [--gpu <mapped gpu>] [--lib <pkg>=<version> ...] \
        [--advisories-before DATE] [--ignore SPnnnn ...]

and compares the verdict with the outcome the public report observed.

Outcomes (defined mechanically):
  failing case (outcome crash | wrong-output)
    CAUGHT (strict)   the verdict is `not-supported` (an unsuppressed error finding);
    CAUGHT (lenient)  at least one unsuppressed finding of severity warning or error, whatever its
                      topic ("plausibly matches" is taken as: anything specprobe would print as a
                      warning or worse for this plan; no topic matching is attempted, so the lenient
                      figure is an upper bound);
  works case (outcome works)
    FALSE ALARM       the verdict is `not-supported` (lenient false alarms: any warning+ finding);
  UNREADABLE          specprobe exited 2 or 3 (or printed no JSON): counted apart from both, with the
                      reason from stderr.

Usage (from the repository root):
  python3 tests/corpus/holdout/score.py                         # "before": advisories < 2026-06-01
  python3 tests/corpus/holdout/score.py --all-advisories        # every advisory (NOT a generalization measure)
  python3 tests/corpus/holdout/score.py --clean-rules           # also suppress rules citing reports >= the split
  python3 tests/corpus/holdout/score.py --json out.json         # per-case results, machine readable
  python3 tests/corpus/holdout/score.py --summary               # every stage: the SCORES.md table (unknown = own column)

Only the Python standard library is used. case.yaml is read with the small flow-YAML reader below
(the files use `key: value` lines, flow maps and flow lists only).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import shlex
import subprocess
import sys
from collections import OrderedDict, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SPLIT = "2026-06-01"

# ---------------------------------------------------------------------------------------------
# GPU names as the cases state them -> what `specprobe check --gpu` accepts (src/gpu/gpu_info.cpp).
# None = not passed (the reason is printed); specprobe then evaluates no declared GPU.
GPU_MAP = OrderedDict([
    ("B200", ("B200", "same card")),
    ("B300", ("B300", "same card (sm_103)")),
    ("H200", ("H200", "same card")),
    ("H100", ("H100", "same card")),
    ("H100 (stated as 'H100 141GB')", ("H100", "sm_90 either way (a 141 GB Hopper is an H200; the arch is the same)")),
    ("H20", ("H20", "same card")),
    ("H20-3e", ("H20", "H20-3e is the 141 GB H20; same sm_90 chip")),
    ("GB10", ("GB10", "same card (sm_121)")),
    ("RTX PRO 6000", ("RTXPRO6000", "same card (sm_120)")),
    ("RTX 3090", ("RTX3090", "same card (sm_86)")),
    ("MI355X", ("MI355X", "same card (gfx950)")),
    ("MI355X (mi35x image)", ("MI355X", "the rocm mi35x image targets MI350/MI355 (gfx950)")),
    ("Turing (sm_75; card not named in the excerpt)", ("sm_75", "arch stated, card not: passed as sm_75")),
    ("AMD Instinct (model not stated)", (None, "card not stated (could be gfx942 or gfx950): not passed")),
    ("AMD (ROCm; card not named in the excerpt)", (None, "card not stated: not passed")),
    ("NVIDIA (CUDA; model not stated)", (None, "card not stated: not passed")),
    ("Intel Arc Pro B70", (None, "Intel XPU: not in specprobe's GPU table (NVIDIA and AMD only): not passed")),
])

# Library keys in case.yaml -> --lib package names.
LIB_KEYS = {"vllm": "vllm", "sglang": "sglang", "flashinfer": "flashinfer", "torch": "torch"}

PEP440 = r"v?(\d+(?:\.\d+)+(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[A-Za-z0-9.]+)?)"


def map_version(raw):
    """A case's free-text version -> (version for --lib or None, how it was read).

    Mechanical: a bare PEP 440 version is passed as is; a PEP 440 version followed by a space or '('
    (an image or a note after it) passes the leading version; an image tag `...:vX.Y.Z...` passes
    X.Y.Z; a 0.0.0 dev base (feature-branch builds) and free text (main <sha>, PR branch, nightly)
    are not versions and are not passed.
    """
    if raw is None:
        return None, "not stated"
    s = str(raw).strip()
    m = re.fullmatch(PEP440, s)
    if not m:
        m = re.match(PEP440 + r"(?=[\s(;])", s)
    if not m:
        m = re.search(r":" + PEP440 + r"(?=-|$)", s)
        if m:
            v = m.group(1)
            return v, f"image tag in {s!r} -> {v}"
    if not m:
        return None, f"free text {s!r}: not a version, not passed"
    v = m.group(1)
    if v.startswith("0.0.0"):
        return None, f"{s!r}: 0.0.0 dev base of a feature-branch build, not passed"
    return v, ("as stated" if v == s or "v" + v == s else f"leading version of {s!r} -> {v}")


# ---------------------------------------------------------------------------------------------
# A small reader for the flow-YAML subset the case files use.

def _strip_comment(line):
    out, q = [], None
    for i, ch in enumerate(line):
        if q:
            if ch == "\\" and q == '"':
                out.append(ch)
                continue
            if ch == q:
                q = None
        elif ch in "\"'":
            q = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            break
        out.append(ch)
    return "".join(out).rstrip()


class _Flow:
    def __init__(self, s):
        self.s, self.i = s, 0

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] in " \t":
            self.i += 1

    def value(self, stop=""):
        self.ws()
        c = self.s[self.i] if self.i < len(self.s) else ""
        if c == "{":
            self.i += 1
            d = OrderedDict()
            while True:
                self.ws()
                if self.s[self.i] == "}":
                    self.i += 1
                    return d
                k = self.scalar(":")
                self.ws()
                assert self.s[self.i] == ":", self.s
                self.i += 1
                d[str(k)] = self.value(",}")
                self.ws()
                if self.s[self.i] == ",":
                    self.i += 1
        if c == "[":
            self.i += 1
            arr = []
            while True:
                self.ws()
                if self.s[self.i] == "]":
                    self.i += 1
                    return arr
                arr.append(self.value(",]"))
                self.ws()
                if self.s[self.i] == ",":
                    self.i += 1
        return self.scalar(stop)

    def scalar(self, stop):
        self.ws()
        c = self.s[self.i] if self.i < len(self.s) else ""
        if c in "\"'":
            j = self.i + 1
            buf = []
            while self.s[j] != c:
                if c == '"' and self.s[j] == "\\":
                    j += 1
                    buf.append({"n": "\n", "t": "\t"}.get(self.s[j], self.s[j]))
                else:
                    buf.append(self.s[j])
                j += 1
            self.i = j + 1
            return "".join(buf)
        j = self.i
        while j < len(self.s) and self.s[j] not in stop:
            j += 1
        tok = self.s[self.i:j].strip()
        self.i = j
        if tok in ("null", "~", ""):
            return None
        if tok in ("true", "false"):
            return tok == "true"
        if re.fullmatch(r"-?\d+", tok):
            return int(tok)
        return tok


def read_case_yaml(path):
    d = OrderedDict()
    for line in Path(path).read_text().splitlines():
        line = _strip_comment(line)
        if not line.strip():
            continue
        m = re.match(r"^([A-Za-z_][\w-]*):\s*(.*)$", line)
        if not m:
            raise ValueError(f"{path}: unsupported line {line!r}")
        d[m.group(1)] = _Flow(m.group(2)).value("")
    return d


# ---------------------------------------------------------------------------------------------
# Rules that cite public reports opened on or after the split date (their fixtures or conditions may
# have been written from the held-out window). Issue/PR numbers are monotonic in time; the bounds are
# the last number seen opened before the split and the first seen on or after it (advisories/ledger).

# General rules written after the first scoring, from the question "which derived facts and rules would
# have caught the late reports" (SCORES.md). They are suppressed unless --general-rules is given, so the
# "before" figures are those of the catalog as it stood before that analysis.
EXTRA_ARGS = []  # --rules-dir / --advisories-dir pass-through (development: a binary built before the data)

GENERAL_RULES = ["SP3043"]

REPORT_BOUNDS = {  # project: (last number opened before SPLIT, first number opened on/after SPLIT)
    "vllm-project/vllm": (44087, 44184),
    "sgl-project/sglang": (26715, 26916),
}


def rules_citing_after_split(rules_dir):
    out = {}
    for f in sorted(Path(rules_dir).glob("*/SP*.yaml")):
        if f.name.endswith(".test.yaml"):
            continue
        text = f.read_text()
        m = re.search(r"^id:\s*(SP\d+)", text, re.M)
        if not m:
            continue
        rid = m.group(1)
        refs = re.findall(r"(vllm-project/vllm|sgl-project/sglang)(?:#|/(?:issues|pull)/)(\d+)", text)
        late, unsure = [], []
        for proj, num in refs:
            lo, hi = REPORT_BOUNDS[proj]
            n = int(num)
            if n >= hi:
                late.append(f"{proj}#{n}")
            elif n > lo:
                unsure.append(f"{proj}#{n}")
        if late or unsure:
            out[rid] = sorted(set(late)) + [u + " (date between bounds)" for u in sorted(set(unsure))]
    return out


# ---------------------------------------------------------------------------------------------

def serve_file(case_dir):
    files = [p for p in sorted(case_dir.iterdir()) if p.is_file() and p.name != "case.yaml"]
    if not files:
        return None
    for p in files:
        if p.name == "serve.sh":
            return p
    return files[0]


def build_command(binary, case_dir, case, advisories_before, ignore):
    notes = []
    serve = serve_file(case_dir)
    cmd = [str(binary), "check", str(serve.relative_to(REPO)), "--format", "json", "--probes", "off"]
    if case.get("model_dir"):
        cmd += ["--model", str((HERE / case["model_dir"]).relative_to(REPO))]
    gpu = case.get("gpu")
    if gpu is not None:
        if gpu not in GPU_MAP:
            raise SystemExit(f"{case_dir.name}: GPU {gpu!r} has no entry in GPU_MAP; add one")
        mapped, why = GPU_MAP[gpu]
        if mapped:
            cmd += ["--gpu", mapped]
        notes.append(f"gpu {gpu!r} -> {mapped or 'not passed'} ({why})")
    else:
        notes.append("gpu not stated: not passed")
    for key, val in (case.get("versions") or {}).items():
        pkg = LIB_KEYS.get(key)
        if pkg is None:
            continue
        v, how = map_version(val)
        if v:
            cmd += ["--lib", f"{pkg}={v}"]
        if val is not None and how != "as stated":
            notes.append(f"{key}: {how}")
    if advisories_before:
        cmd += ["--advisories-before", advisories_before]
    cmd += EXTRA_ARGS
    for rid in ignore:
        cmd += ["--ignore", rid]
    return cmd, notes


def run_case(cmd):
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    res = {"rc": p.returncode, "stderr": p.stderr.strip()}
    if p.returncode in (2, 3):
        res["unreadable"] = (p.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        return res
    try:
        rep = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        res["unreadable"] = f"exit {p.returncode}, no JSON on stdout ({e}); stderr: {p.stderr.strip()[-200:]}"
        return res
    res["verdict"] = rep.get("verdict")
    res["git_sha"] = (rep.get("tool") or {}).get("git_sha")
    res["tool_version"] = (rep.get("tool") or {}).get("version")
    findings = []
    for r in rep.get("results", []):
        if r.get("status") != "fail" or r.get("suppressed"):
            continue
        findings.append({"id": r["id"], "severity": r["severity"], "stage": r.get("stage"),
                         "category": r.get("category"), "advisory": bool(r.get("advisory")),
                         # binaries before issue 48 have no certainty: every error was blocking
                         "certainty": r.get("certainty") or "deterministic",
                         "message": (r.get("message") or "")[:240]})
    res["findings"] = findings
    res["errors_undecided"] = sorted(r["id"] for r in rep.get("results", []) if r.get("status") == "error")
    res["notes"] = [n.get("message", "")[:240] for n in rep.get("notes", [])]
    facts = rep.get("facts") or {}
    gpu = facts.get("gpu") or {}
    res["gpu_evaluated"] = gpu.get("name")
    res["gpu_fallback"] = gpu.get("fallback")
    return res


def classify(case, res):
    """One class per case. Verdict `unknown` (exit 4: a fact the plan needs is missing) is its own
    class: neither a catch nor a false alarm."""
    if "unreadable" in res:
        return "unreadable"
    # Blocking: deterministic errors (issue 48). An at-risk (conditional) error does not block: a
    # failing case it flags is "at-risk" (lenient), a works case it flags "at-risk" (not a false alarm).
    errs = [f for f in res["findings"] if f["severity"] == "error" and f["certainty"] == "deterministic"]
    risks = [f for f in res["findings"] if f["severity"] == "error" and f["certainty"] == "conditional"]
    warns = [f for f in res["findings"] if f["severity"] in ("error", "warning")]
    failing = case["outcome"] in ("crash", "wrong-output")
    strict = res["verdict"] == "not-supported"
    assert strict == bool(errs), (res["verdict"], errs)
    if not strict and res["verdict"] == "unknown":
        return "unknown"
    if failing:
        return "caught" if strict else ("at-risk" if risks else "caught-lenient" if warns else "missed")
    return "false-alarm" if strict else ("at-risk" if risks else "warned" if warns else "clean")


def has_warning(res):
    return any(f["severity"] in ("error", "warning") for f in res.get("findings", []))


def pct(a, b):
    return f"{a}/{b} ({100.0 * a / b:.0f}%)" if b else f"{a}/0 (-)"


def figures(rows):
    fail = [r for r in rows if r["case"]["outcome"] != "works" and r["class"] != "unreadable"]
    works = [r for r in rows if r["case"]["outcome"] == "works" and r["class"] != "unreadable"]
    unread = [r for r in rows if r["class"] == "unreadable"]
    strict = sum(r["class"] == "caught" for r in fail)
    lenient = sum(r["class"] == "caught" or has_warning(r["res"]) for r in fail)
    fa = sum(r["class"] == "false-alarm" for r in works)
    fa_len = sum(r["class"] == "false-alarm" or has_warning(r["res"]) for r in works)
    return {"failing": len(fail), "works": len(works), "strict": strict, "lenient": lenient,
            "unknown_failing": sum(r["class"] == "unknown" for r in fail),
            "missed": sum(r["class"] in ("missed", "caught-lenient", "at-risk") for r in fail),
            "at_risk_failing": sum(r["class"] == "at-risk" for r in fail),
            "at_risk_works": sum(r["class"] == "at-risk" for r in works),
            "false_alarms": fa, "false_alarms_lenient": fa_len,
            "unknown_works": sum(r["class"] == "unknown" for r in works),
            "clean": sum(r["class"] in ("clean", "warned") for r in works),
            "unreadable": len(unread)}


def fig_row(label, f):
    decided = f['works'] - f['unknown_works']
    return (f"| {label} | {pct(f['strict'], f['failing'])} | {pct(f['unknown_failing'], f['failing'])} | "
            f"{pct(f['missed'], f['failing'])} | {pct(f['at_risk_failing'], f['failing'])} | "
            f"{pct(f['lenient'], f['failing'])} | "
            f"{pct(f['false_alarms'], f['works'])} | {pct(f['false_alarms'], decided)} | "
            f"{pct(f['at_risk_works'], f['works'])} | {pct(f['unknown_works'], f['works'])} | "
            f"{pct(f['false_alarms_lenient'], f['works'])} | {f['unreadable']} |")


FIG_HEAD = ("| group | recall (not-supported) | failing: unknown | failing: missed | failing: at risk "
            "| recall lenient (any warning+) | false alarms (not-supported) | false alarms among decided works "
            "| works: at risk | works: unknown | lenient false alarms (any warning+) | unreadable |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|")


def ignore_list(late_rules, clean, general):
    out = set(late_rules) if clean else set()
    out -= set(GENERAL_RULES)
    if not general:
        out |= set(GENERAL_RULES)
    return sorted(out)


def git_head():
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                           capture_output=True, text=True).stdout.strip()
    return head, dirty


def score(binary, adv_before, ignore, only=None):
    rows = []
    for case_dir in sorted((HERE / "cases").iterdir()):
        if only and not re.search(only, case_dir.name):
            continue
        case = read_case_yaml(case_dir / "case.yaml")
        cmd, notes = build_command(binary, case_dir, case, adv_before, ignore)
        res = run_case(cmd)
        rows.append({"id": case_dir.name, "case": case, "cmd": cmd, "notes": notes, "res": res,
                     "class": classify(case, res)})
    return rows


STAGES = [
    ("1 before, clean", "advisories before the split; rules citing a held-out-window report suppressed; no general rules",
     False, True, False),
    ("1b before, current catalog", "advisories before the split; every rule of the catalog (some cite held-out-window "
     "reports: leakage); no general rules", False, False, False),
    ("2 + general rules", "as 1, plus the general rules written from the misses", False, True, True),
    ("3 + late advisories", "as 2, plus every advisory (the held-out reports encoded): NOT a generalization measure",
     True, True, True),
]


def summary(binary, only=None):
    """Runs the stages one after another and prints the before/after table (SCORES.md)."""
    late_rules = rules_citing_after_split(REPO / "rules")
    head, dirty = git_head()
    p = print
    results = []
    for name, what, all_adv, clean, general in STAGES:
        rows = score(binary, None if all_adv else SPLIT, ignore_list(late_rules, clean, general), only)
        results.append((name, what, rows))
    shas = sorted({r["res"].get("git_sha") for _, _, rows in results for r in rows if r["res"].get("git_sha")})
    p(f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}")
    p(f"- binary: `{binary}`, git sha from the JSON report {', '.join(f'`{s}`' for s in shas) or '?'}; "
      f"worktree HEAD `{head}`{' (tracked files modified)' if dirty else ''}")
    p(f"- cases: {len(results[0][2])}; split {SPLIT}; general rules: {', '.join(GENERAL_RULES)}")
    p("")
    for name, what, _ in results:
        p(f"- stage {name}: {what}")
    p("")
    p(FIG_HEAD.replace("| group |", "| stage |"))
    for name, _, rows in results:
        p(fig_row(name, figures(rows)))
    p("")
    for eng in ("vllm", "sglang"):
        p(f"engine {eng}:\n")
        p(FIG_HEAD.replace("| group |", "| stage |"))
        for name, _, rows in results:
            p(fig_row(name, figures([r for r in rows if r["case"]["engine"] == eng])))
        p("")
    p("Per case (class per stage; findings of the last stage):\n")
    p("| case | outcome | " + " | ".join(n for n, _, _ in results) + " | findings (last stage) |")
    p("|---|---|" + "---|" * len(results) + "---|")
    for i, r in enumerate(results[0][2]):
        last = results[-1][2][i]["res"]
        fs = ", ".join(f"{f['id']}({f['severity'][0]})" for f in last.get("findings", [])
                       if f["severity"] in ("error", "warning")) or "-"
        p(f"| {r['id']} | {r['case']['outcome']} | " + " | ".join(rows[i]["class"] for _, _, rows in results)
          + f" | {fs} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=str(REPO / "build" / "specprobe"))
    ap.add_argument("--advisories-before", default=SPLIT, help=f"default {SPLIT} (the split)")
    ap.add_argument("--all-advisories", action="store_true", help="load every advisory (not a generalization measure)")
    ap.add_argument("--clean-rules", action="store_true",
                    help="also --ignore every rule that cites a report opened on/after the split")
    ap.add_argument("--general-rules", action="store_true",
                    help=f"keep the general rules written from the misses ({', '.join(GENERAL_RULES)}); default: suppressed")
    ap.add_argument("--summary", action="store_true", help="run every stage (SCORES.md) and print the before/after table")
    ap.add_argument("--label", default=None)
    ap.add_argument("--json", default=None, help="write per-case results here")
    ap.add_argument("--only", default=None, help="regex over case ids")
    ap.add_argument("--rules-dir", default=None, help="pass --rules-dir DIR to specprobe (development only)")
    ap.add_argument("--advisories-dir", default=None, help="pass --advisories-dir DIR to specprobe (development only)")
    a = ap.parse_args()
    if a.rules_dir:
        EXTRA_ARGS.extend(["--rules-dir", a.rules_dir])
    if a.advisories_dir:
        EXTRA_ARGS.extend(["--advisories-dir", a.advisories_dir])

    binary = Path(a.binary)
    if a.summary:
        return summary(binary, a.only)
    adv_before = None if a.all_advisories else a.advisories_before
    late_rules = rules_citing_after_split(REPO / "rules")
    ignore = ignore_list(late_rules, a.clean_rules, a.general_rules)
    label = a.label or ("all advisories" if adv_before is None else f"advisories before {adv_before}") + \
        (", rules citing late reports suppressed" if a.clean_rules else ", current rules") + \
        (", with the general rules" if a.general_rules else ", without the general rules")

    head, dirty = git_head()
    rows = score(binary, adv_before, ignore, a.only)
    shas = sorted({r["res"].get("git_sha") for r in rows if r["res"].get("git_sha")})
    versions = sorted({r["res"].get("tool_version") for r in rows if r["res"].get("tool_version")})
    out = []
    p = out.append
    p(f"## Run: {label}\n")
    p(f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}")
    p(f"- binary: `{a.binary if os.path.isabs(a.binary) else a.binary}` — tool version {', '.join(versions) or '?'}, "
      f"git sha (from the JSON report) {', '.join(f'`{s}`' for s in shas) or '?'}")
    p(f"- worktree HEAD `{head}`{' (tracked files modified)' if dirty else ''}")
    p(f"- advisories: {'all' if adv_before is None else 'published before ' + adv_before}; rules: current catalog"
      + (f", with {len(ignore)} suppressed by --ignore ({', '.join(ignore)})" if ignore else ""))
    p(f"- cases: {len(rows)}")
    p("")
    p(FIG_HEAD)
    p(fig_row("all", figures(rows)))
    for eng in sorted({r["case"]["engine"] for r in rows}):
        p(fig_row(f"engine {eng}", figures([r for r in rows if r["case"]["engine"] == eng])))
    p("")
    p("By area (a case counts in each of its areas):\n")
    p(FIG_HEAD)
    areas = sorted({ar for r in rows for ar in (r["case"].get("areas") or [])})
    for ar in areas:
        p(fig_row(ar, figures([r for r in rows if ar in (r["case"].get("areas") or [])])))
    p("")
    p("By stage (failing cases):\n")
    p("| stage | failing | strict | lenient |\n|---|---|---|---|")
    for st in ["config", "load", "capture", "first-request", "runtime", "silent"]:
        f = figures([r for r in rows if r["case"].get("stage") == st])
        if f["failing"]:
            p(f"| {st} | {f['failing']} | {pct(f['strict'], f['failing'])} | {pct(f['lenient'], f['failing'])} |")
    p("")
    if late_rules:
        p("Rules whose references cite a report opened on or after the split (possible leakage from the "
          "held-out window" + ("; suppressed in this run" if ignore else "; active in this run") + "): "
          + "; ".join(f"{k} ({', '.join(v)})" for k, v in sorted(late_rules.items())))
        p("")
        hits = defaultdict(list)
        for r in rows:
            for f in r["res"].get("findings", []):
                if f["id"] in late_rules:
                    hits[f["id"]].append(r["id"])
        if hits and not ignore:
            p("Findings of those rules in this run: " + "; ".join(
                f"{k}: {', '.join(sorted(set(v)))}" for k, v in sorted(hits.items())))
            p("")

    p("### Per case\n")
    p("| case | outcome | stage | result | verdict | findings (error/warning, unsuppressed) |")
    p("|---|---|---|---|---|---|")
    for r in rows:
        res = r["res"]
        fs = ", ".join(f"{f['id']}({f['severity'][0]})" for f in res.get("findings", [])
                       if f["severity"] in ("error", "warning")) or "-"
        p(f"| {r['id']} | {r['case']['outcome']} | {r['case'].get('stage') or '-'} | {r['class']} | "
          f"{res.get('verdict', 'exit ' + str(res['rc']))} | {fs} |")
    p("")
    p("### Misses (failing cases without a not-supported verdict)\n")
    for r in rows:
        if r["case"]["outcome"] != "works" and r["class"] in ("missed", "caught-lenient"):
            extra = ""
            if r["class"] == "caught-lenient":
                extra = " [lenient hit: " + ", ".join(f["id"] for f in r["res"]["findings"]) + "]"
            p(f"- `{r['id']}` ({r['case']['engine']}, {r['case'].get('stage')}): {r['case'].get('symptom')}{extra}")
    p("")
    fa = [r for r in rows if r["class"] in ("false-alarm", "warned")]
    if fa:
        p("### Works cases with findings\n")
        for r in fa:
            p(f"- `{r['id']}` ({r['class']}): " + "; ".join(
                f"{f['id']} [{f['severity']}] {f['message'][:160]}" for f in r["res"]["findings"]
                if f["severity"] in ("error", "warning")))
        p("")
    un = [r for r in rows if r["class"] == "unreadable"]
    p("### Unreadable (exit 2/3)\n")
    if un:
        for r in un:
            p(f"- `{r['id']}` exit {r['res']['rc']}: {r['res']['unreadable']}")
    else:
        p("- none")
    p("")
    p("### Command lines and mappings\n")
    p("Run from the repository root. Mapping notes follow each command.\n")
    p("```")
    for r in rows:
        p(" ".join(shlex.quote(c) for c in r["cmd"]))
        for n in r["notes"]:
            p(f"    # {n}")
    p("```")
    print("\n".join(out))

    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"label": label, "head": head, "git_sha": shas, "figures": figures(rows),
                       "late_rules": late_rules, "ignored": ignore,
                       "cases": [{k: r[k] for k in ("id", "cmd", "notes", "class")} | {
                           "outcome": r["case"]["outcome"], "stage": r["case"].get("stage"),
                           "engine": r["case"]["engine"], "areas": r["case"].get("areas"),
                           "verdict": r["res"].get("verdict"), "findings": r["res"].get("findings"),
                           "undecided": r["res"].get("errors_undecided"), "notes_report": r["res"].get("notes"),
                           "unreadable": r["res"].get("unreadable"), "gpu_evaluated": r["res"].get("gpu_evaluated"),
                           "gpu_fallback": r["res"].get("gpu_fallback")} for r in rows]}, fh, indent=1)


if __name__ == "__main__":
    main()
